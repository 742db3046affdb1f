"""Figures the KV-cache lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ kv_cache.<name> }}; coursesite.values fills them in.
Run `python snippets/kv_cache/values.py` to list every name and its value.
"""

import re

from core.formats import streamed_weight_bytes
from core.forward import kv_cache_bytes
from core.gpus import GIB, load_gpu
from core.models import kv_bytes_per_token as kappa
from core.models import load_model
from core.reference import AWQ_MODEL, PROMPT_LENGTHS
from kv_cache.crossover import crossover_context
from kv_cache.fit_4090 import rtx_4090, scenarios

# Prose examples: a chat-sized context and a mid-sized batch.
EXAMPLE_CONTEXT = 4096
EXAMPLE_BATCH = 32
# Self-test 2: the KV an AWQ decode step reads at the course's middle prompt length.
AWQ_QUIZ_CONTEXT = PROMPT_LENGTHS[1]


def values() -> dict[str, str]:
    qwen = load_model("qwen2.5-7b-instruct")
    llama = load_model("llama-3.1-8b-instruct")
    q72 = load_model("qwen2.5-72b-instruct")
    k, k_mha = kappa(qwen), kappa(qwen.as_mha())
    context = qwen.max_position_embeddings
    gpu = load_gpu("rtx_4090")
    budget = rtx_4090()
    (_, bf16_w, _), (_, awq_w, _), _ = scenarios()
    bf16_read, awq_read = streamed_weight_bytes(qwen), streamed_weight_bytes(load_model(AWQ_MODEL))
    bf16_tokens, awq_tokens = budget.tokens(bf16_w, k), budget.tokens(awq_w, k)
    mha_tokens = budget.tokens(awq_w, k_mha)
    llama_kv = kv_cache_bytes(llama, llama.max_position_embeddings)
    quiz_kv = kv_cache_bytes(qwen, AWQ_QUIZ_CONTEXT)
    awq_step = streamed_weight_bytes(load_model(AWQ_MODEL)) + quiz_kv
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
        "kv_context_gib": f"{kv_cache_bytes(qwen, context) / GIB:.2f}",
        # GQA against MHA, and the other models
        "gqa_group": f"{qwen.num_heads // qwen.num_kv_heads}",
        "mha_kappa": f"{k_mha:,.0f}",
        "mha_kv_context_gib": f"{kv_cache_bytes(qwen.as_mha(), context) / GIB:.2f}",
        "llama_name": llama.name,
        "llama_kappa": f"{kappa(llama):,.0f}",
        "llama_context": f"{llama.max_position_embeddings:,}",
        "llama_kv_context_gib": f"{llama_kv / GIB:.2f}",
        "q72_name": q72.name,
        "q72_kappa": f"{kappa(q72):,.0f}",
        "q72_kv_context_gib": f"{kv_cache_bytes(q72, q72.max_position_embeddings) / GIB:.2f}",
        # the batch table
        "example_context": f"{EXAMPLE_CONTEXT:,}",
        "example_batch": f"{EXAMPLE_BATCH}",
        "example_kv_gib": f"{kv_cache_bytes(qwen, EXAMPLE_CONTEXT, EXAMPLE_BATCH) / GIB:.2f}",
        # one RTX 4090
        "gpu_name": gpu.name,
        "gpu_marketed_gb": f"{gpu.memory_gb:g}",
        "gpu_mib": f"{gpu.memory_mib:,}",
        "gpu_memory_url": "https://" + re.search(r"github\.com/\S+", gpu.memory_source)[0],
        "gpu_gib": f"{budget.capacity_bytes / GIB:.2f}",
        "gpu_gb": f"{budget.capacity_bytes / 1e9:.2f}",
        "gib_gb_gap": f"{GIB / 1e9 - 1:.1%}",
        "utilization": f"{budget.utilization}",
        "usable_gib": f"{budget.usable_bytes / GIB:.2f}",
        "reserve_gib": f"{budget.reserve_bytes / GIB:g}",
        "block_size": f"{budget.block_size}",
        "bf16_weights_gib": f"{bf16_w / GIB:.2f}",
        "awq_weights_gib": f"{awq_w / GIB:.2f}",
        "bf16_kv_gib": f"{budget.kv_bytes(bf16_w) / GIB:.2f}",
        "awq_kv_gib": f"{budget.kv_bytes(awq_w) / GIB:.2f}",
        "bf16_weights_share": f"{bf16_w / budget.usable_bytes:.0%}",
        "bf16_tokens": f"{bf16_tokens:,}",
        "awq_tokens": f"{awq_tokens:,}",
        "mha_tokens": f"{mha_tokens:,}",
        "bf16_sequences": f"{bf16_tokens // context}",
        "awq_sequences": f"{awq_tokens // context}",
        "mha_sequences": f"{mha_tokens // context}",
        "awq_to_bf16_tokens": f"{awq_tokens / bf16_tokens:.1f}",
        # self-test 2: how little of an AWQ decode step's bytes the KV is
        "awq_quiz_context": f"{AWQ_QUIZ_CONTEXT:,}",
        "awq_quiz_kv_mb": f"{quiz_kv / 1e6:.0f}",
        "awq_quiz_step_gb": f"{awq_step / 1e9:.2f}",
        "awq_quiz_kv_share": f"{quiz_kv / awq_step:.1%}",
        # KV bytes = weight bytes
        "bf16_crossover": f"{crossover_context(bf16_w, k):,.0f}",
        "awq_crossover": f"{crossover_context(awq_w, k):,.0f}",
        "bf16_crossover_batch": f"{crossover_context(bf16_w, k, EXAMPLE_BATCH):,.0f}",
        "awq_crossover_batch": f"{crossover_context(awq_w, k, EXAMPLE_BATCH):,.0f}",
        # the same for the bytes a decode step reads (the embedding table is looked up, not read)
        "bf16_read_crossover_batch": f"{crossover_context(bf16_read, k, EXAMPLE_BATCH):,.0f}",
        "awq_read_crossover_batch": f"{crossover_context(awq_read, k, EXAMPLE_BATCH):,.0f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
