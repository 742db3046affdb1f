"""Hit rate of vLLM-style prefix caching on a seeded request stream (numpy, build time only).

A stream of requests, each a system prompt (one of a few, chosen by popularity) followed by its
own question. Requests run one at a time; the cache holds `capacity` blocks. Like vLLM 0.26.0:
- only full blocks are cached, keyed by a hash chained over the whole prefix, so a block that
  holds any question token never matches another request (the questions differ);
- a hit is the longest run of cached blocks from the start, at most prompt_len - 1 tokens;
- a finished request's blocks stay cached until evicted, least recently used first, and a
  request's tail blocks before its head ones (v1/core/kv_cache_utils.py, FreeKVCacheBlockQueue).
Hit rate = cached prompt tokens / prompt tokens, as vllm:prefix_cache_hits / _queries count it.
Per system prompt it also counts what eviction cost: the tokens that would have hit in an ample
cache (`ideal`) but were recomputed, so a run shows which prompt's blocks LRU threw away.
Run it: python snippets/prefix_caching/hit_rate.py
"""

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

SEED = 5813
BLOCK_SIZE = 16
SYSTEM_PROMPTS = (1500, 600, 3000)  # tokens of each system prompt
POPULARITY = (0.6, 0.3, 0.1)  # the share of requests that uses each
QUESTION = (20, 300)  # question length, uniform over [low, high)
REQUESTS = 2000
CAPACITIES = (10_000, 400, 250)  # pool sizes in blocks: ample, tight, tighter (>= 1 request)


@dataclass(frozen=True)
class Tally:
    prompt_tokens: int
    cached_tokens: int
    ideal_tokens: int  # if every request after each prompt's first reused its system prompt

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens

    @property
    def ideal_rate(self) -> float:
        return self.ideal_tokens / self.prompt_tokens

    @property
    def lost_tokens(self) -> int:
        """Tokens an ample cache would have served that this one recomputed."""
        return self.ideal_tokens - self.cached_tokens

    def __add__(self, other: "Tally") -> "Tally":
        return Tally(
            self.prompt_tokens + other.prompt_tokens,
            self.cached_tokens + other.cached_tokens,
            self.ideal_tokens + other.ideal_tokens,
        )


@dataclass(frozen=True)
class Result(Tally):
    capacity: int
    by_prompt: tuple[Tally, ...]  # one per system prompt, in SYSTEM_PROMPTS order

    def lost_share(self, prompt: int) -> float:
        """The share of all lost tokens that were system prompt `prompt`'s."""
        return self.by_prompt[prompt].lost_tokens / self.lost_tokens if self.lost_tokens else 0.0


def stream(seed: int = SEED, n: int = REQUESTS) -> tuple[np.ndarray, np.ndarray]:
    """(system prompt index, question length) of each request, reproducibly."""
    rng = np.random.default_rng(seed)
    prompts = rng.choice(len(SYSTEM_PROMPTS), size=n, p=POPULARITY)
    questions = rng.integers(QUESTION[0], QUESTION[1], size=n)
    return prompts, questions


def simulate(prompts: np.ndarray, questions: np.ndarray, capacity: int) -> Result:
    longest = (max(SYSTEM_PROMPTS) + QUESTION[1]) // BLOCK_SIZE + 1
    if capacity < longest:
        raise ValueError(f"a pool of {capacity} blocks cannot hold one request of {longest} blocks")
    cache: OrderedDict[tuple, None] = OrderedDict()  # block key -> None, least recent first
    tallies = [Tally(0, 0, 0) for _ in SYSTEM_PROMPTS]
    seen: set[int] = set()
    for i, (k, q) in enumerate(zip(prompts.tolist(), questions.tolist(), strict=True)):
        system = SYSTEM_PROMPTS[k]
        prompt_len = system + q
        full_blocks = prompt_len // BLOCK_SIZE
        # a block's key: (prompt, index) while it holds only system-prompt tokens, else unique
        keys = [(k, j) if (j + 1) * BLOCK_SIZE <= system else (k, j, i) for j in range(full_blocks)]
        hit = 0
        for key in keys[: (prompt_len - 1) // BLOCK_SIZE]:
            if key not in cache:
                break
            hit += 1
        ideal = system // BLOCK_SIZE * BLOCK_SIZE if k in seen else 0
        tallies[k] += Tally(prompt_len, hit * BLOCK_SIZE, ideal)
        seen.add(k)
        # the request's blocks are used now, then freed tail first: head blocks stay longest
        for key in reversed(keys):
            cache.pop(key, None)
            cache[key] = None
        while len(cache) > capacity:
            cache.popitem(last=False)
    total = sum(tallies, Tally(0, 0, 0))
    return Result(
        total.prompt_tokens, total.cached_tokens, total.ideal_tokens, capacity, tuple(tallies)
    )


def main() -> None:
    prompts, questions = stream()
    print(
        f"{REQUESTS:,} requests, seed {SEED}: system prompts {SYSTEM_PROMPTS} tokens used by "
        f"{POPULARITY}, questions {QUESTION[0]}-{QUESTION[1] - 1} tokens, blocks of {BLOCK_SIZE}"
    )
    results = [simulate(prompts, questions, capacity) for capacity in CAPACITIES]
    print(f"{'cache, blocks':>14} {'cache, tokens':>14} {'hit rate':>9} {'ideal':>7}")
    for r in results:
        print(
            f"{r.capacity:>14,} {r.capacity * BLOCK_SIZE:>14,} {r.hit_rate:>9.1%} "
            f"{r.ideal_rate:>7.1%}"
        )
    print("\nper system prompt: hit rate (ideal), and its share of the tokens eviction lost")
    print(
        f"{'cache, blocks':>14} " + " ".join(f"{f'{t:,}-token prompt':>23}" for t in SYSTEM_PROMPTS)
    )
    for r in results:
        cells = (
            f"{t.hit_rate:6.1%} ({t.ideal_rate:5.1%}) {r.lost_share(k):5.0%}"
            for k, t in enumerate(r.by_prompt)
        )
        print(f"{r.capacity:>14,} " + " ".join(f"{c:>23}" for c in cells))


if __name__ == "__main__":
    main()
