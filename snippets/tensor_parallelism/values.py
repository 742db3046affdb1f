"""Figures the tensor-parallelism lesson quotes in its prose, computed here (never typed in prose).

Pages refer to them as {{ tensor_parallelism.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/tensor_parallelism/values.py` to list every name and its value.
"""

from core.display import ms
from core.formats import checkpoint_format, resident_weight_bytes
from core.gpus import load_gpu
from core.links import load_link
from core.models import kv_bytes_per_token, load_model
from core.moe import load_moe_model
from core.parallel import (
    ASSUMED_STEP_LATENCY_S,
    allreduce_bytes_per_token,
    embedding_allreduce_bytes,
    kv_bytes_per_token_per_gpu,
    logits_allgather_bytes,
    pipeline_bytes_per_token,
    pipeline_hop_seconds,
    ring_allreduce_seconds,
    tp_decode_step,
)
from core.roofline import tpot_bound
from tensor_parallelism.tp import BIG, BIG_AWQ, CONTEXT, SETUPS, SMALL, TP_SIZES, rows

SHORT = {"h100_sxm": "h100", "rtx_4090": "rtx"}
PP_STAGES = 4  # pipeline stages in the pipeline-parallel example
REPLICATED = "qwen3-30b-a3b"  # 32 query heads, 4 KV heads: t = 8 replicates them
QUIZ_T = 4  # self-test: the decoder all-reduce payload of the 72B model at batch 32
QUIZ_BATCH = 32
# the lab (labs/tensor_parallelism/tp_sweep.py): its default model, sizes and prompt length (a
# test checks they are the script's defaults), on the GPU and link the page quotes its floor for
LAB_MODEL, LAB_GPU, LAB_LINK = "qwen2.5-7b-instruct-awq", "rtx_4090", "pcie4_x16"
LAB_TP, LAB_BATCHES, LAB_PROMPT, LAB_NEW = (1, 2, 4), (1, 32), 512, 64


def lab_values() -> dict[str, str]:
    """The floors the lab is checked against: bandwidth terms only (what verify_labs checks, a
    true lower bound) and with the assumed per-step latency (the lesson's floor)."""
    model, gpu, link = load_model(LAB_MODEL), load_gpu(LAB_GPU), load_link(LAB_LINK)
    fmt = checkpoint_format(model)
    v = {
        "lab_model": model.name,
        "lab_gpu": gpu.name,
        "lab_link": link.name,
        "lab_tp_sizes": ", ".join(map(str, LAB_TP)),
        "tp_lab_batches": " / ".join(map(str, LAB_BATCHES)),
        "tp_lab_prompt": f"{LAB_PROMPT}",
        "tp_lab_new": f"{LAB_NEW}",
    }
    for t in LAB_TP:
        for b in LAB_BATCHES:
            wire = tp_decode_step(gpu, model, t, link, fmt=fmt, batch=b, context=LAB_PROMPT,
                                  step_latency_s=0.0)  # fmt: skip
            step = tp_decode_step(gpu, model, t, link, fmt=fmt, batch=b, context=LAB_PROMPT)
            v[f"lab_t{t}_b{b}_bw_ms"] = ms(wire.seconds)
            v[f"lab_t{t}_b{b}_ms"] = ms(step.seconds)
            v[f"lab_t{t}_b{b}_comm"] = f"{step.comm_share:.0%}"
    return v


