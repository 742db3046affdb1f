"""Running decodes' inter-token latency (ITL) with and without chunked prefill: a seeded simulator.

The scheduler follows vLLM 0.26.0's Scheduler.schedule (vllm/v1/core/sched/scheduler.py): each
step has a token budget T (max_num_batched_tokens); running requests are served first, in order
(a decode takes 1 token, a prompt still being prefilled takes min(what is left, budget left));
then waiting requests are admitted first come, first served while budget is left. Chunked: an
admitted prompt takes what budget is left and continues next step. Unchunked
(enable_chunked_prefill=False): a prompt that does not fit in the budget left waits, and admission
stops there. A step's time is core.roofline.StepCost.bound (batch_step_bound) over its chunks
and decodes: a LOWER bound; what the simulator compares is how the steps are packed, with the
hardware cost the same.

Request mix (numpy Generator, seed SEED): Poisson arrivals at RATE/s; each prompt is LONG_PROMPT
tokens with probability LONG_SHARE, else SHORT_PROMPT; outputs geometric with mean MEAN_OUTPUT,
cut at MAX_OUTPUT. Not modeled: KV capacity (no preemption), max_num_seqs (never reached here),
sampling and scheduling overheads. ITL is every gap between a request's successive tokens,
pooled over all requests, as `vllm bench serve` reports it.

Run it: python snippets/chunked_prefill/itl_sim.py
"""

from dataclasses import dataclass

import numpy as np

from chunked_prefill.budget import LLM_DEFAULT_BUDGET, course_setup
from core.formats import WeightFormat
from core.gpus import GPU
from core.models import ModelSpec
from core.roofline import StepCost

SEED = 7
REQUESTS = 400
RATE = 4.0  # requests per second, Poisson
SHORT_PROMPT = 256
LONG_PROMPT = 6000
LONG_SHARE = 0.2
MEAN_OUTPUT = 128
MAX_OUTPUT = 1024
# (label, max_num_batched_tokens, enable_chunked_prefill)
CONFIGS = (
    ("unchunked", LLM_DEFAULT_BUDGET, False),
    ("chunked", LLM_DEFAULT_BUDGET, True),
    ("chunked", 2048, True),
    ("chunked", 512, True),
)


@dataclass(frozen=True)
class Mix:
    arrivals_s: np.ndarray
    prompts: np.ndarray
    outputs: np.ndarray


def request_mix(seed: int = SEED, n: int = REQUESTS, rate: float = RATE) -> Mix:
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / rate, n))
    prompts = np.where(rng.random(n) < LONG_SHARE, LONG_PROMPT, SHORT_PROMPT)
    outputs = np.minimum(rng.geometric(1 / MEAN_OUTPUT, n), MAX_OUTPUT)
    return Mix(arrivals, prompts.astype(np.int64), outputs.astype(np.int64))


@dataclass(frozen=True)
class Run:
    label: str
    budget: int
    chunked: bool
    token_times: list[list[float]]  # per request, when each of its tokens came out
    steps: int

    def itl_s(self) -> np.ndarray:
        return np.concatenate([np.diff(t) for t in self.token_times if len(t) > 1])

    def ttft_s(self, mix: Mix) -> np.ndarray:
        return np.array([t[0] for t in self.token_times]) - mix.arrivals_s


