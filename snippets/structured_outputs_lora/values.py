"""Figures the structured outputs and multi-LoRA lesson quotes in its prose, computed here.

Pages refer to them as {{ structured_outputs_lora.<name> }}; coursesite.values fills them in.
Run `python snippets/structured_outputs_lora/values.py` to list every name and its value.
"""

from core.formats import checkpoint_format
from core.gpus import load_gpu
from core.models import kv_bytes_per_token, load_model
from core.reference import AWQ_MODEL
from core.roofline import tpot_bound
from structured_outputs_lora.lab_tolerances import CONSTRAINED_TPOT_RATIO, LORA_TPOT_RATIO
from structured_outputs_lora.lora import (
    ACTIVE,
    ALL_MODULES,
    BATCH,
    CONTEXT,
    GPU_KEY,
    LAB_MODULES,
    LAB_RANK,
    MAX_LORA_RANK,
    MAX_LORAS,
    adapter_bytes,
    adapter_params,
    reserved_bytes,
    step_with_adapters,
)
from structured_outputs_lora.mask import (
    BATCHES,
    SERIAL_FILL_UP_TO,
    WORD_BITS,
    bitmask_row_bytes,
    break_even_fill_s,
    mask_gpu_bytes,
)
from structured_outputs_lora.mask import CONTEXT as MASK_CONTEXT

# labs/structured_outputs_lora/structured_lora.py's defaults (tests/test_structured_outputs_lora.py
# ties them): requests per scene, prompt tokens, adapters (max_loras) at the lab's rank
LAB_REQUESTS, LAB_PROMPT, LAB_ADAPTERS = 8, 64, 2

# Transfer question: another model and GPU, a larger rank and more slots.
T_MODEL, T_GPU, T_RANK, T_LORAS, T_BATCH = "llama-3.1-8b-instruct", "h100_sxm", 64, 8, 256


