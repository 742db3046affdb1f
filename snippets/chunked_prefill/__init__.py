"""Token budget, chunked prefill and preemption: the figures of the chunked-prefill lesson."""
