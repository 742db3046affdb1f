"""Peak compute, memory bandwidth and ridge point of every GPU in snippets/specs/gpus.toml.

The ridge point is where the roofline turns: I* = peak FLOP/s / bandwidth (Williams, Waterman and
Patterson, 2009). Work below it is memory-bound, above it compute-bound.

Run it: python snippets/roofline/ridge_table.py
"""

import sys
from pathlib import Path

if "__file__" in globals():  # run as a file; the site build already has snippets/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specs import GPU, load_gpus


def attainable_flops(gpu: GPU, intensity: float) -> float:
    """The roofline: min(peak FLOP/s, intensity x bandwidth), in FLOP/s."""
    if not intensity > 0:
        raise ValueError(f"arithmetic intensity must be positive, got {intensity!r}")
    return min(gpu.peak_flops, intensity * gpu.bandwidth_bytes)


def ridge_table(gpus: dict[str, GPU]) -> list[str]:
    """A Markdown table, one GPU per row, sorted by ridge point, with the source of its figures."""
    rows = [
        "| GPU | BF16 dense TFLOP/s | bandwidth GB/s | memory | ridge point FLOP/byte | source |",
        "|---|---:|---:|---|---:|---|",
    ]
    for gpu in sorted(gpus.values(), key=lambda g: g.ridge_point):
        rows.append(
            f"| {gpu.name} | {gpu.bf16_dense_tflops:g} | {gpu.memory_bandwidth_gbs:,.0f} "
            f"| {gpu.memory_gb:g} GB {gpu.memory_type} | {gpu.ridge_point:.0f} | {gpu.source} |"
        )
    return rows


def main() -> None:
    print("\n".join(ridge_table(load_gpus())))


if __name__ == "__main__":
    main()