def values() -> dict[str, str]:
    model = load_model(AWQ_MODEL)
    fmt = checkpoint_format(model)
    gpu = load_gpu(GPU_KEY)
    row = bitmask_row_bytes(model.vocab_size)
    small, *_, large = BATCHES

    def mask_floor(batch: int) -> float:
        return tpot_bound(gpu, model, MASK_CONTEXT, fmt, batch).seconds

    def mask_share(batch: int) -> float:
        return mask_gpu_bytes(model.vocab_size, batch) / gpu.bandwidth_bytes / mask_floor(batch)

    mid_loras = MAX_LORAS[len(MAX_LORAS) // 2]
    reserved = reserved_bytes(model, mid_loras, MAX_LORA_RANK)
    base = step_with_adapters(gpu, model, fmt, 0, MAX_LORA_RANK).seconds
    most = ACTIVE[-1]
    with_most = step_with_adapters(gpu, model, fmt, most, MAX_LORA_RANK).seconds
    full = adapter_bytes(model, MAX_LORA_RANK)

    # the lab's default run: every step's context is at least the prompt
    lab_floor = tpot_bound(gpu, model, LAB_PROMPT, fmt, LAB_REQUESTS).seconds
    lab_mask_s = mask_gpu_bytes(model.vocab_size, LAB_REQUESTS) / gpu.bandwidth_bytes
    lab_with = step_with_adapters(
        gpu, model, fmt, LAB_ADAPTERS, LAB_RANK, batch=LAB_REQUESTS, context=LAB_PROMPT
    ).seconds

    t_model = load_model(T_MODEL)
    t_fmt = checkpoint_format(t_model)
    t_gpu = load_gpu(T_GPU)
    t_reserved = reserved_bytes(t_model, T_LORAS, T_RANK)
    t_base = step_with_adapters(t_gpu, t_model, t_fmt, 0, T_RANK).seconds
    t_most = step_with_adapters(t_gpu, t_model, t_fmt, T_LORAS, T_RANK).seconds
    t_row = bitmask_row_bytes(t_model.vocab_size)
    return {
        "lab_constrained_ratio": f"{CONSTRAINED_TPOT_RATIO:g}",
        "lab_lora_ratio": f"{LORA_TPOT_RATIO:g}",
        "awq_model_name": model.name,  # the GPU and layers: kv_cache.gpu_name, kv_cache.layers
        # the token bitmask
        "vocab_size": f"{model.vocab_size:,}",
        "mask_words": f"{-(-model.vocab_size // WORD_BITS):,}",
        "mask_row_bytes": f"{row:,}",
        "mask_context": f"{MASK_CONTEXT:,}",
        "mask_small_batch": f"{small}",
        "mask_large_batch": f"{large}",
        "mask_large_kb": f"{large * row / 1e3:,.0f}",
        "mask_large_floor_ms": f"{mask_floor(large) * 1e3:.1f}",
        "mask_large_share": f"{mask_share(large):.1%}",
        "mask_small_even_ms": f"{break_even_fill_s(mask_floor(small), small) * 1e3:.1f}",
        "mask_large_even_us": f"{break_even_fill_s(mask_floor(large), large) * 1e6:.0f}",
        "serial_fill_up_to": f"{SERIAL_FILL_UP_TO}",
        # LoRA bytes and slots
        "all_modules": f"{len(ALL_MODULES)}",
        "lab_rank": f"{LAB_RANK}",
        "lab_modules": " / ".join(LAB_MODULES),
        "lab_adapter_params": f"{adapter_params(model, LAB_RANK, LAB_MODULES):,}",
        "lab_adapter_mb": f"{adapter_bytes(model, LAB_RANK, LAB_MODULES) / 1e6:.1f}",
        "max_lora_rank": f"{MAX_LORA_RANK}",
        "full_adapter_mb": f"{full / 1e6:.1f}",
        "full_over_lab": f"{full / adapter_bytes(model, LAB_RANK, LAB_MODULES):.0f}",
        "mid_loras": f"{mid_loras}",
        "mid_reserved_mb": f"{reserved / 1e6:.0f}",
        "mid_reserved_tokens": f"{reserved / kv_bytes_per_token(model):,.0f}",
        # LoRA per step
        "step_batch": f"{BATCH}",
        "step_context": f"{CONTEXT:,}",
        "step_floor_ms": f"{base * 1e3:.2f}",
        "step_most": f"{most}",
        "step_most_mb": f"{most * full / 1e6:.0f}",
        "step_most_ms": f"{with_most * 1e3:.2f}",
        "step_most_added": f"{with_most / base - 1:.1%}",
        # the lab
        "lab_requests": f"{LAB_REQUESTS}",
        "lab_prompt_tokens": f"{LAB_PROMPT}",
        "lab_floor_ms": f"{lab_floor * 1e3:.2f}",
        "lab_mask_share": f"{lab_mask_s / lab_floor:.2%}",
        "lab_reserved_mb": f"{reserved_bytes(model, LAB_ADAPTERS, LAB_RANK) / 1e6:.1f}",
        "lab_lora_added": f"{lab_with / lab_floor - 1:.1%}",
        # self-test
        "t_model": t_model.name,
        "t_gpu": t_gpu.name,
        "t_rank": f"{T_RANK}",
        "t_loras": f"{T_LORAS}",
        "t_adapter_mb": f"{adapter_bytes(t_model, T_RANK) / 1e6:.0f}",
        "t_reserved_gb": f"{t_reserved / 1e9:.2f}",
        "t_reserved_tokens": f"{t_reserved / kv_bytes_per_token(t_model):,.0f}",
        "t_floor_ms": f"{t_base * 1e3:.2f}",
        "t_most_ms": f"{t_most * 1e3:.2f}",
        "t_most_added": f"{t_most / t_base - 1:.1%}",
        "t_vocab": f"{t_model.vocab_size:,}",
        "t_batch": f"{T_BATCH}",
        "t_mask_mb": f"{T_BATCH * t_row / 1e6:.2f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
