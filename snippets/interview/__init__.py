"""The interview question bank's system-design answers (docs/interview.md), from the course's
estimators: not a lesson of its own, the bank's worked answers."""
