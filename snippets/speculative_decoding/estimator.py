"""Speculative decoding's speed-up as the batch grows, for the course's model and cards.

Each round: gamma draft tokens, then one target pass over gamma + 1 tokens per sequence. While
that pass is memory-bound it costs about one decode step, so a round emits tau tokens for the price
of one step; once the batch nears the critical batch, the pass costs about gamma + 1 steps of
compute, and the rejected tokens' FLOPs are pure loss. Times are lower bounds from the core
(core.speculative, core.roofline); the draft is n-gram lookup (no GPU time) unless a draft
model's step is priced. Standard library only: it also runs in the browser.

Run it: python snippets/speculative_decoding/estimator.py
"""

from batched_decode.batch_bound import (
    CONTEXT,
    configurations,
)  # the RTX 4090 and H100, BF16 and AWQ
from core.formats import checkpoint_format
from core.models import load_model
from core.roofline import tpot_bound
from core.speculative import (
    batched_speedup,
    best_draft_tokens,
    break_even_batch,
    expected_tokens,
    speedup,
    verify_step_bound,
)

ALPHA = 0.8  # acceptance rate per draft token: an assumption, change it
DRAFT_TOKENS = 4  # gamma
BATCHES = (1, 8, 32, 64, 128, 256, 512)
DRAFT_MODEL = "qwen2.5-0.5b-instruct"  # a draft model priced by the same bound


def draft_cost(gpu, model, fmt, batch: int = 1, context: int = CONTEXT) -> float:
    """c: a draft model's decode step over the target's, both lower bounds, same batch."""
    draft = load_model(DRAFT_MODEL)
    draft_s = tpot_bound(gpu, draft, context, checkpoint_format(draft), batch).seconds
    return draft_s / tpot_bound(gpu, model, context, fmt, batch).seconds


def speedup_table(alpha: float = ALPHA, gamma: int = DRAFT_TOKENS) -> list[str]:
    configs = configurations()
    names = [f"{g.name} {f.name.split(' ')[0]}" for g, _, f in configs]
    lines = [f"{'batch':>6}" + "".join(f"{n:>16}" for n in names)]
    for b in BATCHES:
        cells = [
            batched_speedup(g, m, batch=b, context=CONTEXT, alpha=alpha, draft_tokens=gamma, fmt=f)
            for g, m, f in configs
        ]
        lines.append(f"{b:>6}" + "".join(f"{c:>15.2f}x" for c in cells))
    ends = [
        break_even_batch(g, m, context=CONTEXT, alpha=alpha, draft_tokens=gamma, fmt=f)
        for g, m, f in configs
    ]
    lines.append(f"{'< 1 at':>6}" + "".join(f"{'-' if e is None else e:>16}" for e in ends))
    return lines


def main() -> None:
    gamma, alpha = DRAFT_TOKENS, ALPHA
    e = expected_tokens(alpha, gamma)
    print(f"alpha = {alpha}, gamma = {gamma}: tau = {e:.2f} tokens per verification step")
    rtx, bf16, fmt = configurations()[0]
    plain = tpot_bound(rtx, bf16, CONTEXT, fmt, 1)
    verify = verify_step_bound(rtx, bf16, batch=1, context=CONTEXT, draft_tokens=gamma, fmt=fmt)
    print(
        f"{rtx.name} BF16, batch 1, context {CONTEXT:,}: decode step >= "
        f"{plain.seconds * 1e3:.2f} ms, verifying {gamma + 1} tokens >= "
        f"{verify.seconds * 1e3:.2f} ms ({'memory' if verify.memory_bound else 'compute'}-bound)"
    )
    print(f"n-gram draft (c = 0): speed-up at gamma {gamma} {speedup(alpha, gamma, 0):.2f}x")
    c = draft_cost(rtx, bf16, fmt)
    best = best_draft_tokens(alpha, c)
    print(
        f"draft model {load_model(DRAFT_MODEL).name}: c = {c:.3f} of a target step (batch 1), "
        f"speed-up at gamma {gamma} {speedup(alpha, gamma, c):.2f}x, "
        f"best gamma {best} ({speedup(alpha, best, c):.2f}x)"
    )
    print()
    print(f"speed-up in tokens/s against plain decoding, n-gram draft, context {CONTEXT:,}")
    print("\n".join(speedup_table(alpha, gamma)))


if __name__ == "__main__":
    main()
