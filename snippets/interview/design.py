"""System-design questions of the interview bank: how many GPUs serve a workload within its SLOs.

Each GPU gets rate / n requests per second; the answer is the least n at which every condition
holds, with every time a lower bound from the lessons:
  - prefill: each request's prefill takes at least core.roofline.ttft_bound (the prefill lesson),
    and prefills take the share rho = (rate / n) * prefill of the GPU's time;
  - decode: a step of B sequences takes at least batched_decode.batch_bound.step; the prefills
    run between steps, so a sequence gets a token every step / (1 - rho) seconds (its TPOT);
  - the batch is what the traffic makes it (Little's law, the load-testing lesson):
    B = (rate / n) * (output - 1) * TPOT, found by iterating, and its KV cache must fit next to
    the weights (batched_decode.batch_bound.max_batch). A GPU must decode (rate / n) * (output - 1)
    tokens/s in the share 1 - rho of its time the prefills leave, and B / step(B) only approaches
    the lower of the compute and KV ceilings (the batched-decode lesson) as B grows: when the
    demand reaches that share of the ceiling, no batch keeps up, however much memory there is;
  - TTFT, on average: half the decode step in progress, the mean wait for earlier prefills
    (an M/D/1 queue, pd_disaggregation.goodput.md1_wait, as in that lesson's colocated design),
    then its own prefill. That is a mean; the p99 a target names is longer, so rho also stays at
    most UTILIZATION, because the wait for earlier prefills grows without bound as rho nears 1.
The share is a planning choice, not a law. Real engines add attention FLOPs, activations and
scheduling, so the count is a lower bound: measure before buying.

Run it: python snippets/interview/design.py
"""

import math
from dataclasses import dataclass

from batched_decode.batch_bound import (
    compute_ceiling_tokens_per_s,
    kv_ceiling_tokens_per_s,
    max_batch,
    step,
)
from core.formats import WeightFormat, checkpoint_format
from core.gpus import GPU, load_gpus
from core.models import ModelSpec, load_model
from core.roofline import ttft_bound
from pd_disaggregation.goodput import md1_wait

UTILIZATION = 0.7  # the most of a GPU's time its prefills may take (headroom for the TTFT tail)
MAX_GPUS = 1024


@dataclass(frozen=True)
class Workload:
    model_key: str
    gpu_key: str
    rate: float  # requests per second
    prompt: int  # tokens
    output: int  # tokens
    ttft_slo_s: float
    tpot_slo_s: float


@dataclass(frozen=True)
class Plan:
    workload: Workload
    gpu_name: str
    model_name: str
    format_name: str  # the weight format the model is served in (its checkpoint's)
    gpus: int
    prefill_s: float  # a request's prefill floor
    prefill_share: float  # rho: the share of each GPU's time spent on prefills
    fit: int  # sequences whose KV cache fits (at prompt + output tokens)
    decode_tok_s: float  # tokens/s each GPU must decode: (rate / n) * (output - 1)
    decode_ceiling_tok_s: float  # the most it can: (1 - rho) * the lower ceiling
    kv_bound: bool  # that ceiling is the KV one (BW / (kappa * S)), not the compute one
    batch: int | None  # sequences decoding together on one GPU; None: no batch keeps up
    step_s: float  # that batch's decode step bound
    tpot_s: float  # step / (1 - rho)
    queue_s: float  # mean wait for earlier prefills (M/D/1)
    ttft_s: float  # mean: half a step, the queue, the prefill


def _on(w: Workload, gpus: int) -> Plan:
    """The workload spread over `gpus` GPUs (conditions not checked)."""
    model = load_model(w.model_key)
    gpu = load_gpus()[w.gpu_key]
    fmt = checkpoint_format(model)
    context = w.prompt + w.output  # the longest context a sequence reaches: the slowest step
    rate = w.rate / gpus
    prefill_s = ttft_bound(gpu, model, w.prompt, fmt).seconds
    rho = rate * prefill_s
    fit = max_batch(gpu, model, fmt, context)
    demand = rate * (w.output - 1)
    kv_ceiling = kv_ceiling_tokens_per_s(gpu, model, context)
    ceiling = min(compute_ceiling_tokens_per_s(gpu, model, fmt), kv_ceiling)
    allowed = max(0.0, 1 - rho) * ceiling
    batch, step_s, tpot_s = _decode(gpu, model, fmt, context, demand, rho, allowed)
    queue_s = md1_wait(rho, prefill_s) if rho < 1 else math.inf
    return Plan(
        w,
        gpu.name,
        model.name,
        fmt.name,
        gpus,
        prefill_s,
        rho,
        fit,
        demand,
        allowed,
        kv_ceiling <= ceiling,
        batch,
        step_s,
        tpot_s,
        queue_s,
        step_s / 2 + queue_s + prefill_s,
    )


