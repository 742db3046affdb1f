"""Request arrival times as `vllm bench serve --request-rate λ --burstiness β` draws them.

vllm/benchmarks/serve.py (get_request) draws each gap between requests from a gamma distribution
with shape β and scale 1 / (λ * β): the mean gap is 1 / λ whatever β is, and the coefficient of
variation is 1 / sqrt(β). β = 1 is the exponential distribution, i.e. Poisson arrivals; β < 1 is
burstier (more short gaps and more long ones), β > 1 more regular. It then rescales the gaps so the
last request goes out at exactly n_req / λ seconds. Here the draws come from a seeded
numpy.random.Generator (vLLM seeds the global numpy state with --seed): same distribution, not the
same numbers.

Run it: python snippets/load_testing/arrivals.py
"""

import numpy as np

SEED = 42
REQUESTS = 1000
RATE = 8.0  # requests per second
BURSTINESS = (0.25, 1.0, 4.0)
WINDOW_S = 1.0  # for counting the busiest second


def arrival_times(
    n: int, rate: float, burstiness: float = 1.0, seed: int = SEED, rescale: bool = True
) -> np.ndarray:
    """Send times of n requests, in seconds, the first gap included (as vLLM sleeps it too)."""
    if n < 1 or rate <= 0 or burstiness <= 0:
        raise ValueError(f"need n >= 1, rate > 0 and burstiness > 0, got {n}, {rate}, {burstiness}")
    rng = np.random.default_rng(seed)
    gaps = rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n)
    times = np.cumsum(gaps)
    if rescale:  # serve.py: "re-scale delay time" so the last request is sent at n / rate
        times *= (n / rate) / times[-1]
    return times


def busiest_window(times: np.ndarray, window_s: float = WINDOW_S) -> int:
    """The most requests sent within any window of this length (each window starts at a send)."""
    ends = np.searchsorted(times, times + window_s, side="left")
    return int(np.max(ends - np.arange(len(times))))


def describe(times: np.ndarray) -> dict[str, float]:
    gaps = np.diff(np.concatenate(([0.0], times)))
    return {
        "mean_gap_s": float(gaps.mean()),
        "cv": float(gaps.std() / gaps.mean()),
        "busiest": busiest_window(times),
        "rate": len(times) / float(times[-1]),
    }


def main() -> None:
    print(f"{REQUESTS} requests at {RATE:g} req/s, seed {SEED}, gamma gaps (shape β, mean 1/λ)")
    print(
        f"{'burstiness β':>12} {'mean gap ms':>11} {'CV of gaps':>10} {'1/sqrt(β)':>9} "
        f"{'busiest ' + format(WINDOW_S, 'g') + ' s':>11}"
    )
    for b in BURSTINESS:
        d = describe(arrival_times(REQUESTS, RATE, b))
        print(
            f"{b:>12g} {d['mean_gap_s'] * 1e3:>11.1f} {d['cv']:>10.2f} {1 / np.sqrt(b):>9.2f} "
            f"{d['busiest']:>11}"
        )


if __name__ == "__main__":
    main()
