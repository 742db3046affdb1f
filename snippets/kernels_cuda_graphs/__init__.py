"""Attention kernels and CUDA graphs: what FlashAttention saves, what launching kernels costs."""
