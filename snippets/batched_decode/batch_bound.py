"""A decode step for a batch of B sequences at context S: its lower bound as B grows.

    t_step >= max(2*B*M' / P_peak, (W + B*kappa*S) / BW)

M': multiply-add weights per token (every layer's matrices and the lm_head), W: weight bytes read
once per step, kappa: KV bytes per token, S: tokens cached per sequence. Every quantity comes from
the course's core (core.forward, core.roofline, core.memory); this file only lays them out.
Lower bounds, not predictions: attention's own FLOPs, activations and the scheduler only add time.

Run it: python snippets/batched_decode/batch_bound.py
"""

from dataclasses import dataclass

from core.formats import (
    WeightFormat,
    checkpoint_format,
    resident_weight_bytes,
    streamed_weight_bytes,
)
from core.forward import decode_bytes, decode_flops, kv_cache_bytes
from core.gpus import GPU, load_gpus
from core.memory import MemoryBudget
from core.models import ModelSpec, kv_bytes_per_token, load_model
from core.reference import AWQ_MODEL, BF16_MODEL
from core.roofline import (
    compute_peak,
    critical_batch,
    decode_intensity_limit,
    flops_utilization,
    ridge_point,
    tpot_bound,
)

GPU_KEYS = ("rtx_4090", "h100_sxm")
CONTEXT = 1024  # tokens cached per sequence, the roofline lesson's decode context
BATCHES = tuple(2**i for i in range(9))  # 1, 2, 4, ..., 256
CONTEXTS = (0, 256, 512, 1024, 2048)  # for the critical-batch table


@dataclass(frozen=True)
class Step:
    """One decode step of `batch` sequences: its bound and what follows from it."""

    batch: int
    compute_s: float  # 2*B*M' / P_peak
    memory_s: float  # (W + B*kappa*S) / BW
    intensity: float  # FLOPs / bytes of the step

    @property
    def tpot_s(self) -> float:
        """Every sequence gets one token per step: TPOT >= the step's bound."""
        return max(self.compute_s, self.memory_s)

    @property
    def tokens_per_s(self) -> float:
        """Output throughput <= B tokens per step."""
        return self.batch / self.tpot_s

    @property
    def memory_bound(self) -> bool:
        return self.memory_s >= self.compute_s


def step(gpu: GPU, model: ModelSpec, fmt: WeightFormat, context: int, batch: int) -> Step:
    bound = tpot_bound(gpu, model, context, fmt, batch)
    intensity = decode_flops(model, batch) / decode_bytes(model, context, fmt, batch)
    return Step(batch, bound.compute_s, bound.memory_s, intensity)


def mfu_ceiling(gpu: GPU, model: ModelSpec, fmt: WeightFormat, s: Step) -> float:
    """The best MFU a step can show: its FLOPs over its lower-bound time (MBU is then 100 %)."""
    return flops_utilization(gpu, decode_flops(model, s.batch), s.tpot_s, fmt)


def max_batch(gpu: GPU, model: ModelSpec, fmt: WeightFormat, context: int) -> int:
    """Sequences of `context` tokens whose KV cache fits next to the weights (vLLM defaults)."""
    tokens = MemoryBudget.for_gpu(gpu).tokens(
        resident_weight_bytes(model, fmt), kv_bytes_per_token(model)
    )
    return tokens // context


def compute_ceiling_tokens_per_s(gpu: GPU, model: ModelSpec, fmt: WeightFormat) -> float:
    """Output throughput can never exceed P_peak / (2M'): every token costs 2M' FLOPs."""
    return compute_peak(gpu, fmt) / decode_flops(model, 1)


def kv_ceiling_tokens_per_s(gpu: GPU, model: ModelSpec, context: int) -> float:
    """As B grows, (W + B*kappa*S) / BW approaches B*kappa*S / BW: at most BW / (kappa*S) tok/s."""
    return gpu.bandwidth_bytes / kv_cache_bytes(model, context)