def _decode(
    gpu: GPU,
    model: ModelSpec,
    fmt: WeightFormat,
    context: int,
    demand: float,
    rho: float,
    allowed: float,
) -> tuple[int | None, float, float]:
    """(batch, step, TPOT) at the fixed point of B = demand * TPOT(B), TPOT = step(B) / (1 - rho);
    (None, inf, inf) when the demand reaches what the ceilings allow: B would grow without end."""
    if demand >= allowed:
        return None, math.inf, math.inf
    batch = 1
    for _ in range(100_000):  # B grows with TPOT and TPOT with B: from below, B climbs to it
        step_s = step(gpu, model, fmt, context, batch).tpot_s
        tpot_s = step_s / (1 - rho)
        grown = max(1, math.ceil(demand * tpot_s))
        if grown <= batch:
            return batch, step_s, tpot_s
        batch = grown
    raise RuntimeError(f"no fixed point for demand {demand:.0f} tok/s below {allowed:.0f}")


def meets(p: Plan) -> bool:
    w = p.workload
    return (
        p.prefill_share <= UTILIZATION
        and p.batch is not None
        and p.batch <= p.fit
        and p.tpot_s <= w.tpot_slo_s
        and p.ttft_s <= w.ttft_slo_s
    )


def plan(w: Workload) -> Plan:
    """The fewest GPUs that meet every condition."""
    for gpus in range(1, MAX_GPUS + 1):
        if meets(p := _on(w, gpus)):
            return p
    raise ValueError(f"{w}: no count up to {MAX_GPUS} GPUs meets the targets")


QUESTIONS = {
    "q1": Workload("qwen2.5-7b-instruct", "rtx_4090", 20, 1000, 200, 1.0, 0.05),
    "q2": Workload("qwen2.5-7b-instruct", "h100_sxm", 100, 1000, 200, 1.0, 0.05),
    "q3": Workload("llama-3.1-8b-instruct", "a100_80gb_sxm", 5, 8000, 500, 2.0, 0.04),
}


def main() -> None:
    for key, w in QUESTIONS.items():
        p = plan(w)
        print(
            f"{key}: {p.model_name} ({p.format_name}) on {p.gpu_name}, {w.rate:g} req/s, "
            f"{w.prompt}+{w.output} tokens -> {p.gpus} GPUs\n"
            f"  per GPU: prefill {p.prefill_s * 1e3:.0f} ms, {p.prefill_share:.0%} of its time; "
            f"batch {p.batch} (fit {p.fit}), step {p.step_s * 1e3:.1f} ms\n"
            f"  TTFT ~ {p.ttft_s * 1e3:.0f} ms on average, {p.queue_s * 1e3:.0f} of it queueing "
            f"(p99 target {w.ttft_slo_s * 1e3:.0f}), "
            f"TPOT >= {p.tpot_s * 1e3:.1f} ms (target {w.tpot_slo_s * 1e3:.0f})"
        )
        if p.gpus > 1:
            fewer = _on(w, p.gpus - 1)
            if fewer.prefill_share >= 1:  # the prefills alone would take more than the GPU
                print(f"  with {p.gpus - 1}: prefills alone need {fewer.prefill_share:.0%}")
                continue
            if fewer.batch is None:
                ceiling = "KV" if fewer.kv_bound else "compute"
                print(
                    f"  with {p.gpus - 1}: prefill share {fewer.prefill_share:.0%}; each GPU must "
                    f"decode {fewer.decode_tok_s:,.0f} tok/s, its {ceiling} ceiling allows "
                    f"{fewer.decode_ceiling_tok_s:,.0f} in the rest: no batch keeps up"
                )
                continue
            print(
                f"  with {p.gpus - 1}: prefill share {fewer.prefill_share:.0%}, "
                f"batch {fewer.batch} (fit {fewer.fit}), TPOT >= {fewer.tpot_s * 1e3:.1f} ms"
            )


if __name__ == "__main__":
    main()
