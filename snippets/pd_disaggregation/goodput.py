"""Goodput per GPU under TTFT and TPOT SLOs: GPUs doing both phases vs prefill GPUs + decode GPUs.

A steady-state model, not a simulation (DistServe, arXiv 2401.09670, reasons the same way):
- requests arrive as a Poisson stream at rate lam, each with PROMPT prompt and OUTPUT new tokens;
- a prefill takes its floor t_p = ttft_bound(PROMPT) and waits in an M/D/1 queue:
  mean wait rho t_p / (2 (1 - rho));
- the decodes in flight follow Little's law, B = lam * OUTPUT * TPOT; one decode step takes
  tpot_bound(batch=B) at the mean context PROMPT + OUTPUT / 2;
- colocated (no chunking): the GPU spends the share rho = lam t_p prefilling, and every running
  decode waits for it, so TPOT = step / (1 - rho); a new prompt also waits half a decode step;
- disaggregated: prefill GPUs only prefill, decode GPUs only decode, and the KV moves over the
  link in between (its lower-bound time is added to TTFT, not hidden by a layer-by-layer send).
Mean values against the SLOs, floors for every time: it ranks the designs, it predicts no p99.
Goodput = the highest arrival rate whose mean TTFT and TPOT meet the SLOs, per GPU used.
"""

import math
from dataclasses import dataclass

from core.gpus import GPU, load_gpu
from core.links import Link, load_link, transfer_seconds
from core.models import ModelSpec, kv_bytes_per_token, load_model
from core.roofline import tpot_bound, ttft_bound

MODEL, GPU_KEY, LINK = "qwen2.5-7b-instruct", "h100_sxm", "infiniband_ndr"
PROMPT, OUTPUT = 2000, 200
SLOS = ((0.4, 0.050), (0.4, 0.015), (0.4, 0.008), (0.05, 0.050))  # (TTFT s, TPOT s)
RATIOS = ((1, 1), (2, 1), (3, 1), (1, 2), (1, 3), (3, 2), (2, 3))  # (prefill GPUs, decode GPUs)
MAX_BATCH = 4096


@dataclass(frozen=True)
class Load:
    ttft_s: float
    tpot_s: float  # inf when the GPU cannot keep up


def _decode(gpu: GPU, model: ModelSpec, lam: float, slowdown: float) -> float:
    """TPOT at the fixed point B = lam * OUTPUT * TPOT, TPOT = step(B) * slowdown; inf if none."""
    context = PROMPT + OUTPUT // 2
    batch = 1
    for _ in range(200):
        tpot = tpot_bound(gpu, model, context, batch=batch).seconds * slowdown
        need = max(1, math.ceil(lam * OUTPUT * tpot))
        if need == batch:
            return tpot
        if need > MAX_BATCH:
            return math.inf
        batch = need
    return math.inf


def md1_wait(rho: float, service_s: float) -> float:
    """Mean wait in an M/D/1 queue (Pollaczek-Khinchine with deterministic service)."""
    return rho * service_s / (2 * (1 - rho))


def colocated(gpu: GPU, model: ModelSpec, lam: float) -> Load:
    t_p = ttft_bound(gpu, model, PROMPT).seconds
    rho = lam * t_p
    if rho >= 1:
        return Load(math.inf, math.inf)
    tpot = _decode(gpu, model, lam, 1 / (1 - rho))
    return Load(t_p + md1_wait(rho, t_p) + tpot * (1 - rho) / 2, tpot)


def disaggregated(
    gpu: GPU, model: ModelSpec, link: Link, lam: float, prefill_gpus: int, decode_gpus: int
) -> Load:
    """lam split evenly over prefill_gpus prefill GPUs and decode_gpus decode GPUs."""
    t_p = ttft_bound(gpu, model, PROMPT).seconds
    rho = lam / prefill_gpus * t_p
    if rho >= 1:
        return Load(math.inf, math.inf)
    move = transfer_seconds(link, kv_bytes_per_token(model) * PROMPT)
    return Load(t_p + md1_wait(rho, t_p) + move, _decode(gpu, model, lam / decode_gpus, 1.0))


def max_rate(meets, hi: float) -> float:
    """Largest lam in [0, hi] with meets(lam), by bisection (monotone: more load, worse)."""
    lo = 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if meets(mid) else (lo, mid)
    return lo


@dataclass(frozen=True)
class Goodput:
    ttft_slo_s: float
    tpot_slo_s: float
    colocated_per_gpu: float  # requests/s per GPU, every GPU doing both phases
    disaggregated_per_gpu: float  # requests/s per GPU, the best split in RATIOS
    ratio: tuple[int, int]  # (prefill GPUs, decode GPUs) of that split


def goodput(gpu: GPU, model: ModelSpec, link: Link, ttft_slo: float, tpot_slo: float) -> Goodput:
    hi = 1 / ttft_bound(gpu, model, PROMPT).seconds  # one GPU cannot prefill faster

    def ok(load: Load) -> bool:
        return load.ttft_s <= ttft_slo and load.tpot_s <= tpot_slo

    co = max_rate(lambda lam: ok(colocated(gpu, model, lam)), hi)
    best, ratio = 0.0, RATIOS[0]
    for n_p, n_d in RATIOS:

        def split_ok(lam: float, n_p: int = n_p, n_d: int = n_d) -> bool:
            return ok(disaggregated(gpu, model, link, lam, n_p, n_d))

        lam = max_rate(split_ok, hi * n_p)
        if lam / (n_p + n_d) > best:
            best, ratio = lam / (n_p + n_d), (n_p, n_d)
    return Goodput(ttft_slo, tpot_slo, co, best, ratio)


def main() -> None:
    gpu, model, link = load_gpu(GPU_KEY), load_model(MODEL), load_link(LINK)
    print(
        f"{model.name} on {gpu.name}; {PROMPT:,} prompt + {OUTPUT} new tokens; KV over {link.name}"
    )
    print(f"{'TTFT SLO':>9} {'TPOT SLO':>9} {'colocated':>10} {'split':>10}  (requests/s per GPU)")
    for ttft_slo, tpot_slo in SLOS:
        g = goodput(gpu, model, link, ttft_slo, tpot_slo)
        print(
            f"{ttft_slo * 1e3:>6.0f} ms {tpot_slo * 1e3:>6.0f} ms "
            f"{g.colocated_per_gpu:>10.2f} {g.disaggregated_per_gpu:>10.2f}  "
            f"({g.ratio[0]}P + {g.ratio[1]}D)"
        )


if __name__ == "__main__":
    main()