def values() -> dict[str, str]:
    small, big = load_model(SMALL), load_model(BIG)
    nv, pcie = load_link("nvlink4_h100"), load_link("pcie4_x16")
    one = small.hidden_size * 2  # one all-reduce, one token
    v = {
        "tp_small": small.name,
        "big_name": big.name,
        "tp_small_layers": f"{small.num_layers}",
        "small_hidden": f"{small.hidden_size:,}",
        "small_vocab": f"{small.vocab_size:,}",
        "ar_bytes": f"{allreduce_bytes_per_token(small):,.0f}",
        "emb_bytes": f"{embedding_allreduce_bytes(small):,.0f}",
        "logits_bytes_t2": f"{logits_allgather_bytes(small, 2):,.0f}",
        "one_ar_bytes": f"{one:,}",
        "nvlink_name": nv.name,
        "nvlink_gbs": f"{nv.bandwidth_gbs:.0f}",
        "pcie_name": pcie.name,
        "pcie_gbs": f"{pcie.bandwidth_gbs:.1f}",
        "latency_us": f"{ASSUMED_STEP_LATENCY_S * 1e6:.0f}",
        "ar_nvlink_t8_wire_us": f"{ring_allreduce_seconds(one, 8, nv, 0.0) * 1e6:.2f}",
        "ar_pcie_t8_wire_us": f"{ring_allreduce_seconds(one, 8, pcie, 0.0) * 1e6:.2f}",
        "ar_t8_us": f"{ring_allreduce_seconds(0.0, 8, nv) * 1e6:.0f}",  # 2(t-1) t_hop alone
        "collectives_big": f"{2 * big.num_layers + 2}",
        "tp_context": f"{CONTEXT:,}",
    }
    # Qwen2.5-72B on 1, 2, 4, 8 GPUs of each kind, BF16 and AWQ
    best: dict[str, tuple[float, int]] = {}
    for gpu, _, fmt, t, step, tokens, _ in rows():
        key = f"{SHORT[gpu.key]}_{'bf16' if fmt.bits == 16 else 'awq'}"
        v[f"{key}_t{t}_ms"] = "—" if step is None else ms(step.seconds)
        v[f"{key}_t{t}_comm"] = "—" if step is None else f"{step.comm_share:.0%}"
        v[f"{key}_t{t}_tokens"] = f"{tokens:,}"
        if step is not None and (key not in best or step.seconds < best[key][0]):
            best[key] = (step.seconds, t)
    for key, (seconds, t) in best.items():
        v[f"{key}_best_t"] = f"{t}"
        v[f"{key}_best_ms"] = ms(seconds)
    awq = load_model(BIG_AWQ)
    v["big_bf16_gb"] = f"{resident_weight_bytes(big) / 1e9:.0f}"
    v["big_awq_gb"] = f"{resident_weight_bytes(awq) / 1e9:.1f}"
    v["tp_rtx"], v["tp_h100"] = (load_gpu(k).name for k, _ in reversed(SETUPS))
    v["tp_sizes"] = ", ".join(map(str, TP_SIZES))
    # KV heads: t > n_kv replicates
    rep = load_moe_model(REPLICATED)
    kappa = kv_bytes_per_token(rep)  # type: ignore[arg-type]
    v |= {
        "rep_name": rep.name,
        "rep_heads": f"{rep.num_heads}",
        "rep_kv_heads": f"{rep.num_kv_heads}",
        "rep_kappa": f"{kappa:,.0f}",
        "rep_t4_kappa": f"{kv_bytes_per_token_per_gpu(rep, 4):,.0f}",  # type: ignore[arg-type]
        "rep_t8_kappa": f"{kv_bytes_per_token_per_gpu(rep, 8):,.0f}",  # type: ignore[arg-type]
        "rep_t8_ideal": f"{kappa / 8:,.0f}",
        "rep_t8_factor": f"{8 * kv_bytes_per_token_per_gpu(rep, 8) / kappa:.0f}",  # type: ignore[arg-type]
        "small_heads": f"{small.num_heads}",
        "small_kv_heads": f"{small.num_kv_heads}",
    }
    # pipeline parallelism: one stream still passes every stage in turn
    h100 = load_gpu("h100_sxm")
    whole = tpot_bound(h100, big, CONTEXT).seconds  # every weight read once, on whichever GPU
    hop = pipeline_hop_seconds(big, nv)  # hidden states and residual of one token
    v |= {
        "pp_stages": f"{PP_STAGES}",
        "pp_hop_bytes": f"{pipeline_bytes_per_token(big):,.0f}",
        "pp_tpot_ms": ms(whole + (PP_STAGES - 1) * hop),
        "pp_capacity_x": f"{PP_STAGES}",
    }
    # self-test: one all-reduce of QUIZ_BATCH hidden vectors over PCIe at t = QUIZ_T
    payload = awq.hidden_size * 2 * QUIZ_BATCH  # AWQ keeps 16-bit activations
    quiz_ar = ring_allreduce_seconds(payload, QUIZ_T, pcie)
    v |= {
        "quiz_t": f"{QUIZ_T}",
        "tp_quiz_batch": f"{QUIZ_BATCH}",
        "quiz_payload_kb": f"{payload / 1e3:,.0f}",
        "quiz_ar_us": f"{quiz_ar * 1e6:.1f}",
        "quiz_wire_us": f"{ring_allreduce_seconds(payload, QUIZ_T, pcie, 0.0) * 1e6:.1f}",
        "quiz_per_step_ms": ms((2 * awq.num_layers + 1) * quiz_ar),
        "big_layers": f"{big.num_layers}",
        "big_ar_bytes": f"{allreduce_bytes_per_token(big):,.0f}",
    }
    return v | lab_values()


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
