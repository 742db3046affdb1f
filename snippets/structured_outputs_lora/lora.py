"""Multi-LoRA on the course's model: an adapter's bytes, the slots vLLM reserves, and what the
adapters in a batch add to a decode step.

A LoRA adapter replaces W x by W x + B (A x) for a matrix W of d_in inputs and d_out outputs:
A is r x d_in, B is d_out x r, so it stores r (d_in + d_out) values per adapted matrix per layer.
vLLM 0.26.0 (enable_lora=True) wraps every linear layer of the decoder (unless target_modules
restricts them) and gives each one max_loras slots of A and B at max_lora_rank, allocated when
the model loads, so they come out of the KV cache's memory. A step's batch may mix up to
max_loras adapters; the batched kernels (Punica-style: lora_shrink, lora_expand) read each
active adapter's A and B, as stored in its slot at max_lora_rank, at least once per step: a
LOWER bound on the extra bytes.

Run it: python snippets/structured_outputs_lora/lora.py
"""

from core.formats import SIXTEEN_BIT, checkpoint_format
from core.forward import decode_bytes, decode_flops
from core.gpus import load_gpu
from core.models import ModelSpec, kv_bytes_per_token, layer_linear_shapes, load_model
from core.reference import AWQ_MODEL
from core.roofline import Bound, bound

GPU_KEY = "rtx_4090"
ALL_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
LAB_MODULES = ("q_proj", "v_proj")  # what the lab's random adapters adapt
LAB_RANK = 8
MAX_LORA_RANK = 16  # vLLM's default max_lora_rank
MAX_LORAS = (1, 4, 8)
CONTEXT, BATCH = 1024, 32  # the decode step the adapters are added to
ACTIVE = (0, 1, 2, 4)  # distinct adapters in that step's batch (at most max_loras)


def adapter_params(model: ModelSpec, rank: int, modules: tuple[str, ...] = ALL_MODULES) -> int:
    """r (d_in + d_out) for every adapted matrix of every decoder layer."""
    if rank < 1:
        raise ValueError(f"rank must be at least 1, got {rank}")
    shapes = {name: (i, o) for name, i, o in layer_linear_shapes(model)}
    unknown = sorted(set(modules) - set(shapes))
    if unknown:
        raise ValueError(f"no such matrix in a decoder layer: {unknown} (known: {list(shapes)})")
    per_layer = sum(rank * (shapes[m][0] + shapes[m][1]) for m in modules)
    return model.num_layers * per_layer


def adapter_bytes(
    model: ModelSpec,
    rank: int,
    modules: tuple[str, ...] = ALL_MODULES,
    value_bytes: float = SIXTEEN_BIT,  # lora_dtype "auto": the model's dtype
) -> float:
    return adapter_params(model, rank, modules) * value_bytes


def reserved_bytes(model: ModelSpec, max_loras: int, max_lora_rank: int) -> float:
    """The slots vLLM allocates at start-up: max_loras adapters at max_lora_rank, every module."""
    if max_loras < 1:
        raise ValueError(f"max_loras must be at least 1, got {max_loras}")
    return max_loras * adapter_bytes(model, max_lora_rank)


def step_with_adapters(
    gpu, model: ModelSpec, fmt, active: int, max_lora_rank: int, batch=BATCH, context=CONTEXT
) -> Bound:
    """The floor of a decode step of `batch` sequences at `context` cached tokens with `active`
    distinct adapters: their slots read once, and 2 r (d_in + d_out) more FLOPs per token per
    adapted matrix (every sequence is taken to have an adapter when any is active)."""
    if active < 0:
        raise ValueError(f"active adapters cannot be negative, got {active}")
    extra_bytes = active * adapter_bytes(model, max_lora_rank)
    extra_flops = 2 * adapter_params(model, max_lora_rank) * batch if active else 0
    nbytes = decode_bytes(model, context, fmt, batch) + extra_bytes
    return bound(gpu, decode_flops(model, batch) + extra_flops, nbytes, fmt)


def main() -> None:
    model = load_model(AWQ_MODEL)
    fmt = checkpoint_format(model)
    gpu = load_gpu(GPU_KEY)
    lab = adapter_bytes(model, LAB_RANK, LAB_MODULES)
    full = adapter_bytes(model, MAX_LORA_RANK)
    print(f"{model.name}: {model.num_layers} layers, 16-bit adapters (lora_dtype auto)")
    print(f"  rank {LAB_RANK} on {' and '.join(LAB_MODULES)}: {lab / 1e6:.1f} MB")
    print(f"  rank {MAX_LORA_RANK} on all {len(ALL_MODULES)} matrices: {full / 1e6:.1f} MB")

    kappa = kv_bytes_per_token(model)
    print(f"\nslots reserved at max_lora_rank {MAX_LORA_RANK} (KV cache given up, 16-bit KV)")
    for n in MAX_LORAS:
        reserved = reserved_bytes(model, n, MAX_LORA_RANK)
        print(f"  max_loras {n}: {reserved / 1e6:7.1f} MB = {reserved / kappa:7,.0f} KV tokens")

    base = step_with_adapters(gpu, model, fmt, 0, MAX_LORA_RANK).seconds
    print(f"\n{gpu.name}, {fmt.name}, decode step of {BATCH} sequences at {CONTEXT:,} tokens")
    print(f"{'adapters':>9} {'extra MB':>9} {'floor ms':>9} {'added':>7}")
    for active in ACTIVE:
        floor = step_with_adapters(gpu, model, fmt, active, MAX_LORA_RANK).seconds
        extra = active * full / 1e6
        print(f"{active:>9} {extra:9.1f} {floor * 1e3:9.2f} {floor / base - 1:7.1%}")


if __name__ == "__main__":
    main()
