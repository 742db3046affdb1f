"""Peak compute, memory bandwidth and ridge point of every GPU in snippets/core/gpus.toml.

The ridge point is where the roofline turns: I* = peak FLOP/s / bandwidth (Williams, Waterman and
Patterson, 2009). Work below it is memory-bound, above it compute-bound.

Run it: python snippets/roofline/ridge_table.py
"""

from core.gpus import GPU, load_gpus


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
