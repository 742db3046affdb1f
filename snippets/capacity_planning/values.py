"""Figures the capacity-planning lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ capacity_planning.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/capacity_planning/values.py` to list every name and its value.
"""

from dataclasses import replace

from capacity_planning import estimate, plan_sim
from capacity_planning.estimate import PRODUCT, Candidate, Product, plan, usd_per_million
from core.batch_defaults import batch_defaults
from core.gpus import load_gpus
from core.models import load_model
from core.reference import AWQ_MODEL, BF16_MODEL

# transfer questions of the self-test
DOUBLED = replace(PRODUCT, peak_rate=2 * PRODUCT.peak_rate)
BIG_MODEL = "qwen2.5-72b-instruct"
INT8_STAND_IN = "GPTQ-Int8"  # the other 8-bit format with a published batch-1 row


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


def source_values(prefix: str, p: estimate.Plan) -> dict[str, str]:
    """The published run behind a plan's share, as the page's table names it."""
    if p.measured is None:
        raise ValueError("a plan on floors alone has no published run behind it")
    r = p.measured.row
    return {
        f"{prefix}_src_publisher": r.publisher,
        f"{prefix}_src_engine": f"{r.engine} {r.engine_version}",
        f"{prefix}_src_hardware": r.hardware,
        f"{prefix}_src_format": r.format,
        f"{prefix}_src_io": f"{r.input_len:,} / {r.output_len:,}",
        f"{prefix}_src_read": r.read.isoformat(),
        f"{prefix}_src_tok_s": f"{r.value:.1f}",
        f"{prefix}_src_floor_tok_s": f"{p.measured.floor_tok_s:.1f}",
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
        v |= source_values(key, mean_value)
        if mean_value.measured.row.gpu == c.gpu_key:
            raise ValueError("the page says no published batch-1 row is on the candidates' GPUs")
        stand_in = mean_value.measured.row.format != estimate.published_format(c)
        if stand_in != (c.quantization == "fp8"):
            raise ValueError("the page says FP8's share, and only FP8's, comes from a stand-in")
        found = ceilings[c]
        v[f"{key}_ceilings"] = ", ".join(f"{x:.0%}" for x in found)
        v[f"{key}_ceiling"] = f"{min(found):.0%}"
        if simulated[c] is not None:
            v |= plan_values(f"{key}_sim", simulated[c])
    if (
        len(
            {
                v[f"{names[c.gpu_key]}_{c.quantization or 'ckpt'}_src_read"]
                for c in estimate.CANDIDATES
            }
        )
        != 1
    ):
        raise ValueError("the page gives one read date for every candidate's published run")
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
    rtx_plan = plan(Candidate("rtx_4090", AWQ_MODEL, None))
    rtx_served = batch_defaults(load_gpus()["rtx_4090"], "serve")
    step_tokens = PRODUCT.prompt_tokens + (rtx_plan.batch if rtx_plan else 0)
    if rtx_plan is None or step_tokens > rtx_served.max_num_batched_tokens:
        raise ValueError("the page says a prompt fits one step beside the 4090's running decodes")
    v["serve_default_tokens_4090"] = f"{rtx_served.max_num_batched_tokens:,}"
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
    # the FP8 stand-in questioned: the other 8-bit row's share instead of BF16's
    on_int8 = plan(best.candidate, share_format=INT8_STAND_IN)
    assert on_int8 is not None
    v["int8_format"] = INT8_STAND_IN
    v |= plan_values("int8", on_int8)
    bf16 = plan(Candidate("h100_sxm", BF16_MODEL, None))
    assert bf16 is not None
    if not usd_per_million(on_int8) < usd_per_million(bf16):
        raise ValueError("the page says FP8 stays the cheaper H100 format on the 8-bit row too")
    v["doubled_peak"] = f"{DOUBLED.peak_rate:g}"
    v |= plan_values("doubled", doubled, DOUBLED)
    big = plan(Candidate("h100_sxm", BIG_MODEL, "fp8"))
    if big is None:
        raise ValueError("the self-test plans the 72B model on H100s with FP8")
    if big.tp != 2:
        raise ValueError("the self-test says each GPU holds half the 72B model's weights")
    # the self-test says the 72B run ran eager and the 7B runs the plan uses with CUDA graphs
    small_notes = {p.measured.row.note for p in by_key.values() if p.measured is not None}
    if "enforce_eager=True" not in big.measured.row.note or any(
        "enforce_eager=False" not in note for note in small_notes
    ):
        raise ValueError("the self-test says only the 72B run behind the plan ran without graphs")
    v["big_model"] = load_model(BIG_MODEL).name
    v |= plan_values("big", big)
    v |= source_values("big", big)
    v["big_src_gpus"] = f"{big.measured.row.gpus}"
    return v


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
