"""A seeded simulation of draft acceptance: how many tokens each verification step emits.

Each step drafts gamma tokens; the target accepts them one by one, each with probability alpha,
until the first rejection; the step emits the accepted prefix plus one token of the target's own.
Text is a mix: a share of steps falls on easy text (copying from the prompt, boilerplate) with a
high alpha, the rest on hard text with a low one. The simulation keeps the counters vLLM 0.26.0
exports (num_drafts, num_draft_tokens, num_accepted_tokens, num_accepted_tokens_per_pos) and
estimates alpha from them three ways. numpy, at build time only: it does not run in the browser.

Run it: python snippets/speculative_decoding/simulate.py
"""

from dataclasses import dataclass

import numpy as np

from core.speculative import alpha_from_mean_length, expected_tokens

SEED = 0
STEPS = 20_000
DRAFT_TOKENS = 4  # gamma
EASY_SHARE = 0.5  # share of steps on easy text
EASY_ALPHA = 0.9
HARD_ALPHA = 0.4


@dataclass(frozen=True)
class Counters:
    """What vLLM's spec-decode metrics would report after these steps."""

    num_drafts: int
    num_draft_tokens: int
    num_accepted_tokens: int
    accepted_per_pos: tuple[int, ...]

    @property
    def mean_acceptance_length(self) -> float:
        """As vLLM's log line: 1 + accepted / drafts (the target's own token counts as one)."""
        return 1 + self.num_accepted_tokens / self.num_drafts

    @property
    def rate_per_pos(self) -> tuple[float, ...]:
        return tuple(a / self.num_drafts for a in self.accepted_per_pos)


def simulate(
    steps: int = STEPS,
    gamma: int = DRAFT_TOKENS,
    easy_share: float = EASY_SHARE,
    easy_alpha: float = EASY_ALPHA,
    hard_alpha: float = HARD_ALPHA,
    seed: int = SEED,
) -> tuple[np.ndarray, Counters]:
    """Tokens emitted by each step (1 .. gamma + 1), and the counters."""
    rng = np.random.default_rng(seed)
    easy = rng.random(steps) < easy_share
    alpha = np.where(easy, easy_alpha, hard_alpha)
    accepted_draws = rng.random((steps, gamma)) < alpha[:, None]
    # the accepted prefix: a position counts only if it and every earlier one were accepted
    prefix = np.cumprod(accepted_draws, axis=1)
    accepted = prefix.sum(axis=1)
    counters = Counters(
        num_drafts=steps,
        num_draft_tokens=steps * gamma,
        num_accepted_tokens=int(accepted.sum()),
        accepted_per_pos=tuple(int(n) for n in prefix.sum(axis=0)),
    )
    return accepted + 1, counters


def alpha_estimates(c: Counters, gamma: int = DRAFT_TOKENS) -> dict[str, float]:
    """alpha three ways: the first position's rate; the mean of the conditional rates
    per_pos[i+1] / per_pos[i]; the alpha whose tau equals the mean acceptance length."""
    per_pos = c.accepted_per_pos
    ratios = [per_pos[i + 1] / per_pos[i] for i in range(len(per_pos) - 1) if per_pos[i]]
    return {
        "first position": per_pos[0] / c.num_drafts,
        "conditional": sum(ratios) / len(ratios),
        "from mean length": alpha_from_mean_length(c.mean_acceptance_length, gamma),
    }


def main() -> None:
    tokens, c = simulate()
    gamma = DRAFT_TOKENS
    mean_alpha = EASY_SHARE * EASY_ALPHA + (1 - EASY_SHARE) * HARD_ALPHA
    print(
        f"{STEPS:,} steps, gamma {gamma}, {EASY_SHARE:.0%} easy text (alpha {EASY_ALPHA}), "
        f"the rest hard (alpha {HARD_ALPHA}); seed {SEED}"
    )
    print("tokens per step   share")
    for n in range(1, gamma + 2):
        share = float(np.mean(tokens == n))
        print(f"{n:>15}   {share:6.1%}  {'#' * round(share * 50)}")
    print(f"mean tokens per step (simulated)      {tokens.mean():.2f}")
    print(
        f"tau at the average alpha {mean_alpha:.3f}        {expected_tokens(mean_alpha, gamma):.2f}"
    )
    mix = EASY_SHARE * expected_tokens(EASY_ALPHA, gamma) + (1 - EASY_SHARE) * expected_tokens(
        HARD_ALPHA, gamma
    )
    print(f"tau averaged over the two kinds of text {mix:.2f}")
    print()
    print("counters as vLLM exports them")
    print(f"  num_drafts {c.num_drafts:,}, num_draft_tokens {c.num_draft_tokens:,}")
    print(f"  num_accepted_tokens {c.num_accepted_tokens:,}")
    print(f"  num_accepted_tokens_per_pos {list(c.accepted_per_pos)}")
    print(f"  mean acceptance length 1 + accepted/drafts = {c.mean_acceptance_length:.2f}")
    rates = ", ".join(f"{r:.3f}" for r in c.rate_per_pos)
    print(f"  acceptance rate per position: {rates}")
    print("alpha estimated from the counters")
    for name, value in alpha_estimates(c).items():
        print(f"  {name:<18} {value:.3f}")


if __name__ == "__main__":
    main()
