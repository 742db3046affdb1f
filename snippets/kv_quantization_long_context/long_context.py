"""An FP8 KV cache and long contexts: capacity, decode bounds, attention's share, offloading.

kv_cache_dtype="fp8" stores K and V in one byte instead of two, so kappa halves: twice the tokens
fit, and a decode step reads half the KV bytes. This file lays out what follows for Qwen2.5-7B:
one sequence's KV at 4k ... 128k tokens, how many sequences fit by context and KV dtype, the decode
bound at long context, attention's share of a token's FLOPs and of a step's bytes, YaRN's derived
length, and what offloading over PCIe costs. Every quantity comes from the course's core
(core.long_context, core.roofline, core.links); times are lower bounds.

Run it: python snippets/kv_quantization_long_context/long_context.py
"""

import json

from core.formats import checkpoint_format
from core.gpus import GIB, load_gpus
from core.links import load_link
from core.long_context import (
    attention_flops_share,
    kv_bytes_share,
    kv_reload_seconds,
    kv_value_bytes,
    sequence_kv_bytes,
    sequences_that_fit,
    weight_offload_step_seconds,
    yarn_hf_overrides,
    yarn_max_model_len,
)
from core.models import MODELS_DIR, ModelSpec, load_model
from core.roofline import tpot_bound, ttft_bound

MODEL = "qwen2.5-7b-instruct"
AWQ_MODEL = "qwen2.5-7b-instruct-awq"
CONTEXTS = (4096, 8192, 32768, 131072)
DTYPES = ("auto", "fp8")
YARN_FACTOR = 4.0  # Qwen's model card: factor 4.0 over 32,768 original positions
BATCH = 16  # the decode batch of the long-context bound table
OFFLOAD_GIB = 4  # cpu_offload_gb in the weight-offload example


def rope_theta(model: ModelSpec) -> float:
    """The RoPE base from the model's config.json (YaRN keeps it)."""
    data = json.loads((MODELS_DIR / f"{model.key}.json").read_text(encoding="utf-8"))
    return data["config"]["rope_theta"]


def kv_per_sequence_table(model) -> list[str]:
    lines = [
        f"{model.name}: KV cache of one sequence (GiB)",
        f"{'context':>9}{'BF16':>8}{'FP8':>8}",
    ]
    for s in CONTEXTS:
        cells = "".join(f"{sequence_kv_bytes(model, s, d) / GIB:>8.3f}" for d in DTYPES)
        lines.append(f"{s:>9,}{cells}")
    return lines


def fit_table() -> list[str]:
    gpus = load_gpus()
    configs = [
        (gpus["rtx_4090"], load_model(MODEL)),
        (gpus["rtx_4090"], load_model(AWQ_MODEL)),
        (gpus["h100_sxm"], load_model(MODEL)),
    ]
    names = [f"{g.name} {checkpoint_format(m).name.split(' ')[0]}" for g, m in configs]
    head = f"{'context':>9}" + "".join(f"{n + ', ' + d + ' KV':>24}" for n in names for d in DTYPES)
    lines = ["Sequences whose KV fits at once (weights, then KV dtype; vLLM defaults)", head]
    for s in CONTEXTS:
        cells = [
            f"{sequences_that_fit(g, m, checkpoint_format(m), s, d):>24,}"
            for g, m in configs
            for d in DTYPES
        ]
        lines.append(f"{s:>9,}" + "".join(cells))
    return lines


def decode_table() -> list[str]:
    gpu, model = load_gpus()["h100_sxm"], load_model(MODEL)
    lines = [
        f"{gpu.name}, {model.name} BF16 weights, batch {BATCH}: decode step lower bound",
        f"{'context':>9}{'auto ms':>9}{'fp8 ms':>9}{'speed-up':>9}{'KV share':>9}",
    ]
    for s in CONTEXTS:
        t = {d: tpot_bound(gpu, model, s, None, BATCH, kv_bytes=kv_value_bytes(d)) for d in DTYPES}
        lines.append(
            f"{s:>9,}{t['auto'].seconds * 1e3:>9.2f}{t['fp8'].seconds * 1e3:>9.2f}"
            f"{t['auto'].seconds / t['fp8'].seconds:>8.2f}x"
            f"{kv_bytes_share(model, s, None, BATCH):>9.0%}"
        )
    return lines


def attention_table(model) -> list[str]:
    lines = [
        "attention's share of one decode token's FLOPs, and KV's share of a batch-1 step's bytes",
        f"{'context':>9}{'FLOPs':>8}{'bytes':>8}",
    ]
    for s in (1024, *CONTEXTS):
        lines.append(
            f"{s:>9,}{attention_flops_share(model, s):>8.1%}{kv_bytes_share(model, s):>8.1%}"
        )
    return lines


def offload_lines(model) -> list[str]:
    rtx, pcie4 = load_gpus()["rtx_4090"], load_link("pcie4_x16")
    s = 32768
    reload_s = kv_reload_seconds(pcie4, model, s)
    prefill_s = ttft_bound(rtx, model, s).seconds
    step_s = weight_offload_step_seconds(pcie4, OFFLOAD_GIB)
    floor_s = tpot_bound(rtx, model, 1024).seconds
    yarn_len = yarn_max_model_len(model.max_position_embeddings, YARN_FACTOR)
    overrides = yarn_hf_overrides(model, yarn_len, rope_theta(model))
    return [
        f"YaRN x{YARN_FACTOR:g}: max_model_len {yarn_len:,}",
        f"  LLM(..., hf_overrides={overrides})",
        f"KV offloading, a {s:,}-token sequence over {pcie4.name}: "
        f"reload >= {reload_s * 1e3:.1f} ms, "
        f"recompute (prefill on the {rtx.name}) >= {prefill_s * 1e3:,.0f} ms",
        f"cpu_offload_gb={OFFLOAD_GIB}: every step >= {step_s * 1e3:.1f} ms more over {pcie4.name} "
        f"(the batch-1 decode floor is {floor_s * 1e3:.2f} ms)",
    ]


def main() -> None:
    model = load_model(MODEL)
    for block in (
        kv_per_sequence_table(model),
        fit_table(),
        decode_table(),
        attention_table(model),
        offload_lines(model),
    ):
        print("\n".join(block))
        print()


if __name__ == "__main__":
    main()
