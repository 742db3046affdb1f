"""Bytes of Qwen2.5-7B-Instruct's weights in BF16, FP8 and AWQ 4-bit, against the published files.

Run it: python snippets/transformer_infra/weight_bytes.py
"""

import sys
from dataclasses import dataclass
from pathlib import Path

if "__file__" in globals():  # run as a file; the site build already has snippets/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specs.models import ModelSpec, load_model

# Checkpoint shard sizes as the Hugging Face model repos list them (GB = 1e9 bytes).
PUBLISHED_SHARDS_GB = {
    "qwen2.5-7b-instruct": (3.95, 3.86, 3.86, 3.56),  # Qwen/Qwen2.5-7B-Instruct, BF16
    "qwen2.5-7b-instruct-awq": (4, 1.57),  # Qwen/Qwen2.5-7B-Instruct-AWQ
}


@dataclass(frozen=True)
class WeightFormat:
    """How the decoder layers' linear weights are stored; everything else stays 16-bit."""

    name: str
    bits: int  # per weight of the 7 linear matrices in every decoder layer
    group_size: int | None = None  # weights that share one scale (and zero); None: no groups
    zero_point: bool = False  # a 4-bit zero per group besides the scale (asymmetric)
    scale_bytes: int = 2  # one FP16 scale per group
    tensor_scale_bytes: int = 0  # one scale per matrix (FP8: an FP32 number)
    other_bytes: int = 2  # embed_tokens, lm_head, norms and biases: FP16/BF16

    def __post_init__(self) -> None:
        if self.bits not in (4, 8, 16):
            raise ValueError(f"bits must be 4, 8 or 16, got {self.bits}")
        if self.group_size is not None and self.group_size <= 0:
            raise ValueError(f"group_size must be positive, got {self.group_size}")
        if self.zero_point and self.group_size is None:
            raise ValueError("a zero point is stored per group: set group_size")

    @classmethod
    def from_quantization(cls, name: str, q: dict) -> "WeightFormat":
        """From a model's quantization block (the AWQ JSON's bits, group_size, zero_point)."""
        return cls(name, bits=q["bits"], group_size=q["group_size"], zero_point=q["zero_point"])


BF16 = WeightFormat("BF16", bits=16)
FP8 = WeightFormat("FP8", bits=8, tensor_scale_bytes=4)


def linear_shapes(spec: ModelSpec) -> list[tuple[int, int]]:
    """(in_features, out_features) of q, k, v, o, gate, up, down in every decoder layer."""
    h, kv, ff = spec.hidden_size, spec.kv_dim, spec.intermediate_size
    q = spec.num_heads * spec.head_dim
    one_layer = [(h, q), (h, kv), (h, kv), (q, h), (h, ff), (h, ff), (ff, h)]
    return one_layer * spec.num_layers


def weight_bytes(spec: ModelSpec, fmt: WeightFormat) -> dict[str, int]:
    """Exact bytes of every part of the checkpoint, by how that part is stored."""
    shapes = linear_shapes(spec)
    groups = 0
    if fmt.group_size is not None:
        for i, _ in shapes:
            if i % fmt.group_size:
                raise ValueError(
                    f"in_features {i} is not a multiple of group_size {fmt.group_size}"
                )
        groups = sum(i // fmt.group_size * o for i, o in shapes)  # a group: g inputs of one output
    h, kv = spec.hidden_size, spec.kv_dim
    embeddings = spec.vocab_size * h * (1 if spec.tie_word_embeddings else 2)
    norms = spec.num_layers * 2 * h + h
    biases = spec.num_layers * (spec.num_heads * spec.head_dim + 2 * kv) * spec.attention_qkv_bias
    return {
        "linear weights": sum(i * o for i, o in shapes) * fmt.bits // 8,
        "group scales": groups * fmt.scale_bytes,
        "group zeros": groups * 4 // 8 if fmt.zero_point else 0,  # 4-bit zeros, packed
        "tensor scales": len(shapes) * fmt.tensor_scale_bytes,
        "embed_tokens + lm_head": embeddings * fmt.other_bytes,
        "norms + biases": (norms + biases) * fmt.other_bytes,
    }


def total_bytes(spec: ModelSpec, fmt: WeightFormat) -> int:
    return sum(weight_bytes(spec, fmt).values())


def bits_per_linear_weight(spec: ModelSpec, fmt: WeightFormat) -> float:
    """Storage of the quantized matrices, their scales and zeros included, per weight."""
    parts = weight_bytes(spec, fmt)
    stored = sum(
        parts[p] for p in ("linear weights", "group scales", "group zeros", "tensor scales")
    )
    return 8 * stored / sum(i * o for i, o in linear_shapes(spec))


def awq_format() -> WeightFormat:
    """The AWQ checkpoint's format, read from its model JSON (bits, group size, zero point)."""
    q = load_model("qwen2.5-7b-instruct-awq").quantization
    return WeightFormat.from_quantization(f"AWQ {q['bits']}-bit g{q['group_size']}", q)


def rows() -> list[tuple[WeightFormat, int, tuple[float, ...] | None]]:
    """(format, exact bytes, published shard sizes or None) for BF16, FP8 and AWQ."""
    spec = load_model("qwen2.5-7b-instruct")
    return [
        (BF16, total_bytes(spec, BF16), PUBLISHED_SHARDS_GB["qwen2.5-7b-instruct"]),
        (FP8, total_bytes(spec, FP8), None),  # no official FP8 checkpoint to compare with
        (
            awq_format(),
            total_bytes(spec, awq_format()),
            PUBLISHED_SHARDS_GB["qwen2.5-7b-instruct-awq"],
        ),
    ]


def main() -> None:
    spec = load_model("qwen2.5-7b-instruct")
    print(f"{spec.name}, {spec.params:,} parameters\n")
    print(f"{'format':<16}{'bytes':>16}{'GB':>8}{'GiB':>8}{'bits/param':>12}   published, GB")
    for fmt, n, shards in rows():
        published = (
            f"{sum(shards):.2f} = " + " + ".join(f"{s:g}" for s in shards) if shards else "-"
        )
        print(
            f"{fmt.name:<16}{n:>16,}{n / 1e9:>8.2f}{n / 2**30:>8.2f}"
            f"{8 * n / spec.params:>12.2f}   {published}"
        )
    awq = awq_format()
    parts = weight_bytes(spec, awq)
    print(f"\n{awq.name}, part by part:")
    for part, b in parts.items():
        if b:
            print(f"  {part:<24}{b:>16,}{b / sum(parts.values()):>8.1%}")
    bits = bits_per_linear_weight(spec, awq)
    print(f"bits per quantized weight, scales and zeros included: {bits:.3f}")


if __name__ == "__main__":
    main()
