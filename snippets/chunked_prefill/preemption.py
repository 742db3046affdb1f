"""What a preemption costs when the KV cache runs out: vLLM 0.26.0 recomputes, it does not swap.

When a running request needs a new KV block and none is free, Scheduler.schedule
(vllm/v1/core/sched/scheduler.py) preempts the last request in the running list (with the
"priority" policy: the lowest-priority, latest-arrived one). Scheduler._preempt_request frees its
blocks, sets num_computed_tokens = 0 and puts it at the front of the waiting queue. Its prompt and
the tokens it has generated so far stay with the request, so when it is scheduled again all of
them are prefilled anew: n_in + n_gen tokens recomputed (fewer if some of its full blocks are
still in the prefix cache). The scheduler never swaps a request out; only a KV-offloading connector
(set by kv_offloading_size) stores blocks in CPU memory and loads them back.

Run it: python snippets/chunked_prefill/preemption.py
"""

from dataclasses import dataclass

from chunked_prefill.budget import course_setup
from core.formats import SIXTEEN_BIT, WeightFormat
from core.gpus import GPU
from core.models import ModelSpec, kv_bytes_per_token
from core.roofline import step_bound

PROMPT = 2000  # tokens of the preempted request's prompt
GENERATED = 500  # tokens it had generated when it was preempted


@dataclass(frozen=True)
class Preemption:
    recomputed_tokens: int  # n_in + n_gen: the whole sequence is prefilled again
    freed_bytes: int  # KV bytes its blocks held (kappa per token; whole blocks in practice)
    recompute_s: float  # lower bound on that prefill, alone on the GPU
    decode_step_s: float  # one decode step of this request alone, for scale


def preemption_cost(
    gpu: GPU, model: ModelSpec, fmt: WeightFormat, prompt: int = PROMPT, generated: int = GENERATED
) -> Preemption:
    if prompt < 1 or generated < 0:
        raise ValueError(f"prompt must be >= 1 and generated >= 0, got {prompt}, {generated}")
    tokens = prompt + generated
    recompute = step_bound(gpu, model, prefill_tokens=tokens, fmt=fmt).seconds
    decode = step_bound(gpu, model, decode_batch=1, decode_context=tokens, fmt=fmt).seconds
    return Preemption(tokens, tokens * kv_bytes_per_token(model, SIXTEEN_BIT), recompute, decode)


def main() -> None:
    gpu, model, fmt = course_setup()
    cost = preemption_cost(gpu, model, fmt)
    print(
        f"{model.name} ({fmt.name}) on {gpu.name}: a request with a {PROMPT}-token prompt "
        f"is preempted after {GENERATED} generated tokens"
    )
    print(f"KV freed:           {cost.freed_bytes / 1e6:,.1f} MB ({cost.recomputed_tokens} tokens)")
    print(f"tokens recomputed:  {cost.recomputed_tokens} (prompt + generated)")
    print(f"recompute prefill:  {cost.recompute_s * 1e3:.1f} ms (lower bound, alone on the GPU)")
    print(
        f"= {cost.recompute_s / cost.decode_step_s:.0f} of its decode steps "
        f"({cost.decode_step_s * 1e3:.1f} ms each, lower bound)"
    )


if __name__ == "__main__":
    main()
