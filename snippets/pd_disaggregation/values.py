"""Figures the PD-disaggregation lesson quotes in its prose, computed here (never typed in prose).

Pages refer to them as {{ pd_disaggregation.<name> }}; coursesite.values fills them in.
Run `python snippets/pd_disaggregation/values.py` to list every name and its value.
"""

from core.display import ms  # three significant figures, as on every page
from core.gpus import load_gpu
from core.links import load_link, load_links
from core.models import kv_bytes_per_token, layer_matmul_params, load_model
from core.roofline import ttft_bound
from pd_disaggregation import goodput as gp
from pd_disaggregation.example_connector import loaded_tokens, stored_tokens
from pd_disaggregation.transfer import (
    DECODE_BATCH,
    DECODE_CONTEXT,
    GPU_KEY,
    MODEL,
    PROMPT,
    break_even_bandwidth,
    handoff,
    interference,
)

# Self-test: a long prompt over the slowest network in the table.
QUIZ_PROMPT, QUIZ_LINK = 8000, "ethernet_100g"
# Transfer: another model on another GPU, over its host bus and over a network.
T_MODEL, T_GPU, T_PROMPT, T_LINKS = (
    "llama-3.1-8b-instruct",
    "a100_80gb_sxm",
    4000,
    (
        "pcie4_x16",
        "ethernet_100g",
    ),
)
# The connector lab on the CPU backend (block size 128): a prompt one past a whole block.
LAB_BLOCK, LAB_PROMPTS = 128, (300, 257)


def kv_per_param(model) -> float:
    """KV bytes per token per matmul weight: the model's share of the transfer-to-prefill ratio."""
    return kv_bytes_per_token(model) / layer_matmul_params(model)


def values() -> dict[str, str]:
    gpu, model = load_gpu(GPU_KEY), load_model(MODEL)
    kappa = kv_bytes_per_token(model)
    prefill = ttft_bound(gpu, model, PROMPT).seconds
    v = {
        "handoff_model": model.name,
        "handoff_gpu": gpu.name,
        "handoff_prompt": f"{PROMPT:,}",
        "kv_mb": f"{kappa * PROMPT / 1e6:,.1f}",
        "prefill_ms": ms(prefill),
        "break_even_gbs": f"{break_even_bandwidth(gpu, model, PROMPT) / 1e9:.1f}",
    }
    for key, link in load_links().items():
        h = handoff(gpu, model, PROMPT, link)
        v[f"{key}_name"] = link.name
        v[f"{key}_gbs"] = f"{link.bandwidth_gbs:.1f}"
        v[f"{key}_ms"] = ms(h.transfer_s)
        v[f"{key}_ratio"] = f"{h.ratio:.0%}"
    v["nvlink4_h100_both_gbs"] = f"{2 * load_link('nvlink4_h100').bandwidth_gbs:.0f}"
    i = interference(gpu, model, PROMPT, DECODE_BATCH, DECODE_CONTEXT)
    v |= {
        "decode_batch": f"{DECODE_BATCH}",
        "stall_context": f"{DECODE_CONTEXT:,}",
        "decode_step_ms": ms(i.decode_step_s),
        "mixed_step_ms": ms(i.mixed_step_s),
        "stall_ms": ms(i.stall_s),
        "stall_x": f"{i.mixed_step_s / i.decode_step_s:.1f}",
    }
    # goodput model
    link = load_link(gp.LINK)
    v |= {"gp_output": f"{gp.OUTPUT}", "gp_link": link.name}
    for n, (ttft_slo, tpot_slo) in enumerate(gp.SLOS):
        g = gp.goodput(gpu, model, link, ttft_slo, tpot_slo)
        v |= {
            f"gp{n}_ttft_ms": f"{ttft_slo * 1e3:.0f}",
            f"gp{n}_tpot_ms": f"{tpot_slo * 1e3:.0f}",
            f"gp{n}_co": f"{g.colocated_per_gpu:.1f}",
            f"gp{n}_split": f"{g.disaggregated_per_gpu:.1f}",
            f"gp{n}_ratio": f"{g.ratio[0]}P + {g.ratio[1]}D",
            f"gp{n}_gain": f"{g.disaggregated_per_gpu / g.colocated_per_gpu - 1:+.0%}",
        }
    # self-test
    q = handoff(gpu, model, QUIZ_PROMPT, load_link(QUIZ_LINK))
    v |= {
        "quiz_handoff_prompt": f"{QUIZ_PROMPT:,}",
        "quiz_link": q.link.name,
        "quiz_gb": f"{q.kv_bytes / 1e9:.2f}",
        "quiz_ms": ms(q.transfer_s),
        "quiz_prefill_ms": ms(q.prefill_s),
        "quiz_ratio": f"{q.ratio:.0%}",
    }
    t_gpu, t_model = load_gpu(T_GPU), load_model(T_MODEL)
    v |= {
        "t_model": t_model.name,
        "t_card": t_gpu.name,
        "t_prompt": f"{T_PROMPT:,}",
        "t_kappa": f"{kv_bytes_per_token(t_model):,.0f}",
        "t_kv_mb": f"{kv_bytes_per_token(t_model) * T_PROMPT / 1e6:,.0f}",
        "t_prefill_ms": ms(ttft_bound(t_gpu, t_model, T_PROMPT).seconds),
        "t_break_even_gbs": f"{break_even_bandwidth(t_gpu, t_model, T_PROMPT) / 1e9:.1f}",
        "t_kv_per_param_x": f"{kv_per_param(t_model) / kv_per_param(model):.1f}",
        "t_flops_x": f"{gpu.peak_flops / t_gpu.peak_flops:.1f}",
    }
    for n, key in enumerate(T_LINKS):
        h = handoff(t_gpu, t_model, T_PROMPT, load_link(key))
        v |= {
            f"t{n}_link": h.link.name,
            f"t{n}_ms": ms(h.transfer_s),
            f"t{n}_ratio": f"{h.ratio:.0%}",
        }
    # the connector lab's rule on the CPU backend
    ok, off = LAB_PROMPTS
    v |= {
        "lab_block": f"{LAB_BLOCK}",
        "lab_prompt_ok": f"{ok}",
        "lab_stored_ok": f"{stored_tokens(ok, LAB_BLOCK)}",
        "lab_loaded_ok": f"{loaded_tokens(ok, LAB_BLOCK)}",
        "lab_prompt_off": f"{off}",
        "lab_stored_off": f"{stored_tokens(off, LAB_BLOCK)}",
        "lab_loaded_off": f"{loaded_tokens(off, LAB_BLOCK)}",
    }
    return v


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