def simulate(
    mix: Mix, budget: int, chunked: bool, gpu: GPU, model: ModelSpec, fmt: WeightFormat
) -> Run:
    if not chunked and budget < int(mix.prompts.max()):
        raise ValueError(
            f"unchunked, a budget of {budget} can never admit a "
            f"{int(mix.prompts.max())}-token prompt (vLLM needs T >= max_model_len)"
        )
    cost = StepCost.of(gpu, model, fmt)
    n = len(mix.prompts)
    computed = np.zeros(n, dtype=np.int64)  # prompt tokens prefilled so far
    times: list[list[float]] = [[] for _ in range(n)]
    waiting: list[int] = []
    running: list[int] = []
    t, next_arrival, steps = 0.0, 0, 0
    while next_arrival < n or waiting or running:
        while next_arrival < n and mix.arrivals_s[next_arrival] <= t:
            waiting.append(next_arrival)
            next_arrival += 1
        if not waiting and not running:
            t = float(mix.arrivals_s[next_arrival])
            continue
        left = budget
        chunks: list[tuple[int, int, bool]] = []
        decodes: list[int] = []  # contexts
        served: list[int] = []
        for r in running:  # first the running requests, in order
            if left == 0:
                break
            if computed[r] < mix.prompts[r]:
                size = int(min(mix.prompts[r] - computed[r], left))
                chunks.append((size, int(computed[r]), computed[r] + size == mix.prompts[r]))
            else:
                size = 1
                decodes.append(int(mix.prompts[r] + len(times[r]) - 1))
            left -= size
            served.append(r)
        while waiting and left > 0:  # then the waiting ones, first come first served
            r = waiting[0]
            if not chunked and mix.prompts[r] > left:
                break
            size = int(min(mix.prompts[r], left))
            chunks.append((size, 0, size == mix.prompts[r]))
            left -= size
            running.append(waiting.pop(0))
            served.append(r)
        t += cost.bound(tuple(chunks), tuple(decodes)).seconds
        steps += 1
        for r in served:
            if computed[r] < mix.prompts[r]:
                computed[r] += chunks.pop(0)[0]
                if computed[r] < mix.prompts[r]:
                    continue  # a partial prefill emits no token
            times[r].append(t)
            if len(times[r]) == mix.outputs[r]:
                running.remove(r)
    return Run("", budget, chunked, times, steps)


@dataclass(frozen=True)
class Summary:
    label: str
    budget: int
    itl_p50_ms: float
    itl_p99_ms: float
    itl_max_ms: float
    long_ttft_p50_s: float
    short_ttft_p50_s: float
    makespan_s: float


def summarize(run: Run, mix: Mix, label: str) -> Summary:
    itl, ttft = run.itl_s() * 1e3, run.ttft_s(mix)
    long = mix.prompts == LONG_PROMPT
    end = max(ts[-1] for ts in run.token_times)
    return Summary(
        label,
        run.budget,
        float(np.percentile(itl, 50)),
        float(np.percentile(itl, 99)),
        float(itl.max()),
        float(np.median(ttft[long])),
        float(np.median(ttft[~long])),
        end - float(mix.arrivals_s[0]),
    )


def compare(mix: Mix | None = None) -> list[Summary]:
    mix = mix if mix is not None else request_mix()
    gpu, model, fmt = course_setup()
    return [
        summarize(simulate(mix, budget, chunked, gpu, model, fmt), mix, label)
        for label, budget, chunked in CONFIGS
    ]


def main() -> None:
    mix = request_mix()
    gpu, model, fmt = course_setup()
    print(
        f"{REQUESTS} requests, Poisson at {RATE:g}/s, seed {SEED}: prompts {LONG_PROMPT} tokens "
        f"(share {LONG_SHARE:.0%}) or {SHORT_PROMPT}, outputs geometric (mean {MEAN_OUTPUT}, "
        f"cut at {MAX_OUTPUT})"
    )
    print(
        f"drawn: {int((mix.prompts == LONG_PROMPT).sum())} long prompts; "
        f"{model.name} ({fmt.name}) on {gpu.name}, step times = lower bounds\n"
    )
    print(
        f"{'scheduler':<10} {'T':>5} {'ITL p50 ms':>10} {'ITL p99 ms':>10} {'ITL max ms':>10} "
        f"{'TTFT long s':>11} {'TTFT short s':>12}"
    )
    for s in compare(mix):
        print(
            f"{s.label:<10} {s.budget:>5} {s.itl_p50_ms:>10.1f} {s.itl_p99_ms:>10.1f} "
            f"{s.itl_max_ms:>10.1f} {s.long_ttft_p50_s:>11.3f} {s.short_ttft_p50_s:>12.3f}"
        )


if __name__ == "__main__":
    main()
