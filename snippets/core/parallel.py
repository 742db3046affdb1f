"""Tensor parallelism across t GPUs: what each GPU holds and reads, and what they exchange.

Megatron-LM's split (Shoeybi et al., 2019), as vLLM 0.26.0 builds Qwen2 (model_executor/models/
qwen2.py): q/k/v and gate/up are column-parallel (each GPU owns a slice of the output features),
o_proj and down_proj row-parallel (a slice of the input features, so each GPU holds a partial sum
that an all-reduce adds up). The vocabulary-parallel embedding ends in one all-reduce, the
vocabulary-parallel lm_head in an all-gather of the logit shards (Platform.use_all_gather is True).
When t exceeds the KV heads, vLLM gives every GPU one whole KV head (Qwen2Attention: num_kv_heads =
max(1, total // t)): those heads, their k/v weights and their KV cache are replicated.

Times are lower bounds from peak bandwidths, except the per-step latency of a collective, which
is an ASSUMPTION (named below), not a measurement.
"""

from dataclasses import dataclass

from core.formats import (
    SIXTEEN_BIT,
    WeightFormat,
    checkpoint_format,
    matrix_bytes,
    resident_weight_bytes,
    streamed_weight_bytes,
)
from core.forward import decode_flops, require_count
from core.gpus import GPU
from core.links import Link
from core.memory import MemoryBudget
from core.models import ModelSpec, kv_bytes_per_token
from core.roofline import Bound, bound

# Latency of one step of a ring collective (launch + synchronisation + one hop), assumed, not
# measured: a few microseconds is the order NCCL and vLLM's custom all-reduce reach for small
# messages inside one server. A lab run measures it; change it here to see what it does.
ASSUMED_STEP_LATENCY_S = 5e-6


def allreduce_bytes_per_token(model: ModelSpec, value_bytes: float = SIXTEEN_BIT) -> float:
    """Payload the decoder layers all-reduce per token: o_proj and down_proj each add up one hidden
    vector (d values) in every layer: 2 * L * d * b."""
    return 2 * model.num_layers * model.hidden_size * value_bytes


def embedding_allreduce_bytes(model: ModelSpec, value_bytes: float = SIXTEEN_BIT) -> float:
    """The vocabulary-parallel embedding: each GPU looks up the rows it owns, an all-reduce of one
    hidden vector per token gathers the row."""
    return model.hidden_size * value_bytes


def logits_allgather_bytes(model: ModelSpec, t: int, value_bytes: float = SIXTEEN_BIT) -> float:
    """Bytes each GPU receives to assemble one token's logits from t vocabulary shards."""
    require_count("t", t, 1)
    return model.vocab_size * value_bytes * (t - 1) / t


def ring_allreduce_seconds(
    nbytes: float, t: int, link: Link, step_latency_s: float = ASSUMED_STEP_LATENCY_S
) -> float:
    """A ring all-reduce of nbytes over t GPUs: reduce-scatter then all-gather, 2(t-1) steps, each
    moving nbytes/t per GPU: 2(t-1)/t * nbytes / bandwidth + 2(t-1) * step latency."""
    require_count("t", t, 1)
    if nbytes < 0:
        raise ValueError(f"bytes must be non-negative, got {nbytes}")
    steps = 2 * (t - 1)
    return steps / t * nbytes / link.bandwidth_bytes + steps * step_latency_s


def ring_allgather_seconds(
    received_bytes: float, t: int, link: Link, step_latency_s: float = ASSUMED_STEP_LATENCY_S
) -> float:
    """A ring all-gather: t - 1 steps; received_bytes is what each GPU receives in all."""
    require_count("t", t, 1)
    return received_bytes / link.bandwidth_bytes + (t - 1) * step_latency_s


def ring_allreduce_link_bytes(nbytes: float, t: int) -> float:
    """Bytes the t GPUs of a ring all-reduce send in all: each sends 2(t-1)/t of the payload."""
    require_count("t", t, 1)
    return 2 * (t - 1) * nbytes


def pipeline_bytes_per_token(model: ModelSpec, value_bytes: float = SIXTEEN_BIT) -> float:
    """What one pipeline stage hands the next per token: vLLM 0.26.0's Qwen2 sends the hidden
    states and the residual stream (IntermediateTensors in models/qwen2.py), 2 * d * b."""
    return 2 * model.hidden_size * value_bytes


def pipeline_hop_seconds(
    model: ModelSpec,
    link: Link,
    batch: int = 1,
    step_latency_s: float = ASSUMED_STEP_LATENCY_S,
) -> float:
    """One stage-to-stage send of `batch` tokens: one point-to-point step over the link."""
    require_count("batch", batch, 1)
    return batch * pipeline_bytes_per_token(model) / link.bandwidth_bytes + step_latency_s


def kv_heads_per_gpu(model: ModelSpec, t: int) -> int:
    """KV heads each GPU holds: split when t <= heads, one (replicated) when t > heads."""
    require_count("t", t, 1)
    if model.num_heads % t:
        raise ValueError(f"{model.name}: {model.num_heads} query heads do not split {t} ways")
    if t <= model.num_kv_heads:
        if model.num_kv_heads % t:
            raise ValueError(f"{model.name}: {model.num_kv_heads} KV heads do not split {t} ways")
        return model.num_kv_heads // t
    if t % model.num_kv_heads:
        raise ValueError(f"{model.name}: {t} GPUs is not a multiple of {model.num_kv_heads}")
    return 1


