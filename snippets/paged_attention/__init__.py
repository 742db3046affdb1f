"""PagedAttention lesson: KV memory in blocks, reserved or on demand."""
