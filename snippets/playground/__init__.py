"""The estimation playground: the course's core, laid out for a form in the reader's browser."""
