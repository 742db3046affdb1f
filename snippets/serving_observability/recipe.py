"""A tuning recipe for `vllm serve`: each engine flag the course's lessons teach, decided in turn
for one stated model, GPU and workload, with the figure that decides it and the lesson behind it.

The order matters, because each decision feeds the next:
  quantization          FP8 weights where vLLM runs them W8A8 (sm >= 8.9): half the bytes
  max_model_len         the longest prompt plus max_tokens, not the model's own context
  tensor_parallel_size  the fewest GPUs whose KV room holds one max_model_len sequence
  gpu_memory_utilization  vLLM's default; every hundredth of it is KV room
  kv_cache_dtype        "fp8" when the KV cache, not the TPOT target, caps the batch
  max_num_seqs          the smallest of: vllm serve's default, the sequences that fit at
                        max_model_len (then no sequence is ever preempted), and the batch whose
                        decode-step floor still meets the TPOT target
  max_num_batched_tokens  the largest budget whose worst step (a prompt chunk beside a full
                        batch of decodes) stays under the TPOT target: a prefill never stalls
                        the running requests for longer than one target's worth
  speculative_config    n-gram drafts while they still pay at max_num_seqs (at the speculative
                        decoding lesson's assumed acceptance rate: measure yours)
Every time is a roofline lower bound (core.roofline), so a batch the floor allows is an upper
limit; the calibration lesson's measured-to-floor shares make it real. Standard library only:
it also runs in the browser. Change GPU_KEY, MODEL_KEY or WORKLOAD and run it again.

Run it: python snippets/serving_observability/recipe.py
"""

from dataclasses import dataclass

from chunked_prefill.budget import plan
from core.batch_defaults import batch_defaults
from core.engine import GPU_MEMORY_UTILIZATION
from core.formats import FP8, WeightFormat, checkpoint_format, resident_weight_bytes
from core.gpus import GIB, GPU, load_gpus
from core.long_context import kv_tokens, kv_value_bytes, sequence_kv_bytes, sequences_that_fit
from core.models import ModelSpec, kv_bytes_per_token, load_model
from core.parallel import tp_kv_tokens
from core.quantization import fp8_w8a8_supported
from core.roofline import tpot_bound
from core.speculative import batched_speedup, break_even_batch
from speculative_decoding.estimator import ALPHA, DRAFT_TOKENS

GPU_KEY = "l40s"
MODEL_KEY = "llama-3.1-8b-instruct"


@dataclass(frozen=True)
class Workload:
    max_prompt: int  # the longest prompt the product sends (system prompt + retrieved text)
    mean_prompt: int
    max_output: int  # max_tokens
    mean_output: int
    tpot_ms: float  # the p99 TPOT target; the recipe also holds the worst step under it

    @property
    def max_model_len(self) -> int:
        return self.max_prompt + self.max_output

    @property
    def decode_context(self) -> int:
        """The mean context a decode step reads: a mean prompt, half a mean answer."""
        return self.mean_prompt + self.mean_output // 2


# A retrieval-augmented assistant: prompts up to 6k tokens (2k on average), answers up to 1k
WORKLOAD = Workload(6144, 2000, 1024, 300, tpot_ms=50.0)
TP_CHOICES = (1, 2, 4, 8)
BUDGETS = (512, 1024, 2048, 4096, 8192)  # max_num_batched_tokens tried


@dataclass(frozen=True)
class Decision:
    flag: str  # the `vllm serve` option
    value: str
    default: str  # what `vllm serve` uses when the flag is left out
    why: str  # the figure that decides it
    lesson: str
    arg: str | None = None  # on the command line, when not the value itself


@dataclass(frozen=True)
class Recipe:
    gpu: GPU
    model: ModelSpec
    fmt: WeightFormat
    workload: Workload
    tp: int
    kv_cache_dtype: str
    kv_tokens: int
    seqs_fit: dict[str, int]  # kv_cache_dtype -> sequences of max_model_len that fit
    tpot_batch: dict[str, int]  # kv_cache_dtype -> largest batch whose floor meets the target
    max_num_seqs: int
    budget: int
    prefill_steps: int  # of the longest prompt under that budget, beside a full batch
    worst_step_s: float
    break_even: int | None  # batch at which n-gram speculation stops paying
    decisions: tuple[Decision, ...]


def choose_format(gpu: GPU, model: ModelSpec) -> WeightFormat:
    """FP8 where vLLM runs it W8A8: half the bytes of BF16 and the FP8 tensor cores."""
    return FP8 if fp8_w8a8_supported(gpu) else checkpoint_format(model)


