"""Figures the MoE and expert-parallelism lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ moe_expert_parallelism.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/moe_expert_parallelism/values.py` to list every name and its value.
"""

from core.display import ms
from core.gpus import load_gpu
from core.models import kv_bytes_per_token
from core.moe import (
    active_matmul_params,
    active_params,
    all_to_all_bytes_per_token,
    allgather_reducescatter_bytes_per_token,
    decode_weight_bytes,
    dense_twin_bound,
    dense_twin_weight_bytes,
    expected_distinct_experts,
    expert_params,
    load_moe_model,
    moe_decode_bound,
    moe_param_breakdown,
    remote_ranks_per_token,
    total_params,
)
from core.parallel import allreduce_bytes_per_token, ring_allreduce_link_bytes
from moe_expert_parallelism.imbalance import EP, SEEDS, STEPS, TOKENS, table
from moe_expert_parallelism.moe_bytes import EP_SIZES, GPU_KEY, MODEL, MODELS, critical_batches

SWEEP = (1, 8, 32, 64, 128)  # batches the prose walks through
QUIZ_BATCH = 16
# the lab (labs/moe_expert_parallelism/moe_decode.py): its default batches and prompt length (a
# test checks they are the script's defaults); its model is MODEL, the page's floor on GPU_KEY
LAB_BATCHES, LAB_PROMPT, LAB_NEW = (1, 2, 4, 8, 16, 32, 64, 128), 128, 64
LAB_SHOWN = (1, 8, 32, 128)  # the batches the page quotes


def lab_values() -> dict[str, str]:
    """The curve the lab prints and the floor it is checked against (at the first decode step's
    context, the lab's prompt length)."""
    gpu, m = load_gpu(GPU_KEY), load_moe_model(MODEL)
    v = {
        "moe_lab_batches": ", ".join(map(str, LAB_BATCHES)),
        "moe_lab_prompt": f"{LAB_PROMPT}",
        "moe_lab_new": f"{LAB_NEW}",
    }
    floors = {b: moe_decode_bound(gpu, m, b, LAB_PROMPT).seconds for b in LAB_BATCHES}
    for b in LAB_SHOWN:
        v[f"lab_touched_b{b}"] = f"{touched(m, b):.1f}"
        v[f"lab_floor_b{b}_ms"] = ms(floors[b])
    v["lab_floor_growth"] = f"{floors[LAB_BATCHES[-1]] / floors[LAB_BATCHES[0]]:.1f}"
    return v


def touched(m, batch: int) -> float:
    return expected_distinct_experts(m.num_experts, m.experts_per_token, batch)


def _model_values(prefix: str, key: str) -> dict[str, str]:
    m = load_moe_model(key)
    parts = moe_param_breakdown(m)
    card = m.model_card or {}
    return {
        f"{prefix}_name": m.name,
        f"{prefix}_e": f"{m.num_experts}",
        f"{prefix}_k": f"{m.experts_per_token}",
        f"{prefix}_f": f"{m.expert_intermediate_size:,}",
        f"{prefix}_d": f"{m.hidden_size:,}",
        f"{prefix}_layers": f"{m.num_layers}",
        f"{prefix}_total": f"{total_params(m):,}",
        f"{prefix}_active": f"{active_params(m):,}",
        f"{prefix}_total_b": f"{total_params(m) / 1e9:.1f}",
        f"{prefix}_active_b": f"{active_params(m) / 1e9:.2f}",
        f"{prefix}_card_total": card.get("params", "—"),
        f"{prefix}_card_active": card.get("active_params", "—"),
        f"{prefix}_ratio": f"{total_params(m) / active_params(m):.1f}",
        f"{prefix}_expert_share": f"{parts['routed experts'] / total_params(m):.0%}",
        f"{prefix}_expert_params": f"{expert_params(m):,}",
        f"{prefix}_total_gb": f"{total_params(m) * 2 / 1e9:.0f}",
    }


