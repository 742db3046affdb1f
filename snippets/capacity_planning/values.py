"""Figures the capacity-planning lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ capacity_planning.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/capacity_planning/values.py` to list every name and its value.
"""

from dataclasses import replace

from capacity_planning import estimate, plan_sim
from capacity_planning.estimate import PRODUCT, Candidate, Product, plan, usd_per_million
from core.batch_defaults import LARGE_GPU_BYTES, batch_defaults
from core.engine import GPU_MEMORY_UTILIZATION
from core.gpus import GIB, load_gpus
from core.models import load_model
from core.reference import BF16_MODEL

# transfer questions of the self-test
DOUBLED = replace(PRODUCT, peak_rate=2 * PRODUCT.peak_rate)
BIG_MODEL = "qwen2.5-72b-instruct"


def plan_values(prefix: str, p: estimate.Plan, product: Product = PRODUCT) -> dict[str, str]:
    return {
        f"{prefix}_fmt": p.fmt.name,
        f"{prefix}_share": f"{p.share:.0%}",
        f"{prefix}_tp": f"{p.tp}",
        f"{prefix}_kv_tokens": f"{p.kv_tokens:,}",
        f"{prefix}_kv_batch": f"{p.kv_batch}",
        f"{prefix}_batch": f"{p.batch}",
        f"{prefix}_prefill_ms": f"{p.prefill_s * 1e3:.0f}",
        f"{prefix}_step_ms": f"{p.step_s * 1e3:.1f}",
        f"{prefix}_tpot_ms": f"{p.tpot_s * 1e3:.1f}",
        f"{prefix}_mean_rate": f"{p.mean_rate:.1f}",
        f"{prefix}_rate": f"{p.rate:.1f}",
        f"{prefix}_replicas": f"{p.replicas}",
        f"{prefix}_gpus": f"{p.gpus}",
        f"{prefix}_usd_h": f"{p.gpus * p.usd_per_gpu_hour:.2f}",
        f"{prefix}_usd_m": f"{usd_per_million(p, product):.3f}",
    }