def choose_tp(gpu: GPU, model: ModelSpec, fmt: WeightFormat, max_model_len: int) -> int:
    """The fewest GPUs whose KV room holds one sequence of max_model_len (vLLM refuses to start
    otherwise); beyond that, another GPU serves more as a replica than as a wider group."""
    for t in TP_CHOICES:
        if tp_kv_tokens(gpu, model, t, fmt) >= max_model_len:
            return t
    raise ValueError(f"{model.name} does not fit {max(TP_CHOICES)} x {gpu.name}")


def tpot_limited_batch(
    gpu: GPU, model: ModelSpec, fmt: WeightFormat, w: Workload, kv_cache_dtype: str, most: int
) -> int:
    """The largest batch (up to `most`) whose decode-step floor meets the TPOT target; 0 if even
    one sequence misses it."""
    kv = kv_value_bytes(kv_cache_dtype)
    best = 0
    for batch in range(1, most + 1):
        step = tpot_bound(gpu, model, w.decode_context, fmt, batch, kv_bytes=kv).seconds
        if step * 1e3 > w.tpot_ms:
            break
        best = batch
    return best


def choose_budget(gpu, model, fmt, w: Workload, decodes: int):
    """The largest budget whose worst step (chunk + decodes) stays under the TPOT target; the
    smallest budget that leaves the prompt room if none does. chunked_prefill.budget.plan prices
    the steps with a 16-bit KV cache: with FP8 KV the real floor is lower, so this errs safe."""
    fitting = [b for b in BUDGETS if b > decodes]
    plans = [plan(gpu, model, fmt, b, w.max_prompt, decodes, w.decode_context) for b in fitting]
    under = [p for p in plans if p.worst_step_s * 1e3 <= w.tpot_ms]
    return max(under, key=lambda p: p.budget) if under else plans[0]


