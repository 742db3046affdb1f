"""Lesson: tensor parallelism, pipeline parallelism and data-parallel replicas."""
