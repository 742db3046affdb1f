"""Static (request-level) against continuous (iteration-level) batching, on one request stream.

A seeded simulator: numpy draws the stream, both policies serve exactly the same requests with
the same number of slots, and every step costs the core's roofline lower bound for that step:
  prefill of n new requests:  core.roofline.ttft_bound(batch=n)   (emits each one's first token)
  decode step of b sequences: max(2*b*M' / P_peak, (W + kappa * sum of their contexts) / BW)
  (M': the weights each token multiplies, lm_head included, as in batched_decode)
So the times are LOWER BOUNDS of a step model, not a prediction of an engine: what they compare is
how the two policies fill the slots, with the hardware cost held the same.

Stream: Poisson arrivals at RATE requests/s, PROMPT_TOKENS each, output lengths geometric with
mean MEAN_OUTPUT (numpy's Generator.geometric, p = 1 / MEAN_OUTPUT), cut at MAX_OUTPUT (max_tokens).
Policies, both first-come first-served with SLOTS slots:
  static      admits a batch only when the previous batch has completely finished; a slot whose
              request finished early stays empty (and costs nothing) until the whole batch is done
  continuous  at every step boundary, finished requests leave and waiting ones take their slots;
              new requests are prefilled in a step of their own, then decoding resumes

Run it: python snippets/continuous_batching/simulate.py
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from core.formats import WeightFormat, checkpoint_format, streamed_weight_bytes
from core.forward import decode_flops, kv_cache_bytes
from core.gpus import GPU, load_gpus
from core.models import ModelSpec, load_model
from core.roofline import bound, ttft_bound

SEED = 42
REQUESTS = 400
RATE = 8.0  # requests per second (Poisson arrivals)
PROMPT_TOKENS = 512
MEAN_OUTPUT = 128  # tokens; geometric distribution
MAX_OUTPUT = 1024  # max_tokens: longer draws are cut here
SLOTS = 16
GPU_KEY = "rtx_4090"
MODEL_KEY = "qwen2.5-7b-instruct-awq"
POLICIES = ("static", "continuous")


@dataclass(frozen=True)
class Stream:
    arrivals_s: np.ndarray  # float, sorted
    outputs: np.ndarray  # int, new tokens per request, 1 .. MAX_OUTPUT
    prompt_tokens: int


def request_stream(
    seed: int = SEED,
    n: int = REQUESTS,
    rate: float = RATE,
    mean_output: float = MEAN_OUTPUT,
    max_output: int = MAX_OUTPUT,
    prompt_tokens: int = PROMPT_TOKENS,
) -> Stream:
    if n < 1 or rate <= 0 or mean_output < 1 or max_output < 1 or prompt_tokens < 1:
        raise ValueError("requests, rate, mean output, max output and prompt must be positive")
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / rate, n))
    outputs = np.minimum(rng.geometric(1 / mean_output, n), max_output)
    return Stream(arrivals, outputs.astype(np.int64), prompt_tokens)


def burst(stream: Stream) -> Stream:
    """The same requests, all arriving at once: an offline batch job (the queue never empties)."""
    return Stream(np.zeros_like(stream.arrivals_s), stream.outputs, stream.prompt_tokens)


@dataclass(frozen=True)
class Hardware:
    gpu: GPU
    model: ModelSpec
    fmt: WeightFormat

    def prefill_s(self, prompt_tokens: int, new_requests: int) -> float:
        return ttft_bound(self.gpu, self.model, prompt_tokens, self.fmt, new_requests).seconds

    # asked at every step of a simulation; the core's answers depend on the model (and batch) only
    @cached_property
    def weight_bytes(self) -> int:
        return streamed_weight_bytes(self.model, self.fmt)

    @cached_property
    def _flops_by_batch(self) -> dict[int, int]:
        return {}

    def decode_s(self, batch: int, context_tokens: int) -> float:
        """One step of `batch` sequences holding `context_tokens` cached tokens between them."""
        flops = self._flops_by_batch.get(batch)
        if flops is None:
            flops = self._flops_by_batch[batch] = decode_flops(self.model, batch)
        nbytes = self.weight_bytes + kv_cache_bytes(self.model, context_tokens)
        return bound(self.gpu, flops, nbytes, self.fmt).seconds


def default_hardware() -> Hardware:
    model = load_model(MODEL_KEY)
    return Hardware(load_gpus()[GPU_KEY], model, checkpoint_format(model))


@dataclass(frozen=True)
class Result:
    policy: str
    first_token_s: np.ndarray  # per request
    finish_s: np.ndarray  # per request
    busy_slot_steps: int  # sum over decode steps of sequences decoding
    decode_steps: int
    slots: int
    prefill_s: float  # time spent in prefill steps, in which nobody decodes
    busy_s: float  # time spent in any step (prefill or decode)

    @property
    def slot_utilization(self) -> float:
        return self.busy_slot_steps / (self.slots * self.decode_steps)


def simulate(policy: str, stream: Stream, hw: Hardware, slots: int = SLOTS) -> Result:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if slots < 1:
        raise ValueError(f"slots must be positive, got {slots}")
    n = len(stream.outputs)
    # plain Python numbers in the step loop: indexing numpy arrays one element at a time is slow
    arrivals, outputs = stream.arrivals_s.tolist(), stream.outputs.tolist()
    first, finish = [np.nan] * n, [np.nan] * n
    t, next_arrival = 0.0, 0
    queue: list[int] = []
    # The requests holding a slot that still generate (static: the batch is refilled only once
    # all are done). A request admitted after decode step S with m tokens to make ends at decode
    # step S + m - 1, so the loop keeps, per step, who ends there, and the sum of the running
    # requests' tokens so far (the context): a step costs the same at any batch size.
    running = 0
    ending_at: dict[int, list[int]] = {}
    tokens_so_far = 0  # over the running requests
    busy = steps = 0
    prefill_s = busy_s = 0.0
    while next_arrival < n or queue or running:
        while next_arrival < n and arrivals[next_arrival] <= t:
            queue.append(next_arrival)
            next_arrival += 1
        if policy == "continuous" or not running:
            admit = queue[: slots - running]
            del queue[: len(admit)]
            if admit:
                step_s = hw.prefill_s(stream.prompt_tokens, len(admit))
                t += step_s
                prefill_s += step_s
                busy_s += step_s
                for r in admit:
                    first[r] = t  # the prefill makes the first token
                    if outputs[r] == 1:
                        finish[r] = t
                        continue
                    ending_at.setdefault(steps + outputs[r] - 1, []).append(r)
                    running += 1
                    tokens_so_far += 1
                continue
        if not running:  # nothing to run: wait for the next request
            t = max(t, arrivals[next_arrival]) if next_arrival < n else t
            continue
        # context of a sequence: its prompt plus the tokens generated before this step's input
        context = running * (stream.prompt_tokens - 1) + tokens_so_far
        step_s = hw.decode_s(running, context)
        t += step_s
        busy_s += step_s
        busy += running
        steps += 1
        tokens_so_far += running
        for r in ending_at.pop(steps, ()):
            finish[r] = t
            running -= 1
            tokens_so_far -= outputs[r]
    return Result(policy, np.array(first), np.array(finish), busy, steps, slots, prefill_s, busy_s)


@dataclass(frozen=True)
class Summary:
    policy: str
    slot_utilization: float
    throughput_tok_s: float
    mean_latency_s: float
    p99_latency_s: float
    mean_ttft_s: float
    p99_ttft_s: float
    makespan_s: float
    prefill_s: float
    decode_s: float

    @property
    def prefill_share(self) -> float:
        """The share of the GPU's busy time spent in prefill steps (no token is decoded there)."""
        return self.prefill_s / (self.prefill_s + self.decode_s)


