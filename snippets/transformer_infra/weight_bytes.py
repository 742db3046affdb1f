"""Bytes of Qwen2.5-7B-Instruct's weights in BF16, FP8 and AWQ 4-bit, against the published files.

Run it: python snippets/transformer_infra/weight_bytes.py
"""

from core.formats import (
    BF16,
    FP8,
    WeightFormat,
    bits_per_linear_weight,
    checkpoint_format,
    resident_weight_bytes,
    weight_bytes_by_part,
)
from core.models import load_model, params

# Checkpoint shard sizes as the Hugging Face model repos list them (GB = 1e9 bytes).
PUBLISHED_SHARDS_GB = {
    "qwen2.5-7b-instruct": (3.95, 3.86, 3.86, 3.56),  # Qwen/Qwen2.5-7B-Instruct, BF16
    "qwen2.5-7b-instruct-awq": (4, 1.57),  # Qwen/Qwen2.5-7B-Instruct-AWQ
}


def awq_format() -> WeightFormat:
    """The AWQ checkpoint's format, read from its quantization config (bits, group, zero point)."""
    return checkpoint_format(load_model("qwen2.5-7b-instruct-awq"))


def rows() -> list[tuple[WeightFormat, int, tuple[float, ...] | None]]:
    """(format, exact bytes, published shard sizes or None) for BF16, FP8 and AWQ."""
    spec = load_model("qwen2.5-7b-instruct")
    return [
        (BF16, resident_weight_bytes(spec, BF16), PUBLISHED_SHARDS_GB["qwen2.5-7b-instruct"]),
        (FP8, resident_weight_bytes(spec, FP8), None),  # no official FP8 checkpoint to compare
        (
            awq_format(),
            resident_weight_bytes(spec, awq_format()),
            PUBLISHED_SHARDS_GB["qwen2.5-7b-instruct-awq"],
        ),
    ]


def main() -> None:
    spec = load_model("qwen2.5-7b-instruct")
    print(f"{spec.name}, {params(spec):,} parameters\n")
    print(f"{'format':<16}{'bytes':>16}{'GB':>8}{'GiB':>8}{'bits/param':>12}   published, GB")
    for fmt, n, shards in rows():
        published = (
            f"{sum(shards):.2f} = " + " + ".join(f"{s:g}" for s in shards) if shards else "-"
        )
        print(
            f"{fmt.name:<16}{n:>16,}{n / 1e9:>8.2f}{n / 2**30:>8.2f}"
            f"{8 * n / params(spec):>12.2f}   {published}"
        )
    awq = awq_format()
    parts = weight_bytes_by_part(spec, awq)
    print(f"\n{awq.name}, part by part:")
    for part, b in parts.items():
        if b:
            print(f"  {part:<24}{b:>16,}{b / sum(parts.values()):>8.1%}")
    bits = bits_per_linear_weight(spec, awq)
    print(f"bits per quantized weight, scales and zeros included: {bits:.3f}")


if __name__ == "__main__":
    main()
