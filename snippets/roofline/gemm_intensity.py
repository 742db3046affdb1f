"""Arithmetic intensity of one linear layer as the number of tokens T it processes at once grows.

y = x W with W of d_in x d_out: 2*T*d_in*d_out FLOPs; it reads W (d_in*d_out) and x (T*d_in) and
writes y (T*d_out), b bytes each. T is the prompt length in prefill, or the batch size in decode.
Change SHAPE or TOKENS and run it again: python snippets/roofline/gemm_intensity.py
"""

import math

from core.gpus import load_gpus

SHAPE = (3584, 18944)  # Qwen2.5-7B-Instruct up_proj: hidden x intermediate
BYTES = 2  # BF16
TOKENS = (1, 8, 32, 128, 512, 2048, 8192)
GPU_KEY = "rtx_4090"


def _check(d_in: int, d_out: int, b: float) -> None:
    if min(d_in, d_out) < 1 or b <= 0:
        raise ValueError(f"need d_in, d_out >= 1 and b > 0, got d_in={d_in}, d_out={d_out}, b={b}")


def gemm_intensity(tokens: int, d_in: int, d_out: int, b: float = BYTES) -> float:
    """FLOPs per byte of y = x W for `tokens` rows of x."""
    _check(d_in, d_out, b)
    if tokens < 1:
        raise ValueError(f"tokens must be >= 1, got {tokens}")
    return 2 * tokens * d_in * d_out / ((d_in * d_out + tokens * d_in + tokens * d_out) * b)


def intensity_limit(d_in: int, d_out: int, b: float = BYTES) -> float:
    """What the intensity approaches as tokens grow without bound:
    2 d_in d_out / ((d_in + d_out) b)."""
    _check(d_in, d_out, b)
    return 2 * d_in * d_out / ((d_in + d_out) * b)


def tokens_to_reach(ridge: float, d_in: int, d_out: int, b: float = BYTES) -> int | None:
    """Smallest whole T whose intensity reaches `ridge`; None if no T ever does."""
    _check(d_in, d_out, b)
    if ridge <= 0:
        raise ValueError(f"ridge point must be positive, got {ridge}")
    denominator = 2 * d_in * d_out - ridge * b * (d_in + d_out)
    if denominator <= 0:
        return None
    return max(1, math.ceil(ridge * d_in * d_out * b / denominator))


def main() -> None:
    gpus = load_gpus()
    gpu = gpus[GPU_KEY]
    d_in, d_out = SHAPE
    ridge = gpu.ridge_point
    print(
        f"y = x W, W {d_in} x {d_out}, {BYTES} bytes per value; {gpu.name} ridge point {ridge:.0f}"
    )
    print(f"{'tokens T':>9}  {'FLOP/byte':>10}  regime on the {gpu.name}")
    for t in TOKENS:
        i = gemm_intensity(t, d_in, d_out)
        print(f"{t:>9,}  {i:>10.1f}  {'compute-bound' if i >= ridge else 'memory-bound'}")
    print(f"limit as T grows: {intensity_limit(d_in, d_out):.0f} FLOP/byte")
    print("\ntokens needed to reach each GPU's ridge point:")
    for g in sorted(gpus.values(), key=lambda g: g.ridge_point):
        t = tokens_to_reach(g.ridge_point, d_in, d_out)
        reach = f"T >= {t:,}" if t else "never (above the limit)"
        print(f"  {g.name:<14} ridge {g.ridge_point:>4.0f}  {reach}")


if __name__ == "__main__":
    main()