def summarize(result: Result, stream: Stream) -> Summary:
    latency = result.finish_s - stream.arrivals_s
    ttft = result.first_token_s - stream.arrivals_s
    makespan = float(np.max(result.finish_s) - np.min(stream.arrivals_s))
    return Summary(
        result.policy,
        result.slot_utilization,
        float(stream.outputs.sum()) / makespan,
        float(latency.mean()),
        float(np.percentile(latency, 99)),
        float(ttft.mean()),
        float(np.percentile(ttft, 99)),
        makespan,
        result.prefill_s,
        result.busy_s - result.prefill_s,
    )


def compare(
    stream: Stream | None = None, hw: Hardware | None = None, slots: int = SLOTS
) -> list[Summary]:
    stream = stream if stream is not None else request_stream()
    hw = hw or default_hardware()
    return [summarize(simulate(p, stream, hw, slots), stream) for p in POLICIES]


def table(summaries: list[Summary]) -> list[str]:
    lines = [
        f"{'policy':<11} {'slot use':>8} {'prefill':>7} {'tok/s':>7} {'mean lat s':>10} "
        f"{'p99 lat s':>9} {'mean TTFT s':>11} {'p99 TTFT s':>10}"
    ]
    for s in summaries:
        lines.append(
            f"{s.policy:<11} {s.slot_utilization:8.1%} {s.prefill_share:7.0%} "
            f"{s.throughput_tok_s:7,.0f} "
            f"{s.mean_latency_s:10.2f} {s.p99_latency_s:9.2f} {s.mean_ttft_s:11.2f} "
            f"{s.p99_ttft_s:10.2f}"
        )
    return lines


def main() -> None:
    stream, hw = request_stream(), default_hardware()
    out = stream.outputs
    print(
        f"{REQUESTS} requests, Poisson arrivals at {RATE:g}/s, {PROMPT_TOKENS}-token prompts, "
        f"outputs geometric (mean {MEAN_OUTPUT}, cut at {MAX_OUTPUT}), seed {SEED}"
    )
    print(
        f"drawn outputs: mean {out.mean():.1f}, median {np.median(out):.0f}, "
        f"p99 {np.percentile(out, 99):.0f}, max {out.max()} tokens"
    )
    print(f"{hw.model.name} ({hw.fmt.name}) on {hw.gpu.name}, {SLOTS} slots, step times = bounds")
    print(f"\nonline: requests arrive over time ({RATE:g}/s)")
    print("\n".join(table(compare(stream, hw))))
    print("\noffline: the same requests all arrive at t = 0")
    print("\n".join(table(compare(burst(stream), hw))))


if __name__ == "__main__":
    main()
