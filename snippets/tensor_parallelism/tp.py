"""Tensor parallelism for decode: bytes exchanged per token, ring all-reduce time, and the TPOT
floor of a big model on 1, 2, 4 and 8 GPUs of two kinds.

Each GPU reads its 1/t of the weights and of the KV cache (core.parallel.tp_decode_step), then
waits for 2L + 1 all-reduces and one all-gather of the logits. Bandwidth terms are lower bounds;
the per-step latency of a collective is an assumption (core.parallel.ASSUMED_STEP_LATENCY_S).
Stdlib + the core only: it also runs in the browser.
"""

from core.formats import checkpoint_format
from core.gpus import load_gpu
from core.links import load_link
from core.models import load_model
from core.parallel import (
    ASSUMED_STEP_LATENCY_S,
    allreduce_bytes_per_token,
    embedding_allreduce_bytes,
    group_misaligned,
    logits_allgather_bytes,
    ring_allreduce_seconds,
    tp_decode_step,
    tp_kv_tokens,
)

SMALL, BIG, BIG_AWQ = "qwen2.5-7b-instruct", "qwen2.5-72b-instruct", "qwen2.5-72b-instruct-awq"
# (GPU, the link its GPUs talk over): the RTX 4090 has no NVLink, so PCIe 4.0 x16
SETUPS = (("h100_sxm", "nvlink4_h100"), ("rtx_4090", "pcie4_x16"))
TP_SIZES = (1, 2, 4, 8)
CONTEXT = 1024  # cached tokens per sequence in the decode step
BATCH = 1


def rows(models: tuple[str, ...] = (BIG, BIG_AWQ), batch: int = BATCH, context: int = CONTEXT):
    """(GPU, link, format, t, step or None when it cannot run, KV tokens, why not or None)."""
    out = []
    for gpu_key, link_key in SETUPS:
        gpu, link = load_gpu(gpu_key), load_link(link_key)
        for model in map(load_model, models):
            fmt = checkpoint_format(model)
            for t in TP_SIZES:
                tokens = tp_kv_tokens(gpu, model, t, fmt)
                why = group_misaligned(model, t, fmt)
                if why is None and tokens < context:
                    why = "does not fit"
                step = tp_decode_step(gpu, model, t, link, fmt=fmt, batch=batch, context=context)
                out.append((gpu, link, fmt, t, None if why else step, tokens, why))
    return out


def main() -> None:
    small = load_model(SMALL)
    print(f"{small.name}, BF16, bytes per token:")
    print(f"  decoder layers, 2*L*d*b : {allreduce_bytes_per_token(small):>9,.0f}")
    print(f"  embedding all-reduce    : {embedding_allreduce_bytes(small):>9,.0f}")
    print(f"  logits all-gather, TP=2 : {logits_allgather_bytes(small, 2):>9,.0f}")
    per_layer = small.hidden_size * 2  # one all-reduce carries one hidden vector
    print(
        f"\nOne all-reduce of {per_layer:,} B (one token), assumed "
        f"{ASSUMED_STEP_LATENCY_S * 1e6:.0f} us per ring step:"
    )
    for _, link_key in SETUPS:
        link = load_link(link_key)
        for t in TP_SIZES[1:]:
            wire = ring_allreduce_seconds(per_layer, t, link, 0.0)
            total = ring_allreduce_seconds(per_layer, t, link)
            print(
                f"  {link.name:<20} TP={t}: bandwidth {wire * 1e6:6.2f} us, "
                f"with latency {total * 1e6:6.1f} us"
            )
    big = load_model(BIG)
    print(
        f"\n{big.name} (BF16) and its AWQ checkpoint, decode at batch {BATCH}, "
        f"context {CONTEXT:,}: TPOT floor per step"
    )
    print(
        f"{'GPU':<10} {'format':<16} {'TP':>2} {'KV tokens':>10} {'TPOT ms':>8} "
        f"{'comm ms':>8} {'comm':>5}"
    )
    for gpu, _, fmt, t, step, tokens, why in rows():
        if step is None:
            print(f"{gpu.name:<10} {fmt.name:<16} {t:>2}  {why}")
            continue
        print(
            f"{gpu.name:<10} {fmt.name:<16} {t:>2} {tokens:>10,} {step.seconds * 1e3:>8.2f} "
            f"{step.comm_s * 1e3:>8.2f} {step.comm_share:>5.0%}"
        )


if __name__ == "__main__":
    main()