def recipe(gpu_key: str = GPU_KEY, model_key: str = MODEL_KEY, w: Workload = WORKLOAD) -> Recipe:
    gpu, model = load_gpus()[gpu_key], load_model(model_key)
    serve = batch_defaults(gpu, "serve")
    fmt = choose_format(gpu, model)
    tp = choose_tp(gpu, model, fmt, w.max_model_len)
    dtypes = ("auto", "fp8")
    fit = {d: sequences_that_fit(gpu, model, fmt, w.max_model_len, d) for d in dtypes}
    by_tpot = {d: tpot_limited_batch(gpu, model, fmt, w, d, serve.max_num_seqs) for d in dtypes}
    # FP8 KV only when the cache, not the TPOT target, is what caps the batch
    kv_dtype = "fp8" if fit["auto"] < min(by_tpot["auto"], serve.max_num_seqs) else "auto"
    seqs = max(1, min(serve.max_num_seqs, fit[kv_dtype], by_tpot[kv_dtype]))
    room = kv_tokens(gpu, model, fmt, kv_dtype)
    chosen = choose_budget(gpu, model, fmt, w, seqs)
    spec = dict(context=w.decode_context, alpha=ALPHA, draft_tokens=DRAFT_TOKENS, fmt=fmt)
    even = break_even_batch(gpu, model, **spec)
    speculate = even is None or seqs < even
    spec_gain = batched_speedup(gpu, model, batch=seqs, **spec)
    model_len_kv = sequence_kv_bytes(model, model.max_position_embeddings) / GIB
    hundredth = int(0.01 * gpu.memory_bytes // kv_bytes_per_token(model, kv_value_bytes(kv_dtype)))
    rows = (
        Decision("--quantization", "fp8" if fmt is FP8 else "(checkpoint)", "(checkpoint)",
                 f"weights {resident_weight_bytes(model, fmt) / GIB:.1f} GiB instead of "
                 f"{resident_weight_bytes(model, checkpoint_format(model)) / GIB:.1f} GiB",
                 "weight_quantization"),
        Decision("--max-model-len", f"{w.max_model_len}", f"{model.max_position_embeddings}",
                 f"one sequence's KV {sequence_kv_bytes(model, w.max_model_len) / GIB:.2f} GiB, "
                 f"not {model_len_kv:.1f} GiB", "kv_quantization_long_context"),
        Decision("--tensor-parallel-size", f"{tp}", "1",
                 f"{tp_kv_tokens(gpu, model, tp, fmt):,} KV tokens >= {w.max_model_len}",
                 "tensor_parallelism"),
        Decision("--kv-cache-dtype", kv_dtype, "auto",
                 f"{fit['auto']} (auto) / {fit['fp8']} (fp8) sequences fit; "
                 f"TPOT allows {by_tpot['auto']}", "kv_quantization_long_context"),
        Decision("--gpu-memory-utilization", f"{GPU_MEMORY_UTILIZATION}",
                 f"{GPU_MEMORY_UTILIZATION}", f"{room:,} KV tokens; 0.01 = {hundredth:,} tokens",
                 "paged_attention"),
        Decision("--max-num-seqs", f"{seqs}", f"{serve.max_num_seqs}",
                 f"min({serve.max_num_seqs}, {fit[kv_dtype]} fit, {by_tpot[kv_dtype]} by TPOT)",
                 "continuous_batching"),
        Decision("--max-num-batched-tokens", f"{chosen.budget}", f"{serve.max_num_batched_tokens}",
                 f"worst step {chosen.worst_step_s * 1e3:.0f} ms, "
                 f"{chosen.steps} steps per {w.max_prompt} prompt", "chunked_prefill"),
        Decision("--speculative-config", f"ngram, {DRAFT_TOKENS}" if speculate else "(off)",
                 "(off)",
                 f"{spec_gain:.2f}x at batch {seqs} if alpha = {ALPHA} holds; "
                 + (f"< 1x from batch {even}" if even else "pays to batch 4096"),
                 "speculative_decoding",
                 f"'{{\"method\": \"ngram\", \"num_speculative_tokens\": {DRAFT_TOKENS}}}'"),
    )  # fmt: skip
    return Recipe(
        gpu, model, fmt, w, tp, kv_dtype, room, fit, by_tpot, seqs, chosen.budget,
        chosen.steps, chosen.worst_step_s, even, rows,
    )  # fmt: skip


def speedups(r: Recipe) -> tuple[float, float]:
    """n-gram speculation's floor speed-up at batch 1 and at the recipe's max_num_seqs."""
    args = dict(context=r.workload.decode_context, alpha=ALPHA, draft_tokens=DRAFT_TOKENS)
    one = batched_speedup(r.gpu, r.model, batch=1, fmt=r.fmt, **args)
    full = batched_speedup(r.gpu, r.model, batch=r.max_num_seqs, fmt=r.fmt, **args)
    return one, full


def command(r: Recipe, repo: str) -> str:
    flags = [f"{d.flag} {d.arg or d.value}" for d in r.decisions if not d.value.startswith("(")]
    return " \\\n    ".join([f"vllm serve {repo}", *flags])


SERVE_DEFAULT_GPUS = ("rtx_4090", "l40s", "a100_80gb_sxm", "h100_sxm", "h200_sxm")


def serve_defaults(keys=SERVE_DEFAULT_GPUS) -> list[str]:
    """LLM(...) against `vllm serve`: the batch defaults each picks on each card."""
    gpus = load_gpus()
    lines = [f"{'GPU':<14}{'LLM seqs':>10}{'LLM tokens':>12}{'serve seqs':>12}{'serve tokens':>14}"]
    for key in keys:
        llm, serve = batch_defaults(gpus[key], "llm"), batch_defaults(gpus[key], "serve")
        lines.append(
            f"{gpus[key].name:<14}{llm.max_num_seqs:>10}{llm.max_num_batched_tokens:>12}"
            f"{serve.max_num_seqs:>12}{serve.max_num_batched_tokens:>14}"
        )
    return lines


def main() -> None:
    r = recipe()
    w = r.workload
    print(f"{r.model.name} on one {r.gpu.name}; prompts <= {w.max_prompt} (mean {w.mean_prompt}),")
    print(f"answers <= {w.max_output} (mean {w.mean_output}), p99 TPOT target {w.tpot_ms:g} ms")
    print()
    print(f"{'flag':<26}{'value':<14}{'default':<14}{'lesson':<30}why")
    for d in r.decisions:
        print(f"{d.flag:<26}{d.value:<14}{d.default:<14}{d.lesson:<30}{d.why}")
    one, full = speedups(r)
    print()
    print(
        f"n-gram speculation (alpha {ALPHA}, {DRAFT_TOKENS} draft tokens): {one:.2f}x at batch 1,"
    )
    print(f"{full:.2f}x at batch {r.max_num_seqs}")
    print()
    print(command(r, r.model.hf_repo))


if __name__ == "__main__":
    main()
