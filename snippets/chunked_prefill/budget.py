"""How many steps a long prompt takes under a token budget, and what each step costs the decodes.

vLLM 0.26.0 gives every engine step a token budget, max_num_batched_tokens (T). The running
requests are scheduled first (vllm/v1/core/sched/scheduler.py, Scheduler.schedule): each running
decode takes one token, so a prompt of P tokens arriving while D decodes run gets T - D tokens
per step and needs ceil(P / (T - D)) steps. Unchunked (T >= P + D), it all goes into one step.
Every decode in a step waits for the whole step, so the longest step is the decodes' worst
inter-token latency (ITL). Step times are core.roofline.step_bound: LOWER bounds, not predictions.

Run it: python snippets/chunked_prefill/budget.py
"""

import math
from dataclasses import dataclass

from core.engine import MAX_NUM_BATCHED_TOKENS
from core.formats import WeightFormat, checkpoint_format
from core.gpus import GPU, load_gpus
from core.models import ModelSpec, load_model
from core.roofline import step_bound

GPU_KEY = "rtx_4090"
MODEL_KEY = "qwen2.5-7b-instruct-awq"  # the course model in the format the labs load
PROMPT = 6000  # tokens of the long prompt that arrives
DECODES = 16  # requests decoding when it arrives
CONTEXT = 1000  # tokens each of them holds in the KV cache
# LLM's default max_num_batched_tokens on a GPU under 70 GiB (`vllm serve` defaults to 2048)
LLM_DEFAULT_BUDGET = MAX_NUM_BATCHED_TOKENS
BUDGETS = (512, 1024, 2048, LLM_DEFAULT_BUDGET)  # max_num_batched_tokens


def prefill_steps(prompt: int, budget: int, decodes: int) -> int:
    """ceil(P / (T - D)): steps until a P-token prompt is prefilled next to D running decodes."""
    if prompt < 1 or decodes < 0:
        raise ValueError(f"prompt must be >= 1 and decodes >= 0, got {prompt}, {decodes}")
    if budget <= decodes:
        raise ValueError(
            f"a budget of {budget} tokens leaves nothing for a prompt next to {decodes} decodes"
        )
    return math.ceil(prompt / (budget - decodes))


def chunks(prompt: int, budget: int, decodes: int) -> list[int]:
    """The chunk sizes: T - D tokens per step, the rest in the last."""
    per_step = budget - decodes
    n = prefill_steps(prompt, budget, decodes)
    return [per_step] * (n - 1) + [prompt - per_step * (n - 1)]


@dataclass(frozen=True)
class Plan:
    budget: int
    steps: int
    worst_step_s: float  # the decodes' worst ITL while the prompt is prefilled (lower bound)
    prefill_s: float  # sum of the steps: the long prompt's prefill time (lower bound)


def plan(
    gpu: GPU,
    model: ModelSpec,
    fmt: WeightFormat,
    budget: int,
    prompt: int = PROMPT,
    decodes: int = DECODES,
    context: int = CONTEXT,
) -> Plan:
    """Each step: one chunk of the prompt (after the earlier chunks) and D decodes at `context`.

    The decodes' contexts grow by one token a step; that adds well under 1 % here and is left out.
    """
    times, done = [], 0
    sizes = chunks(prompt, budget, decodes)
    for i, size in enumerate(sizes):
        step = step_bound(
            gpu,
            model,
            prefill_tokens=size,
            prefill_cached=done,
            last_chunk=i == len(sizes) - 1,
            decode_batch=decodes,
            decode_context=context,
            fmt=fmt,
        )
        times.append(step.seconds)
        done += size
    return Plan(budget, len(sizes), max(times), sum(times))


def decode_step_s(gpu: GPU, model: ModelSpec, fmt: WeightFormat, decodes: int, context: int):
    """A step of the decodes alone: their ITL when no prompt is being prefilled."""
    return step_bound(gpu, model, decode_batch=decodes, decode_context=context, fmt=fmt).seconds


def course_setup() -> tuple[GPU, ModelSpec, WeightFormat]:
    model = load_model(MODEL_KEY)
    return load_gpus()[GPU_KEY], model, checkpoint_format(model)


def main() -> None:
    gpu, model, fmt = course_setup()
    alone = decode_step_s(gpu, model, fmt, DECODES, CONTEXT)
    print(
        f"{model.name} ({fmt.name}) on {gpu.name}: a {PROMPT}-token prompt arrives while "
        f"{DECODES} requests decode at {CONTEXT} tokens of context"
    )
    print(f"decode step alone: {alone * 1e3:.1f} ms (lower bound)\n")
    print(f"{'budget T':>8} {'steps':>5} {'worst ITL ms':>12} {'x alone':>7} {'prefill ms':>10}")
    for budget in BUDGETS:
        p = plan(gpu, model, fmt, budget)
        print(
            f"{budget:>8} {p.steps:>5} {p.worst_step_s * 1e3:>12.1f} "
            f"{p.worst_step_s / alone:>7.1f} {p.prefill_s * 1e3:>10.1f}"
        )


if __name__ == "__main__":
    main()