def values() -> dict[str, str]:
    v = _model_values("m30", MODELS[0]) | _model_values("m235", MODELS[1])
    gpu, m = load_gpu(GPU_KEY), load_moe_model(MODEL)
    v["moe_gpu"] = gpu.name
    v["moe_gpu_gb"] = f"{gpu.memory_gb:.0f}"
    for b in SWEEP:
        moe, dense = moe_decode_bound(gpu, m, b, 0), dense_twin_bound(gpu, m, b, 0)
        v[f"touched_b{b}"] = (
            f"{expected_distinct_experts(m.num_experts, m.experts_per_token, b):.1f}"
        )
        v[f"weights_gb_b{b}"] = f"{decode_weight_bytes(m, b) / 1e9:.1f}"
        v[f"moe_ms_b{b}"] = ms(moe.seconds)
        v[f"dense_ms_b{b}"] = ms(dense.seconds)
        v[f"moe_tps_b{b}"] = f"{b / moe.seconds:,.0f}"
        v[f"dense_tps_b{b}"] = f"{b / dense.seconds:,.0f}"
    v["dense_gb"] = f"{dense_twin_weight_bytes(m) / 1e9:.1f}"
    moe_b, dense_b = critical_batches(gpu, m)
    v["crit_moe"], v["crit_dense"] = f"{moe_b:,}", f"{dense_b:,}"
    v["crit_ratio"] = f"{moe_b / dense_b:.1f}"
    # with S cached tokens per sequence each token also reads kappa * S bytes: past
    # S = 2 M' / (kappa * ridge) that alone outruns the FLOPs, and no batch is compute-bound
    kappa = kv_bytes_per_token(m)  # type: ignore[arg-type]
    v["moe_kappa"] = f"{kappa:,.0f}"
    v["vanish_context"] = f"{2 * active_matmul_params(m) / (kappa * gpu.ridge_point):.0f}"
    # expert parallelism
    v["tp_payload"] = f"{allreduce_bytes_per_token(m):,.0f}"  # type: ignore[arg-type]
    for ep in EP_SIZES:
        v[f"ag_ep{ep}_mb"] = f"{allgather_reducescatter_bytes_per_token(m, ep) / 1e6:.2f}"
        v[f"a2a_ep{ep}_mb"] = f"{all_to_all_bytes_per_token(m, ep) / 1e6:.2f}"
        v[f"remote_ep{ep}"] = f"{remote_ranks_per_token(m, ep):.2f}"
        # the same model with ep-way tensor parallelism: what its ring all-reduces send in all
        tp_link = ring_allreduce_link_bytes(allreduce_bytes_per_token(m), ep)  # type: ignore[arg-type]
        v[f"tp_link_ep{ep}_mb"] = f"{tp_link / 1e6:.2f}"
    # load imbalance (numpy simulation)
    v |= {"sim_ep": f"{EP}", "sim_tokens": f"{TOKENS}", "moe_sim_steps": f"{STEPS}"}
    v["sim_seeds"] = f"{len(SEEDS)}"
    for skew, runs in table():
        name = f"s{skew:.1f}".replace(".", "")
        experts = [r.expert_max_over_mean for r in runs]
        ranks = [r.rank_max_over_mean for r in runs]
        v[f"{name}_expert"] = f"{min(experts):.1f}–{max(experts):.1f}"
        v[f"{name}_rank_lo"] = f"{min(ranks):.2f}"
        v[f"{name}_rank_hi"] = f"{max(ranks):.2f}"
    # self-test
    large = load_moe_model(MODELS[1])
    v |= {
        "moe_quiz_batch": f"{QUIZ_BATCH}",
        "quiz_touched": f"{touched(m, QUIZ_BATCH):.1f}",
        "quiz_weights_gb": f"{decode_weight_bytes(m, QUIZ_BATCH) / 1e9:.1f}",
        "quiz_large_b1_gb": f"{decode_weight_bytes(large, 1) / 1e9:.1f}",
        "quiz_large_b128_gb": f"{decode_weight_bytes(large, 128) / 1e9:.0f}",
    }
    return v | lab_values()


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
