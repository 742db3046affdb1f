"""Figures the PagedAttention lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ paged_attention.<name> }}; coursesite.values fills them in.
Run `python snippets/paged_attention/values.py` to list every name and its value.
"""

from core.formats import BF16, resident_weight_bytes
from core.gpus import GIB, load_gpu
from core.memory import MemoryBudget
from core.models import kv_bytes_per_token, load_model
from paged_attention.engine_capacity import (
    EXAMPLE_MAX_MODEL_LENS,
    engine_capacity,
    example_kv_bytes,
    page_bytes,
)
from paged_attention.sequences import (
    EXAMPLE_OUTPUT,
    EXAMPLE_PROMPT,
    MAX_NUM_SEQS,
    REQUEST_LENGTHS,
    Pool,
    rtx_4090_awq_pool,
)

# Self-test: vLLM started with an explicit KV budget.
QUIZ_KV_GIB, QUIZ_BLOCK, QUIZ_MAX_LEN = 4, 16, 8192
# CUDA reports a few hundred MiB less than nvidia-smi's total (the driver keeps it); vLLM's
# request_memory budgets from CUDA's total. Illustrative size of that gap on an RTX 4090
# (assumed, like the runtime reserve; not a measurement of this course).
CUDA_SHORTFALL_GIB = 0.3
# Transfer: another model on another card, the same request length.
TRANSFER_MODEL, TRANSFER_GPU = "llama-3.1-8b-instruct", "l40s"


def values() -> dict[str, str]:
    qwen = load_model("qwen2.5-7b-instruct")
    kappa = kv_bytes_per_token(qwen)
    pool = rtx_4090_awq_pool()
    cuda_pool = rtx_4090_awq_pool(CUDA_SHORTFALL_GIB * GIB)
    s = pool.block_size
    n = EXAMPLE_PROMPT + EXAMPLE_OUTPUT
    short_len = REQUEST_LENGTHS[0]  # a short chat turn
    kv_bytes = example_kv_bytes()
    engine = engine_capacity(qwen, kv_bytes, s, pool.max_model_len)
    odd_len = EXAMPLE_MAX_MODEL_LENS[1]
    engine_odd = engine_capacity(qwen, kv_bytes, s, odd_len)
    quiz = engine_capacity(qwen, QUIZ_KV_GIB * GIB, QUIZ_BLOCK, QUIZ_MAX_LEN)
    # transfer: Llama-3.1-8B-Instruct, BF16 weights, on an L40S
    llama, gpu = load_model(TRANSFER_MODEL), load_gpu(TRANSFER_GPU)
    t_budget = MemoryBudget.for_gpu(gpu)
    t_weights = resident_weight_bytes(llama, BF16)
    t_kappa = kv_bytes_per_token(llama)
    t_pool = Pool(
        t_budget.tokens(t_weights, t_kappa), t_budget.block_size, llama.max_position_embeddings
    )
    return {
        # blocks
        "page_bytes": f"{page_bytes(qwen, s):,}",
        "page_kib": f"{page_bytes(qwen, s) / 2**10:g}",
        "block_bytes": f"{s * kappa:,.0f}",
        "block_kib": f"{s * kappa / 2**10:g}",
        "layers_times_page": f"{qwen.num_layers} × {page_bytes(qwen, s):,}",
        # the example request on the 4090 pool
        "req_prompt": f"{EXAMPLE_PROMPT:,}",
        "req_output": f"{EXAMPLE_OUTPUT}",
        "req_len": f"{n:,}",
        "req_blocks": f"{pool.blocks(n)}",
        "req_waste": f"{pool.last_block_waste(n)}",
        "req_waste_share": f"{pool.last_block_waste(n) / (pool.blocks(n) * s):.1%}",
        "reserve_waste_share": f"{1 - n / pool.max_model_len:.1%}",
        "pool_blocks": f"{pool.usable_blocks + 1:,}",
        "usable_blocks": f"{pool.usable_blocks:,}",
        "paged_sequences": f"{pool.paged(n)}",
        "paged_to_reserved": f"{pool.paged(n) / pool.reserved(n):.1f}",
        # the same pool if CUDA's total is CUDA_SHORTFALL_GIB below nvidia-smi's
        "cuda_shortfall_gib": f"{CUDA_SHORTFALL_GIB:g}",
        "cuda_lost_blocks": f"{pool.usable_blocks - cuda_pool.usable_blocks:,}",
        "cuda_pool_blocks": f"{cuda_pool.usable_blocks + 1:,}",
        "cuda_paged_sequences": f"{cuda_pool.paged(n)}",
        "short_len": f"{short_len:,}",
        "short_paged_sequences": f"{pool.paged(short_len)}",
        "max_num_seqs": f"{MAX_NUM_SEQS}",
        "seqs_limit_len": f"{pool.max_num_seqs_limits_up_to():,}",
        # what vLLM would print for this pool
        "engine_kv_bytes": f"{kv_bytes:,}",
        "engine_num_blocks": f"{engine.num_blocks:,}",
        "engine_concurrency": f"{engine.max_concurrency:.2f}",
        "engine_usable_tokens": f"{engine.usable_tokens:,}",
        "odd_max_len": f"{odd_len:,}",
        "odd_blocks_per_request": f"{engine_odd.blocks_per_request}",
        "odd_engine_tokens": f"{engine_odd.kv_cache_tokens:,}",
        "odd_engine_concurrency": f"{engine_odd.max_concurrency:.2f}",
        # self-test: an explicit KV budget
        "quiz_kv_gib": f"{QUIZ_KV_GIB}",
        "quiz_block": f"{QUIZ_BLOCK}",
        "quiz_max_len": f"{QUIZ_MAX_LEN:,}",
        "quiz_kv_bytes": f"{QUIZ_KV_GIB * GIB:,}",
        "quiz_num_blocks": f"{quiz.num_blocks:,}",
        "quiz_engine_tokens": f"{quiz.kv_cache_tokens:,}",
        "quiz_concurrency": f"{quiz.max_concurrency:.2f}",
        # transfer
        "pa_transfer_model": llama.name,
        "pa_transfer_gpu": gpu.name,
        "pa_transfer_gpu_gb": f"{gpu.memory_gb:g}",
        "pa_transfer_gpu_mib": f"{gpu.memory_mib:,}",
        "pa_transfer_capacity_gib": f"{gpu.memory_bytes / GIB:.2f}",
        "pa_transfer_weights_gib": f"{t_weights / GIB:.2f}",
        "pa_transfer_kappa": f"{t_kappa:,.0f}",
        "pa_transfer_kv_gib": f"{t_budget.kv_bytes(t_weights) / GIB:.2f}",
        "pa_transfer_tokens": f"{t_pool.tokens:,}",
        "pa_transfer_blocks_per_request": f"{t_pool.blocks(n)}",
        "pa_transfer_paged": f"{t_pool.paged(n)}",
        "pa_transfer_running": f"{t_pool.running(n)}",
        "pa_transfer_reserved": f"{t_pool.reserved(n)}",
        "pa_transfer_max_len": f"{t_pool.max_model_len:,}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
