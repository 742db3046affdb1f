"""Speculative decoding: the verification bound, acceptance, speed-up against batch size."""
