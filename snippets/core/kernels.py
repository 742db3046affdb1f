"""What attention kernels move and what launching kernels costs, for a model's shape.

- attention_io_bytes: HBM bytes of one layer's prefill attention with and without the S x S
  score matrix written out (the I/O argument of FlashAttention, Dao et al., 2022).
- KV blocks a paged decode kernel reads (PagedAttention, Kwon et al., 2023).
- launch overhead: kernels per decode step and the per-kernel cost at which launching them
  takes as long as the step's lower bound.
- vLLM 0.26.0's default CUDA graph capture sizes (config/vllm.py, VllmConfig._set_cudagraph_sizes).
Standard library only.
"""

import math
from dataclasses import dataclass

from core.engine import BLOCK_SIZE, MAX_NUM_BATCHED_TOKENS, MAX_NUM_SEQS
from core.formats import SIXTEEN_BIT
from core.forward import require_count
from core.models import ModelSpec, kv_bytes_per_token


@dataclass(frozen=True)
class AttentionIO:
    """HBM bytes of one layer's attention over a prompt of `tokens` tokens (16-bit values)."""

    qkvo_bytes: int  # Q and O for every query head, K and V for every KV head, each once
    scores_bytes: int  # one S x S matrix per query head: the size of the scores written out
    naive_bytes: int  # scores written, read for softmax, probabilities written, read for P.V
    tiled_bytes: int  # no scores in HBM; K and V read once per tile of query rows

    @property
    def saving(self) -> float:
        return self.naive_bytes / self.tiled_bytes


def attention_io_bytes(model: ModelSpec, tokens: int, query_tile: int = 128) -> AttentionIO:
    """Standard attention writes S = QK^T to HBM, reads it for the softmax, writes P, reads P for
    P.V: four passes over S x S values per head. Tiled attention keeps each tile of scores on
    chip and streams K and V past each tile of `query_tile` query rows: ceil(S / tile) reads of
    K and V, none of S x S. This counts HBM traffic as FlashAttention's analysis does; the
    L2 cache, which can serve repeated K and V reads, is left out."""
    require_count("tokens", tokens, 1)
    require_count("query_tile", query_tile, 1)
    b, d = SIXTEEN_BIT, model.head_dim
    q_and_o = 2 * model.num_heads * tokens * d * b
    k_and_v = 2 * model.num_kv_heads * tokens * d * b
    scores = model.num_heads * tokens * tokens * b
    tiles = math.ceil(tokens / query_tile)
    return AttentionIO(
        qkvo_bytes=q_and_o + k_and_v,
        scores_bytes=scores,
        naive_bytes=q_and_o + k_and_v + 4 * scores,
        tiled_bytes=q_and_o + tiles * k_and_v,
    )


def kv_blocks(context: int, block_size: int = BLOCK_SIZE) -> int:
    """Blocks of `block_size` tokens a sequence of `context` cached tokens occupies."""
    require_count("context", context, 0)
    require_count("block_size", block_size, 1)
    return math.ceil(context / block_size)


def kv_block_bytes_per_layer(model: ModelSpec, block_size: int = BLOCK_SIZE) -> float:
    """K and V of one block in one layer: what a paged decode kernel fetches per block table
    entry, per layer."""
    return kv_bytes_per_token(model, SIXTEEN_BIT) / model.num_layers * block_size


# The kernels one Qwen2 decoder layer launches per forward pass in eager mode, as vLLM's model
# code (model_executor/models/qwen2.py) calls them: a count from the code, not a profiler trace.
QWEN2_LAYER_KERNELS = (
    "fused residual add + RMSNorm (input_layernorm)",
    "QKV projection GEMM (with its bias)",
    "rotary embedding",
    "KV cache write into its blocks",
    "attention",
    "output projection GEMM",
    "fused residual add + RMSNorm (post_attention_layernorm)",
    "gate and up projection GEMM",
    "SiLU and multiply",
    "down projection GEMM",
)
# Outside the layers: embedding lookup, final RMSNorm, lm_head GEMM, and sampling.
QWEN2_MODEL_KERNELS = ("embedding", "final RMSNorm", "lm_head GEMM", "sampling")


def kernels_per_step(model: ModelSpec) -> int:
    """Kernels one decode step launches (at least): every layer's, plus the model's own."""
    return model.num_layers * len(QWEN2_LAYER_KERNELS) + len(QWEN2_MODEL_KERNELS)


def launch_ratio(step_floor_s: float, kernels: int, per_kernel_s: float) -> float:
    """The host's time to launch a step's kernels over the GPU's lower bound for the step. Even
    with every launch overlapping the GPU's work, the step takes at least the larger of the two:
    above 1 the host, not the GPU, sets the pace."""
    require_count("kernels", kernels, 1)
    return kernels * per_kernel_s / step_floor_s


def break_even_launch_s(step_floor_s: float, kernels: int) -> float:
    """The per-kernel launch cost at which launching the step's kernels takes as long as the
    GPU's lower bound for the step: beyond it the CPU, not the GPU, sets the pace."""
    require_count("kernels", kernels, 1)
    return step_floor_s / kernels


def default_capture_sizes(
    max_num_seqs: int = MAX_NUM_SEQS,
    max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS,
    num_speculative_tokens: int = 0,
) -> list[int]:
    """The batch sizes (tokens) vLLM 0.26.0 captures CUDA graphs for when none are given:
    1, 2, 4, then every 8 below 256, then every 16 up to
    min(max_num_seqs * (1 + speculative tokens) * 2, 512, max_num_batched_tokens), plus
    max_num_batched_tokens itself when it is at most that largest size."""
    require_count("max_num_seqs", max_num_seqs, 1)
    largest = min(max_num_seqs * (1 + num_speculative_tokens) * 2, 512)
    largest = min(max_num_batched_tokens, largest)
    sizes = [s for s in (1, 2, 4) if s <= largest]
    if largest >= 8:
        sizes += list(range(8, min(largest + 1, 256), 8))
    if largest >= 256:
        sizes += list(range(256, largest + 1, 16))
    if max_num_batched_tokens <= largest:
        sizes.append(max_num_batched_tokens)
    return sorted(set(sizes))
