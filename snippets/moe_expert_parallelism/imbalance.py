"""Load imbalance under expert parallelism: a seeded numpy simulation of skewed routing.

Each step, B tokens each pick k distinct experts of E, with probability proportional to a Zipf-like
popularity p_e ~ 1 / rank^a (a = 0 is uniform routing); Gumbel top-k draws k without replacement
in proportion to p. The E experts sit on ep ranks, E/ep each, in order of their ids (popularity is
shuffled across ids, as a trained router's is). An EP layer waits for its busiest rank, so
max / mean rank load is the slowdown against perfect balance; max / mean expert load is the same
per expert. Reported as the mean over steps, and its spread over seeds. Build time only (numpy).
"""

from dataclasses import dataclass

import numpy as np

from core.moe import load_moe_model

MODEL = load_moe_model("qwen3-30b-a3b")
E, K = MODEL.num_experts, MODEL.experts_per_token  # its experts per layer and router top-k
EP = 8  # ranks the experts are spread over
TOKENS = 256  # tokens per step across the EP group
STEPS = 200
SKEWS = (0.0, 0.5, 1.0, 1.5)
SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Imbalance:
    skew: float
    expert_max_over_mean: float
    rank_max_over_mean: float


def popularity(rng: np.random.Generator, skew: float, experts: int = E) -> np.ndarray:
    weights = 1.0 / np.arange(1, experts + 1) ** skew
    return rng.permutation(weights / weights.sum())


def route(rng: np.random.Generator, p: np.ndarray, tokens: int, k: int = K) -> np.ndarray:
    """tokens x k expert ids, each row k distinct experts drawn in proportion to p."""
    gumbel = rng.gumbel(size=(tokens, p.size))
    return np.argpartition(-(np.log(p) + gumbel), k, axis=1)[:, :k]


def simulate(skew: float, seed: int, tokens: int = TOKENS, steps: int = STEPS, ep: int = EP):
    rng = np.random.default_rng(seed)
    p = popularity(rng, skew)
    expert_ratio, rank_ratio = [], []
    for _ in range(steps):
        load = np.bincount(route(rng, p, tokens).ravel(), minlength=E)
        ranks = load.reshape(ep, E // ep).sum(axis=1)
        expert_ratio.append(load.max() / load.mean())
        rank_ratio.append(ranks.max() / ranks.mean())
    return Imbalance(skew, float(np.mean(expert_ratio)), float(np.mean(rank_ratio)))


def table() -> list[tuple[float, list[Imbalance]]]:
    return [(s, [simulate(s, seed) for seed in SEEDS]) for s in SKEWS]


def main() -> None:
    print(
        f"E={E} experts, top-{K}, {EP} EP ranks, {TOKENS} tokens per step, {STEPS} steps, "
        f"seeds {SEEDS}"
    )
    print(f"{'skew a':>6} {'expert max/mean':>16} {'rank max/mean':>14}   (range over seeds)")
    for skew, runs in table():
        experts = [r.expert_max_over_mean for r in runs]
        ranks = [r.rank_max_over_mean for r in runs]
        print(
            f"{skew:>6.1f} {min(experts):>8.2f}-{max(experts):<7.2f} "
            f"{min(ranks):>6.2f}-{max(ranks):<7.2f}"
        )


if __name__ == "__main__":
    main()
