"""The structured-output mask of one decode step: its bytes, and when its cost shows.

In every step, vLLM 0.26.0 fills one row of a token bitmask on the CPU for each sequence with a
constraint (one bit per vocabulary entry, packed in int32 words: xgrammar's
allocate_token_bitmask) while the GPU runs the forward pass (EngineCore.step); the rows then go
to the GPU, which masks the logits before sampling (apply_grammar_bitmask). The GPU's part is a
LOWER bound here: the bitmask rows read and each logit row read and written once. The CPU's part
depends on the grammar, so it is not computed: the break-even is the fill time per sequence at
which filling B rows one after another (vLLM fills them serially up to 128 constrained
sequences) takes as long as the step's floor, so that the GPU would wait for the mask.

Run it: python snippets/structured_outputs_lora/mask.py
"""

from core.formats import SIXTEEN_BIT, checkpoint_format
from core.gpus import load_gpu
from core.models import load_model
from core.reference import AWQ_MODEL
from core.roofline import tpot_bound

GPU_KEY = "rtx_4090"
CONTEXT = 1024  # cached tokens per sequence
BATCHES = (1, 8, 32, 128)  # constrained sequences in the step (all of the batch)
WORD_BITS = 32  # the mask is packed into int32 words
WORD_BYTES = 4
SERIAL_FILL_UP_TO = 128  # StructuredOutputManager.fill_bitmask_parallel_threshold


def bitmask_row_bytes(vocab_size: int) -> int:
    """One sequence's mask for one step: a bit per token id, rounded up to whole int32 words."""
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be at least 1, got {vocab_size}")
    return -(-vocab_size // WORD_BITS) * WORD_BYTES


def mask_gpu_bytes(vocab_size: int, batch: int, logit_bytes: int = SIXTEEN_BIT) -> int:
    """Bytes the GPU moves to apply the mask: each row of the bitmask read, each row of logits
    (model dtype) read and written back."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    return batch * (bitmask_row_bytes(vocab_size) + 2 * vocab_size * logit_bytes)


def break_even_fill_s(step_floor_s: float, batch: int) -> float:
    """The CPU time per sequence at which a serial fill of `batch` rows lasts the step's floor."""
    return step_floor_s / batch


def main() -> None:
    model = load_model(AWQ_MODEL)
    fmt = checkpoint_format(model)
    gpu = load_gpu(GPU_KEY)
    row = bitmask_row_bytes(model.vocab_size)
    print(
        f"{model.name}: vocabulary {model.vocab_size:,} ids -> {row:,} bytes of bitmask per "
        f"sequence per step ({-(-model.vocab_size // WORD_BITS):,} int32 words)"
    )
    print(f"\n{gpu.name}, {fmt.name} weights, context {CONTEXT:,}, every sequence constrained")
    print(
        f"{'batch':>6} {'floor ms':>9} {'bitmask KB':>11} {'mask on GPU us':>15} "
        f"{'share':>7} {'break-even fill us/seq':>23}"
    )
    for batch in BATCHES:
        floor = tpot_bound(gpu, model, CONTEXT, fmt, batch).seconds
        gpu_s = mask_gpu_bytes(model.vocab_size, batch) / gpu.bandwidth_bytes
        print(
            f"{batch:>6} {floor * 1e3:9.2f} {batch * row / 1e3:11.1f} {gpu_s * 1e6:15.1f} "
            f"{gpu_s / floor:7.2%} {break_even_fill_s(floor, batch) * 1e6:23.0f}"
        )


if __name__ == "__main__":
    main()