def kv_ceiling_share(
    gpu: GPU, model: ModelSpec, fmt: WeightFormat, context: int, batch: int
) -> float:
    """How close a batch's bound throughput comes to the KV ceiling.

    Memory-bound, the share is B*kS / (W + B*kS): it only approaches 1 as B grows."""
    return step(gpu, model, fmt, context, batch).tokens_per_s / kv_ceiling_tokens_per_s(
        gpu, model, context
    )


def batch_for_kv_ceiling_share(
    model: ModelSpec, fmt: WeightFormat, context: int, share: float
) -> float:
    """The batch at which a memory-bound step reaches `share` of the KV ceiling:
    B*kS / (W + B*kS) = share  =>  B = share / (1 - share) * W / (kS)."""
    if not 0 < share < 1:
        raise ValueError(f"share must be in (0, 1), got {share}")
    return share / (1 - share) * streamed_weight_bytes(model, fmt) / kv_cache_bytes(model, context)


def vanishing_context(gpu: GPU, model: ModelSpec, fmt: WeightFormat) -> float:
    """The context from which no batch size is compute-bound: where 2M' / (kappa*S) = ridge."""
    return decode_intensity_limit(model, 1) / ridge_point(gpu, fmt)


def configurations() -> list[tuple[GPU, ModelSpec, WeightFormat]]:
    """(GPU, model, weight format): Qwen2.5-7B-Instruct in BF16 and AWQ on each GPU."""
    gpus = load_gpus()
    models = [load_model(BF16_MODEL), load_model(AWQ_MODEL)]
    return [(gpus[g], m, checkpoint_format(m)) for g in GPU_KEYS for m in models]


def sweep_table(gpu: GPU, model: ModelSpec, fmt: WeightFormat, context: int = CONTEXT) -> list[str]:
    fits = max_batch(gpu, model, fmt, context)
    lines = [
        f"{gpu.name}, {model.name} ({fmt.name}), context {context:,}: "
        f"KV cache fits {fits:,} sequences",
        f"{'B':>4} {'compute ms':>10} {'memory ms':>10} {'TPOT >= ms':>10} "
        f"{'tok/s <=':>9} {'FLOP/B':>7} {'MFU <=':>7}  set by",
    ]
    for b in BATCHES:
        s = step(gpu, model, fmt, context, b)
        setter = "memory" if s.memory_bound else "compute"
        note = "" if b <= fits else "  (KV does not fit)"
        lines.append(
            f"{b:>4} {s.compute_s * 1e3:10.2f} {s.memory_s * 1e3:10.2f} {s.tpot_s * 1e3:10.2f} "
            f"{s.tokens_per_s:9,.0f} {s.intensity:7.1f} {mfu_ceiling(gpu, model, fmt, s):7.1%}  "
            f"{setter}{note}"
        )
    return lines


def critical_table(contexts=CONTEXTS) -> list[str]:
    """Critical batch B* by context for every configuration; '-' where there is none."""
    configs = configurations()
    names = [f"{g.name} {f.name.split(' ')[0]}" for g, _, f in configs]
    limit = "2M'/(kS)"
    lines = [f"{'context S':>9}  " + "  ".join(f"{n:>14}" for n in names) + f"  {limit:>8}"]
    for s in contexts:
        cells = []
        for gpu, model, fmt in configs:
            b = critical_batch(gpu, model, s, fmt)
            cells.append(f"{'-' if b is None else f'{b:,.0f}':>14}")
        limit = f"{decode_intensity_limit(configs[0][1], s):8.0f}" if s else f"{'inf':>8}"
        lines.append(f"{s:>9,}  " + "  ".join(cells) + f"  {limit}")
    gpus = load_gpus()
    ridges = ", ".join(f"{gpus[k].name} {gpus[k].ridge_point:.0f}" for k in GPU_KEYS)
    lines.append(f"ridge points (FLOP/byte): {ridges}")
    return lines


def main() -> None:
    configs = configurations()
    for gpu, model, fmt in configs[:2]:  # the RTX 4090, BF16 then AWQ
        print("\n".join(sweep_table(gpu, model, fmt)))
        print()
    print("critical batch B* (compute time = memory time), '-': never compute-bound")
    print("\n".join(critical_table()))


if __name__ == "__main__":
    main()
