"""Structured outputs and multi-LoRA lesson: the token bitmask per step, adapter bytes and slots."""
