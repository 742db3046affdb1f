"""Lesson: mixture-of-experts decoders and expert parallelism."""