def values() -> dict[str, str]:
    gpus = load_gpus()
    v = {
        "product_peak_rate": f"{PRODUCT.peak_rate:g}",
        "product_prompt": f"{PRODUCT.prompt_tokens:,}",
        "product_mean_output": f"{PRODUCT.mean_output}",
        "product_max_output": f"{PRODUCT.max_output:,}",
        "max_model_len": f"{PRODUCT.prompt_tokens + PRODUCT.max_output:,}",
        "ttft_ms": f"{PRODUCT.ttft_p99_ms:,g}",
        "tpot_ms": f"{PRODUCT.tpot_p99_ms:g}",
        "load_ceiling": f"{estimate.LOAD_CEILING:.0%}",
        "spare": f"{estimate.SPARE_REPLICAS}",
        "loads_low": f"{plan_sim.LOADS[0]:.0%}",
        "loads_high": f"{plan_sim.LOADS[-1]:.0%}",
        "loads_step": f"{plan_sim.LOADS[1] - plan_sim.LOADS[0]:.0%}",
        "seeds": f"{len(plan_sim.SEEDS)}",
        "traffic_s": f"{plan_sim.TRAFFIC_S}",
        "usd_h_4090": f"{estimate.load_prices()['rtx_4090'].usd_per_hour:.2f}",
        "usd_h_h100": f"{estimate.load_prices()['h100_sxm'].usd_per_hour:.2f}",
    }
    names = {"rtx_4090": "rtx", "h100_sxm": "h100"}
    ceilings, simulated = plan_sim.ceilings(), plan_sim.simulated_plans()
    for c in estimate.CANDIDATES:
        key = f"{names[c.gpu_key]}_{c.quantization or 'ckpt'}"
        v[f"{key}_gpu"] = gpus[c.gpu_key].name
        mean_value = plan(c)
        if mean_value is None:
            raise ValueError(f"{c}: the page walks through every candidate's mean-value plan")
        v |= plan_values(f"{key}_mv", mean_value)
        found = ceilings[c]
        v[f"{key}_ceilings"] = ", ".join(f"{x:.0%}" for x in found)
        v[f"{key}_ceiling"] = f"{min(found):.0%}"
        if simulated[c] is not None:
            v |= plan_values(f"{key}_sim", simulated[c])
    by_key = {c.gpu_key + str(c.quantization): plan(c) for c in estimate.CANDIDATES}
    if any(p.tp != 1 for p in by_key.values()):
        raise ValueError("the page says every candidate keeps TP = 1")
    if not by_key["h100_sxmNone"].batch < by_key["h100_sxmNone"].kv_batch:
        raise ValueError("the page says TPOT, not the KV room, caps the BF16 batch on the H100")
    if by_key["h100_sxmfp8"].batch != by_key["h100_sxmfp8"].kv_batch:
        raise ValueError("the page says the KV room caps the FP8 batch on the H100")
    rejected = [c for c, p in simulated.items() if p is None]
    if [c.gpu_key for c in rejected] != ["rtx_4090"]:
        raise ValueError("the page says the simulator rejects the RTX 4090 plan and only it")
    accepted = [min(found) for c, found in ceilings.items() if simulated[c] is not None]
    if min(accepted) != estimate.LOAD_CEILING:
        raise ValueError("LOAD_CEILING must be the lowest ceiling of an accepted candidate")
    best = plan_sim.cheapest()
    if best.candidate != Candidate("h100_sxm", BF16_MODEL, "fp8"):
        raise ValueError("the page names H100 with FP8 as the cheapest plan")
    v["flags"] = estimate.flags(best)
    served = batch_defaults(best.gpu, "serve")
    if (
        not best.batch < served.max_num_seqs
        or not PRODUCT.prompt_tokens <= served.max_num_batched_tokens
    ):
        raise ValueError("the page says the serve default admits more sequences than the plan")
    v["gpu_mem_util"] = f"{GPU_MEMORY_UTILIZATION:g}"
    v["large_gpu_gib"] = f"{LARGE_GPU_BYTES / GIB:g}"
    v["serve_default_seqs"] = f"{served.max_num_seqs:,}"
    v["serve_default_tokens"] = f"{served.max_num_batched_tokens:,}"
    # the same chain on floors alone (share 1) and with the shares, both at LOAD_CEILING
    costs = {}
    for c in estimate.CANDIDATES:
        key = f"{names[c.gpu_key]}_{c.quantization or 'ckpt'}"
        on_floors = plan(c, floors_only=True)
        assert on_floors is not None  # a plan on floors is never worse than one on shares
        v |= plan_values(f"{key}_floor", on_floors)
        costs[c] = (usd_per_million(on_floors), usd_per_million(plan(c)))
    rtx = next(c for c in estimate.CANDIDATES if c.gpu_key == "rtx_4090")
    floor_ratio = costs[rtx][0] / costs[best.candidate][0]
    share_ratio = costs[rtx][1] / costs[best.candidate][1]
    if not 1 < floor_ratio < 1.1 < 2 < share_ratio:
        raise ValueError("the page says floors make the 4090 nearly tie and shares 2x dearer")
    v["rtx_floor_ratio"] = f"{floor_ratio:.2f}"
    v["rtx_share_ratio"] = f"{share_ratio:.1f}"
    # transfer: twice the peak; the 72B model
    doubled = plan(best.candidate, DOUBLED, min(ceilings[best.candidate]))
    assert doubled is not None
    v["doubled_peak"] = f"{DOUBLED.peak_rate:g}"
    v |= plan_values("doubled", doubled, DOUBLED)
    big = plan(Candidate("h100_sxm", BIG_MODEL, "fp8"))
    if big is None:
        raise ValueError("the self-test plans the 72B model on H100s with FP8")
    if big.tp != 2:
        raise ValueError("the self-test says each GPU holds half the 72B model's weights")
    v["big_model"] = load_model(BIG_MODEL).name
    v |= plan_values("big", big)
    return v


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
