"""The continuous-batching lesson: a seeded simulator of static and iteration-level batching."""
