"""How a checkpoint stores its weights, and the exact bytes that follow: BF16, FP8, AWQ.

Only the seven linear matrices of every decoder layer are quantized; the embedding table, the
lm_head, norms and biases stay 16-bit (true of Qwen's AWQ checkpoint and of FP8 W8A8 ones).
"""

from dataclasses import dataclass
from functools import cache

from core.models import ModelSpec, layer_linear_shapes, layer_matmul_params, param_breakdown

SIXTEEN_BIT = 2  # bytes of a BF16/FP16 value: unquantized weights, activations, the KV cache


@dataclass(frozen=True)
class WeightFormat:
    """How the decoder layers' linear weights are stored; everything else stays 16-bit."""

    name: str
    bits: int  # per weight of the 7 linear matrices in every decoder layer
    group_size: int | None = None  # weights that share one scale (and zero); None: no groups
    zero_point: bool = False  # a zero of `bits` bits per group besides the scale (asymmetric)
    scale_bytes: int = 2  # one FP16 scale per group
    tensor_scale_bytes: int = 0  # one scale per matrix (FP8: an FP32 number)
    activation_bits: int = 16  # 8: the matmuls run on 8-bit inputs too (FP8 W8A8); AWQ is W4A16

    def __post_init__(self) -> None:
        if self.bits not in (4, 8, 16):
            raise ValueError(f"bits must be 4, 8 or 16, got {self.bits}")
        if self.group_size is not None and self.group_size <= 0:
            raise ValueError(f"group_size must be positive, got {self.group_size}")
        if self.zero_point and self.group_size is None:
            raise ValueError("a zero point is stored per group: set group_size")

    @classmethod
    def from_quantization(cls, q: dict) -> "WeightFormat":
        """From a checkpoint's quantization config (AWQ: bits, group_size, zero_point)."""
        method = q.get("method") or q.get("quant_method")
        if method != "awq":
            raise ValueError(f"no byte layout for quantization method {method!r} (known: awq)")
        name = f"AWQ {q['bits']}-bit g{q['group_size']}"
        return cls(name, bits=q["bits"], group_size=q["group_size"], zero_point=q["zero_point"])


BF16 = WeightFormat("BF16", bits=16)
FP8 = WeightFormat("FP8", bits=8, tensor_scale_bytes=4, activation_bits=8)


def checkpoint_format(model: ModelSpec) -> WeightFormat:
    """The format the model's own checkpoint uses: its quantization config, else BF16."""
    return (
        BF16 if model.quantization is None else WeightFormat.from_quantization(model.quantization)
    )


def matrix_bytes(fmt: WeightFormat, in_features: int, out_features: int) -> dict[str, int]:
    """One linear matrix as stored: packed weights, per-group scales and zeros, tensor scale.

    AWQ's GEMM layout (vLLM AWQLinearMethod): qweight int32 [in, out / 8], qzeros int32
    [in / group, out / 8], scales fp16 [in / group, out]: a group is `group_size` inputs of one
    output.
    """
    groups = 0
    if fmt.group_size is not None:
        if in_features % fmt.group_size:
            raise ValueError(f"in_features {in_features} is not a multiple of {fmt.group_size}")
        groups = in_features // fmt.group_size * out_features
    return {
        "weights": in_features * out_features * fmt.bits // 8,
        "scales": groups * fmt.scale_bytes,
        "zeros": groups * fmt.bits // 8 if fmt.zero_point else 0,
        "tensor scale": fmt.tensor_scale_bytes,
    }


def weight_bytes_by_part(model: ModelSpec, fmt: WeightFormat | None = None) -> dict[str, int]:
    """Exact bytes of every part of the weights in GPU memory, by how that part is stored."""
    return dict(_weight_bytes_by_part(model, fmt or checkpoint_format(model)))  # a copy


@cache  # simulations ask at every step; the answer depends on the model and format alone
def _weight_bytes_by_part(model: ModelSpec, fmt: WeightFormat) -> dict[str, int]:
    linear = {"weights": 0, "scales": 0, "zeros": 0, "tensor scale": 0}
    for _, i, o in layer_linear_shapes(model):
        for part, n in matrix_bytes(fmt, i, o).items():
            linear[part] += n * model.num_layers
    parts = param_breakdown(model)
    small = parts["attention"] + parts["mlp"] + parts["norms"] - layer_matmul_params(model)
    return {
        "linear weights": linear["weights"],
        "group scales": linear["scales"],
        "group zeros": linear["zeros"],
        "tensor scales": linear["tensor scale"],
        "embedding": parts["embedding"] * SIXTEEN_BIT,
        "lm_head": parts["lm_head"] * SIXTEEN_BIT,
        "norms + biases": small * SIXTEEN_BIT,
    }


def resident_weight_bytes(model: ModelSpec, fmt: WeightFormat | None = None) -> int:
    """Bytes all weights occupy in GPU memory, the embedding table included."""
    return sum(_weight_bytes_by_part(model, fmt or checkpoint_format(model)).values())


def streamed_weight_bytes(model: ModelSpec, fmt: WeightFormat | None = None) -> int:
    """Weight bytes one forward pass must read at least: every layer and the lm_head in full,
    but of the input embedding table one row (a lookup, not a matrix multiply; the tokens of a
    batch may share rows, so one row is what a lower bound can count)."""
    fmt = fmt or checkpoint_format(model)
    parts = _weight_bytes_by_part(model, fmt)
    if model.tie_word_embeddings:  # the lm_head *is* the embedding table: read it all once
        return resident_weight_bytes(model, fmt)
    row = model.hidden_size * SIXTEEN_BIT
    return resident_weight_bytes(model, fmt) - parts["embedding"] + row


def bits_per_linear_weight(model: ModelSpec, fmt: WeightFormat | None = None) -> float:
    """Storage of the quantized matrices, scales and zeros included, per weight."""
    parts = weight_bytes_by_part(model, fmt)
    stored = sum(
        parts[p] for p in ("linear weights", "group scales", "group zeros", "tensor scales")
    )
    return 8 * stored / layer_matmul_params(model)
