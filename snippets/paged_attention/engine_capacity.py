"""The KV capacity vLLM 0.26.0 reports at start-up, reproduced exactly from the bytes it is given.

For a model whose layers all have the same KV shape (Qwen2, Llama), vllm/v1/core/kv_cache_utils.py
computes, in get_num_blocks, get_max_concurrency_for_kv_cache_config and get_kv_cache_capacity:

  page (one layer, one block) = 2 * block_size * kv_heads * head_dim * dtype bytes
  num_blocks                  = kv_cache_bytes // page // layers
  max concurrency             = num_blocks / ceil(max_model_len / block_size)
  "GPU KV cache size" tokens  = int(max concurrency * max_model_len)

Stdlib and the core only. Run it: python snippets/paged_attention/engine_capacity.py
"""

from dataclasses import dataclass

from core.models import ModelSpec, kv_bytes_per_token, load_model
from kv_cache.fit_4090 import rtx_4090, scenarios


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def page_bytes(model: ModelSpec, block_size: int, dtype_bytes: int = 2) -> int:
    """One block of one layer: K and V of block_size tokens (AttentionSpec.page_size_bytes)."""
    return 2 * block_size * model.num_kv_heads * model.head_dim * dtype_bytes


@dataclass(frozen=True)
class EngineCapacity:
    num_blocks: int  # cache_config.num_gpu_blocks; block 0 is the engine's null block
    block_size: int
    max_model_len: int

    @property
    def blocks_per_request(self) -> int:
        return ceil_div(self.max_model_len, self.block_size)

    @property
    def max_concurrency(self) -> float:
        """The start-up line "Maximum concurrency for <max_model_len> tokens per request: …x"."""
        return self.num_blocks / self.blocks_per_request

    @property
    def kv_cache_tokens(self) -> int:
        """The start-up line "GPU KV cache size: … tokens" (the same float arithmetic as vLLM)."""
        return int(self.max_concurrency * self.max_model_len)

    @property
    def usable_tokens(self) -> int:
        """Tokens requests can hold: every block but the null block, each full."""
        return (self.num_blocks - 1) * self.block_size


def engine_capacity(
    model: ModelSpec, kv_cache_bytes: int, block_size: int, max_model_len: int, dtype_bytes: int = 2
) -> EngineCapacity:
    """What vLLM allocates from kv_cache_bytes (e.g. LLM(kv_cache_memory_bytes=...))."""
    for name, value in (("block_size", block_size), ("max_model_len", max_model_len)):
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")
    if kv_cache_bytes < 0:
        raise ValueError(f"kv_cache_bytes must not be negative, got {kv_cache_bytes}")
    blocks = int(kv_cache_bytes // page_bytes(model, block_size, dtype_bytes) // model.num_layers)
    return EngineCapacity(max(blocks, 0), block_size, max_model_len)


# The example: the KV-cache lesson's budget for AWQ weights on an RTX 4090, handed to vLLM as
# kv_cache_memory_bytes; two block sizes, two context limits (one not a multiple of the block).
EXAMPLE_BLOCK_SIZES = (16, 32)
EXAMPLE_MAX_MODEL_LENS = (32768, 4100)


def example_kv_bytes() -> int:
    """The KV-cache lesson's KV budget with AWQ weights on a 24 GB card, in bytes."""
    _, (_, awq_weights, _), _ = scenarios()
    return int(rtx_4090().kv_bytes(awq_weights))


def main() -> None:
    model = load_model("qwen2.5-7b-instruct")
    kappa = kv_bytes_per_token(model)
    kv_bytes = example_kv_bytes()
    print(f"{model.name}: kappa = {kappa:,.0f} bytes/token, KV cache = {kv_bytes:,} bytes")
    print(
        f"{'block':>6} {'page B':>8} {'block B':>10} {'max_model_len':>14} {'num_blocks':>11} "
        f"{'KV cache tokens':>16} {'concurrency':>12}"
    )
    for block_size in EXAMPLE_BLOCK_SIZES:
        for max_model_len in EXAMPLE_MAX_MODEL_LENS:
            cap = engine_capacity(model, kv_bytes, block_size, max_model_len)
            print(
                f"{block_size:>6} {page_bytes(model, block_size):>8,} "
                f"{block_size * kappa:>10,.0f} {max_model_len:>14,} {cap.num_blocks:>11,} "
                f"{cap.kv_cache_tokens:>16,} {cap.max_concurrency:>11.2f}x"
            )


if __name__ == "__main__":
    main()
