"""Figures the KV-cache lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ kv_cache.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/kv_cache/values.py` to list every name and its value.
"""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make snippets/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kv_cache.cache_size import cache_bytes
from kv_cache.crossover import crossover_context
from kv_cache.fit_4090 import GIB, rtx_4090, scenarios
from kv_cache.kappa import as_mha, kappa
from specs import load_gpus
from specs.models import load_model

# Prose examples: a chat-sized context and a mid-sized batch.
EXAMPLE_CONTEXT = 4096
EXAMPLE_BATCH = 32


def values() -> dict[str, str]:
    qwen = load_model("qwen2.5-7b-instruct")
    llama = load_model("llama-3.1-8b-instruct")
    q72 = load_model("qwen2.5-72b-instruct")
    k, k_mha = kappa(qwen), kappa(as_mha(qwen))
    context = qwen.max_position_embeddings
    budget = rtx_4090()
    (_, bf16_w, _), (_, awq_w, _), _ = scenarios()
    bf16_tokens, awq_tokens = budget.tokens(bf16_w, k), budget.tokens(awq_w, k)
    mha_tokens = budget.tokens(awq_w, k_mha)
    llama_kv = cache_bytes(kappa(llama), llama.max_position_embeddings)
    return {
        # kappa from the config
        "model_name": qwen.name,
        "layers": f"{qwen.num_layers}",
        "heads": f"{qwen.num_heads}",
        "kv_heads": f"{qwen.num_kv_heads}",
        "head_dim": f"{qwen.head_dim}",
        "kv_dim": f"{qwen.kv_dim:,}",
        "kappa": f"{k:,.0f}",
        "kappa_kib": f"{k / 2**10:g}",
        "kappa_per_layer": f"{k / qwen.num_layers:,.0f}",
        "fp8_kappa": f"{kappa(qwen, 1):,.0f}",
        "context_len": f"{context:,}",
        "kv_context_gib": f"{cache_bytes(k, context) / GIB:.2f}",
        # GQA against MHA, and the other models
        "gqa_group": f"{qwen.num_heads // qwen.num_kv_heads}",
        "mha_kappa": f"{k_mha:,.0f}",
        "mha_kv_context_gib": f"{cache_bytes(k_mha, context) / GIB:.2f}",
        "llama_name": llama.name,
        "llama_kappa": f"{kappa(llama):,.0f}",
        "llama_context": f"{llama.max_position_embeddings:,}",
        "llama_kv_context_gib": f"{llama_kv / GIB:.2f}",
        "q72_name": q72.name,
        "q72_kappa": f"{kappa(q72):,.0f}",
        "q72_kv_context_gib": f"{cache_bytes(kappa(q72), q72.max_position_embeddings) / GIB:.2f}",
        # the batch table
        "example_context": f"{EXAMPLE_CONTEXT:,}",
        "example_batch": f"{EXAMPLE_BATCH}",
        "example_kv_gib": f"{cache_bytes(k, EXAMPLE_CONTEXT, EXAMPLE_BATCH) / GIB:.2f}",
        # one RTX 4090
        "gpu_name": load_gpus()["rtx_4090"].name,
        "gpu_gib": f"{budget.capacity_bytes / GIB:g}",
        "gpu_gb": f"{budget.capacity_bytes / 1e9:.2f}",
        "gib_gb_gap": f"{GIB / 1e9 - 1:.1%}",
        "utilization": f"{budget.utilization}",
        "usable_gib": f"{budget.capacity_bytes * budget.utilization / GIB:.2f}",
        "reserve_gib": f"{budget.reserve_bytes / GIB:g}",
        "block_size": f"{budget.block_size}",
        "bf16_weights_gib": f"{bf16_w / GIB:.2f}",
        "awq_weights_gib": f"{awq_w / GIB:.2f}",
        "bf16_kv_gib": f"{budget.kv_bytes(bf16_w) / GIB:.2f}",
        "awq_kv_gib": f"{budget.kv_bytes(awq_w) / GIB:.2f}",
        "bf16_weights_share": f"{bf16_w / (budget.capacity_bytes * budget.utilization):.0%}",
        "bf16_tokens": f"{bf16_tokens:,}",
        "awq_tokens": f"{awq_tokens:,}",
        "mha_tokens": f"{mha_tokens:,}",
        "bf16_sequences": f"{bf16_tokens // context}",
        "awq_sequences": f"{awq_tokens // context}",
        "mha_sequences": f"{mha_tokens // context}",
        "awq_to_bf16_tokens": f"{awq_tokens / bf16_tokens:.1f}",
        # KV bytes = weight bytes
        "bf16_crossover": f"{crossover_context(bf16_w, k):,.0f}",
        "awq_crossover": f"{crossover_context(awq_w, k):,.0f}",
        "bf16_crossover_batch": f"{crossover_context(bf16_w, k, EXAMPLE_BATCH):,.0f}",
        "awq_crossover_batch": f"{crossover_context(awq_w, k, EXAMPLE_BATCH):,.0f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
