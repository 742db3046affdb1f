"""The load ceiling of the capacity plan, measured on the load-testing simulator (numpy, so this
file runs at build time only, not in the browser).

estimate.py's mean-value model says what a replica sustains on average; a p99 target is about the
tail, which queueing makes longer as the load rises. Here each candidate's plan is served by
Part 3's continuous-batching simulator (max_num_seqs = the plan's batch) with every step time the
plan's: the roofline floor over TP GPUs divided by the measured share. The product's requests
(Poisson arrivals, prompt n_in, geometric outputs with mean n_out cut at max_tokens) are sent at
rising shares of the plan's mean-value rate, and the highest share whose p99 TTFT and p99 TPOT both
meet the targets is the load ceiling, for each of SEEDS.

Run it: python snippets/capacity_planning/plan_sim.py
"""

from dataclasses import dataclass
from functools import cache

import numpy as np

from capacity_planning.estimate import (
    CANDIDATES,
    PRODUCT,
    Candidate,
    Plan,
    Product,
    plan,
    usd_per_million,
)
from continuous_batching.simulate import Hardware, request_stream, simulate

LOADS = tuple(round(0.40 + 0.05 * i, 2) for i in range(13))  # shares of the mean-value rate
SEEDS = (1, 2, 3)
TRAFFIC_S = 120  # seconds of traffic per run: long enough for the queue to settle below capacity


@dataclass(frozen=True)
class Calibrated(Hardware):
    """The simulator's hardware with the plan's step times: floor / TP / measured share."""

    tp: int = 1
    share: float = 1.0

    def prefill_s(self, prompt_tokens: int, new_requests: int) -> float:
        return super().prefill_s(prompt_tokens, new_requests) / self.tp / self.share

    def decode_s(self, batch: int, context_tokens: int) -> float:
        return super().decode_s(batch, context_tokens) / self.tp / self.share


def p99s(p: Plan, load: float, seed: int, product: Product = PRODUCT) -> tuple[float, float]:
    """(p99 TTFT, p99 TPOT) in seconds at `load` x the plan's mean-value rate."""
    if p.tp != 1:
        raise ValueError("the simulator models one GPU; it has no all-reduces for TP > 1")
    rate = load * p.mean_rate
    n = max(200, round(rate * TRAFFIC_S))
    stream = request_stream(seed, n, rate, product.mean_output, product.max_output,
                            product.prompt_tokens)  # fmt: skip
    hw = Calibrated(p.gpu, p.model, p.fmt, p.tp, p.share)
    result = simulate("continuous", stream, hw, p.batch)
    ttft = result.first_token_s - stream.arrivals_s
    many = stream.outputs > 1  # TPOT as vllm bench serve: requests with a second token only
    tpot = (result.finish_s - result.first_token_s)[many] / (stream.outputs[many] - 1)
    return float(np.percentile(ttft, 99)), float(np.percentile(tpot, 99))


def meets(p: Plan, load: float, seed: int, product: Product = PRODUCT) -> bool:
    ttft, tpot = p99s(p, load, seed, product)
    return ttft * 1e3 <= product.ttft_p99_ms and tpot * 1e3 <= product.tpot_p99_ms


def ceiling(p: Plan, seed: int, product: Product = PRODUCT) -> float:
    """The highest load in LOADS below which every load meets both p99 targets (0 if none)."""
    best = 0.0
    for load in LOADS:
        if not meets(p, load, seed, product):
            break
        best = load
    return best


@cache
def ceilings(product: Product = PRODUCT) -> dict[Candidate, tuple[float, ...]]:
    """Per candidate the estimator can plan, the load ceiling for each of SEEDS."""
    found = {}
    for c in CANDIDATES:
        p = plan(c, product)
        if p is not None:
            found[c] = tuple(ceiling(p, s, product) for s in SEEDS)
    return found


def simulated_plans(product: Product = PRODUCT) -> dict[Candidate, Plan | None]:
    """Each candidate's plan at the lowest ceiling its seeds found; None where a seed missed a
    p99 target at every load tried (the candidate cannot be planned at any load in LOADS)."""
    out = {}
    for c, found in ceilings(product).items():
        out[c] = plan(c, product, min(found)) if min(found) > 0 else None
    return out


def cheapest(product: Product = PRODUCT) -> Plan:
    plans = [p for p in simulated_plans(product).values() if p is not None]
    if not plans:
        raise ValueError("no candidate meets the p99 targets at any load tried")
    return min(plans, key=lambda p: usd_per_million(p, product))


def main() -> None:
    print(f"load ceiling: share of the mean-value rate meeting both p99 targets, seeds {SEEDS}")
    for c, found in ceilings().items():
        p = simulated_plans()[c]
        name = f"{plan(c).gpu.name}, {plan(c).fmt.name}"
        seeds = ", ".join(f"{x:.0%}" for x in found)
        if p is None:
            print(f"  {name}: {seeds} -> a seed misses at {LOADS[0]:.0%}: not planned")
            continue
        print(
            f"  {name}: {seeds} -> {p.rate:.1f} req/s per replica, {p.replicas} replicas, "
            f"{p.gpus} GPUs, ${usd_per_million(p):.3f} per 1M output tokens"
        )
    best = cheapest()
    print(f"cheapest: {best.gpu.name}, {best.fmt.name}")


if __name__ == "__main__":
    main()
