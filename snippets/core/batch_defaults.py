"""vLLM 0.26.0's default max_num_seqs and max_num_batched_tokens on a GPU, by usage context.

EngineArgs.get_batch_defaults (vllm/engine/arg_utils.py): a GPU with at least 70 GiB of memory
that is not an A100 gets the larger values; `vllm serve` (UsageContext.OPENAI_API_SERVER) and
LLM(...) (UsageContext.LLM_CLASS) differ in the token budget. CPU and TPU values are left out.
core.engine holds the LLM class's values for the cards the labs use; this is the whole table.
"""

from typing import NamedTuple

from core.gpus import GIB, GPU

LARGE_GPU_BYTES = 70 * GIB  # device_memory >= 70 * GiB_bytes
USAGES = ("llm", "serve")


class BatchDefaults(NamedTuple):
    max_num_seqs: int
    max_num_batched_tokens: int


# (large GPU, usage) -> defaults; "large": >= 70 GiB and not an A100 (vLLM PR #17885)
TABLE = {
    (True, "llm"): BatchDefaults(1024, 16384),
    (True, "serve"): BatchDefaults(1024, 8192),
    (False, "llm"): BatchDefaults(256, 8192),
    (False, "serve"): BatchDefaults(256, 2048),
}


def batch_defaults(gpu: GPU, usage: str) -> BatchDefaults:
    """The engine's defaults on `gpu` for LLM(...) ("llm") or `vllm serve` ("serve")."""
    if usage not in USAGES:
        raise ValueError(f"usage must be one of {USAGES}, got {usage!r}")
    large = gpu.memory_bytes >= LARGE_GPU_BYTES and "a100" not in gpu.name.lower()
    return TABLE[(large, usage)]