def kv_bytes_per_token_per_gpu(model: ModelSpec, t: int) -> float:
    """kappa on one GPU: its share of the KV heads (at least one head each)."""
    return kv_bytes_per_token(model) * kv_heads_per_gpu(model, t) / model.num_kv_heads


def weight_bytes_per_gpu(model: ModelSpec, t: int, fmt: WeightFormat | None = None) -> float:
    """Weights one GPU reads per decode step: everything split t ways, except that the k and v
    projections of a replicated KV head are held whole by each GPU that uses it. Norms are counted
    split too (they are replicated, but tiny): still a lower bound."""
    heads = kv_heads_per_gpu(model, t)
    streamed = streamed_weight_bytes(model, fmt)
    kv_proj = (
        2
        * model.num_layers
        * sum(matrix_bytes(_fmt(model, fmt), model.hidden_size, model.kv_dim).values())
    )
    return (streamed - kv_proj) / t + kv_proj * heads / model.num_kv_heads


def _fmt(model: ModelSpec, fmt: WeightFormat | None) -> WeightFormat:
    return fmt or checkpoint_format(model)  # the model's own format when none is given


def decode_comm_seconds(
    model: ModelSpec,
    t: int,
    link: Link,
    batch: int = 1,
    step_latency_s: float = ASSUMED_STEP_LATENCY_S,
) -> float:
    """Communication of one decode step for `batch` tokens: 2L + 1 all-reduces of batch * d * b
    bytes and one all-gather of the logits. Zero on one GPU."""
    if t == 1:
        return 0.0
    per_token = model.hidden_size * SIXTEEN_BIT
    allreduces = (2 * model.num_layers + 1) * ring_allreduce_seconds(
        batch * per_token, t, link, step_latency_s
    )
    gather = ring_allgather_seconds(
        batch * logits_allgather_bytes(model, t), t, link, step_latency_s
    )
    return allreduces + gather


@dataclass(frozen=True)
class TPStep:
    """One decode step with t-way tensor parallelism, per GPU."""

    t: int
    compute_memory: Bound  # each GPU's share: FLOPs / t, its weights and KV
    comm_s: float  # the collectives, not overlapped with compute

    @property
    def seconds(self) -> float:
        return self.compute_memory.seconds + self.comm_s

    @property
    def comm_share(self) -> float:
        return self.comm_s / self.seconds


def tp_decode_step(
    gpu: GPU,
    model: ModelSpec,
    t: int,
    link: Link,
    *,
    fmt: WeightFormat | None = None,
    batch: int = 1,
    context: int = 0,
    step_latency_s: float = ASSUMED_STEP_LATENCY_S,
) -> TPStep:
    """TPOT floor with t-way TP: max(FLOPs/t / peak, (W_gpu + B * kappa_gpu * S) / BW) + comm."""
    require_count("context", context, 0)
    nbytes = weight_bytes_per_gpu(model, t, fmt) + batch * context * kv_bytes_per_token_per_gpu(
        model, t
    )
    local = bound(gpu, decode_flops(model, batch) / t, nbytes, fmt)
    return TPStep(t, local, decode_comm_seconds(model, t, link, batch, step_latency_s))


def tp_kv_tokens(gpu: GPU, model: ModelSpec, t: int, fmt: WeightFormat | None = None) -> int:
    """Tokens of KV cache a t-GPU group holds: each GPU stores its share of every token, so it is
    what one GPU's budget (vLLM's default, core.memory.MemoryBudget) holds after its share of the
    weights; 0 when the weights alone do not fit."""
    try:
        per_gpu = MemoryBudget.for_gpu(gpu).tokens(
            weight_bytes_per_gpu_resident(model, t, fmt), kv_bytes_per_token_per_gpu(model, t)
        )
    except ValueError:
        return 0
    return per_gpu


def weight_bytes_per_gpu_resident(
    model: ModelSpec, t: int, fmt: WeightFormat | None = None
) -> float:
    """Weights one GPU holds: as weight_bytes_per_gpu, with the whole embedding table split t ways
    (a decode step reads one row of it, but all of it sits in memory)."""
    extra = resident_weight_bytes(model, fmt) - streamed_weight_bytes(model, fmt)
    return weight_bytes_per_gpu(model, t, fmt) + extra / t


def group_misaligned(model: ModelSpec, t: int, fmt: WeightFormat | None = None) -> str | None:
    """Why a grouped format (AWQ) cannot split t ways, or None: each GPU's slice of a row-parallel
    matrix's inputs (o_proj: the query dims, down_proj: the MLP width) must hold whole groups, or
    vLLM 0.26.0 refuses ("The input size is not aligned with the quantized weight shape",
    quantization/auto_awq.py, BaseAWQLinearMethod.create_weights)."""
    group = _fmt(model, fmt).group_size
    if group is None:
        return None
    for name, width in (("o_proj", model.q_dim), ("down_proj", model.intermediate_size)):
        if (width // t) % group:
            return f"{name}: {width:,} / {t} = {width // t:,} inputs, not whole groups of {group}"
    return None
