"""Roofline lower bounds on TTFT and TPOT for one request (batch 1), for every GPU in the table.

A forward pass can be no faster than its FLOPs at peak compute, nor than its bytes at peak
bandwidth: t >= max(FLOPs / peak FLOP/s, bytes / bandwidth). Anything left out (attention's own
FLOPs, activations, kernel launches, the scheduler) only adds time, so every figure is a LOWER
bound, never a prediction of what a server measures.

The FLOPs, bytes and bounds come from the course's core (core.forward, core.roofline): this
file only lays them out. Run it: python snippets/latency_metrics/bounds.py
"""

from core.display import ms  # milliseconds, three significant figures
from core.formats import resident_weight_bytes, streamed_weight_bytes
from core.gpus import GPU, load_gpus
from core.memory import fits
from core.models import ModelSpec, load_model
from core.reference import AWQ_MODEL, BF16_MODEL, PROMPT_LENGTHS
from core.roofline import tpot_bound, ttft_bound


def bounds_table(model: ModelSpec, gpus: dict[str, GPU], lengths=PROMPT_LENGTHS) -> list[str]:
    """A Markdown table: TTFT and TPOT lower bounds (ms) per GPU at each prompt length."""
    longest = max(lengths)
    head = ["GPU", f"fits (+KV {longest:,})"]
    head += [f"TTFT ≥ S={s:,}" for s in lengths] + [f"TPOT ≥ S={s:,}" for s in lengths]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * 2 * len(lengths)]
    for gpu in gpus.values():
        ttft = [ttft_bound(gpu, model, s) for s in lengths]
        cells = [gpu.name, f"{'✓' if fits(gpu, model, longest) else '✗'} {gpu.memory_gb:g} GB"]
        cells += [ms(b.seconds) + (" †" if b.memory_bound else "") for b in ttft]
        cells += [ms(tpot_bound(gpu, model, s).seconds) for s in lengths]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    gpus = load_gpus()
    for key in (BF16_MODEL, AWQ_MODEL):
        model = load_model(key)
        print(
            f"{model.name}: weights {resident_weight_bytes(model) / 1e9:.2f} GB, "
            f"read per decode step {streamed_weight_bytes(model) / 1e9:.2f} GB\n"
        )
        print("\n".join(bounds_table(model, gpus)) + "\n")
    print("All times in ms, batch 1. † the memory term is the larger one (memory-bound prefill).")


if __name__ == "__main__":
    main()
