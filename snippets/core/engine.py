"""vLLM 0.26.0's engine defaults that the lessons and labs budget with, for LLM(...) on one GPU.

One place for each: a lesson or lab that needs one imports it from here.
"""

# CacheConfig (vllm/config/cache.py)
GPU_MEMORY_UTILIZATION = 0.92  # gpu_memory_utilization: the share of CUDA's total vLLM may use
BLOCK_SIZE = 16  # tokens per KV-cache block

# EngineArgs.get_batch_defaults (vllm/engine/arg_utils.py), UsageContext.LLM_CLASS, on a GPU under
# 70 GiB or an A100; `vllm serve` and larger GPUs get other values
MAX_NUM_SEQS = 256  # requests the scheduler runs at once
MAX_NUM_BATCHED_TOKENS = 8192  # the token budget of one engine step
