"""Batched decode in vLLM: TPOT and output throughput as B concurrent requests share each step.

For each batch size B: B requests with distinct prompts of the same length, each forced to produce
exactly the same number of new tokens, handed to the engine in one generate() call. Per request,
vLLM's request metrics give TPOT (first token -> last token, over the new tokens after the first);
per batch, output throughput is every new token over the span from the first request queued to the
last token, on the engine's own clock. Prefix caching is off.

A step schedules at most max_num_batched_tokens tokens, so a large batch prefills over several
steps, and the requests admitted first decode in steps that also carry the others' prefill: their
TPOT includes those heavier steps. The time of a decode step of the full batch (the lesson's bound)
comes from a second call with fewer new tokens: after the last request's first token, both calls
decode in the same way except for the extra new - short steps of the full batch, so
  decode step = (decode time of the call with `new` tokens - that of the call with `short`)
                / (new - short),  decode time = last token of the batch - last first token.
This holds while every request of the short call is still running when the last one starts
decoding (recorded as short_all_running; otherwise pass a larger --short-new-tokens).
Writes a results JSON (labs/results/schema.json) and prints one line per batch size.

  python labs/batched_decode/batch_sweep.py                    # Qwen2.5-7B-Instruct-AWQ on a GPU
  .venv-labs/bin/python labs/batched_decode/batch_sweep.py --dummy --config tiny \\
      --batches 1,4,16 --prompt-tokens 64 --new-tokens 16      # CPU smoke run
"""

import argparse
import itertools
import statistics
import time

import labkit as lab

BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256]
PROMPT_TOKENS = 512
NEW_TOKENS = 128
SHORT_NEW_TOKENS = 64  # the second call of each batch (the decode-step difference)


def batches_that_fit(spec: lab.LabModel, gpu_total: int, utilization: float, context: int) -> int:
    """How many sequences of `context` tokens hold their KV cache at once next to the weights."""
    need = lab.memory_need(spec.spec, spec.fmt, context)
    room = utilization * gpu_total - need.weights - need.runtime
    return int(room // need.kv_cache) if room > 0 else 0


def default_batches(fits: int | None) -> list[int]:
    """BATCHES up to what fits (all of them when the model is unknown): --dummy loads the BF16
    7B config, about 14.2 GiB of weights, so a 24 GB card holds a batch of about 140, not 256."""
    return [b for b in BATCHES if fits is None or b <= fits] or BATCHES[:1]


def check_batch_fits(
    spec: lab.LabModel, gpu_total: int, utilization: float, batch: int, context: int
) -> None:
    """Every sequence of the largest batch must hold its KV cache at once, or vLLM queues some."""
    if spec.spec is None:
        return
    need = lab.memory_need(spec.spec, spec.fmt, context)
    fits = batches_that_fit(spec, gpu_total, utilization, context)
    if batch > fits:
        raise lab.PreflightError(
            f"a batch of {batch} sequences of {context} tokens needs "
            f"{lab.gib(batch * need.kv_cache)} of KV cache; about {fits} fit next to the "
            f"weights in this GPU's {lab.gib(utilization * gpu_total)} budget",
            f"pass --batches up to {fits}, or shorter --prompt-tokens / --new-tokens",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument(
        "--batches",
        type=lab.int_list,
        default=None,
        help=f"comma list of B (default: {','.join(map(str, BATCHES))}, up to what fits)",
    )
    parser.add_argument("--prompt-tokens", type=int, default=PROMPT_TOKENS, help="per request")
    parser.add_argument("--new-tokens", type=int, default=NEW_TOKENS, help="per request")
    parser.add_argument(
        "--short-new-tokens", type=int, default=None, help="the second call (default: new / 2)"
    )
    parser.add_argument("--repeats", type=int, default=1, help="rounds over every batch size")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured rounds at the largest B")
    opts = parser.parse_args()
    if opts.new_tokens < 2:
        parser.error("--new-tokens must be at least 2 (TPOT needs two tokens)")
    short = opts.short_new_tokens or opts.new_tokens * SHORT_NEW_TOKENS // NEW_TOKENS
    if not 1 <= short < opts.new_tokens:
        parser.error("--short-new-tokens must be at least 1 and below --new-tokens")
    if opts.prompt_tokens < 1 or opts.repeats < 1 or opts.warmup < 0:
        parser.error("--prompt-tokens and --repeats must be positive, --warmup not negative")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    context = opts.prompt_tokens + opts.new_tokens
    max_model_len = opts.max_model_len or context
    backend = lab.preflight(spec, max_model_len, context, opts.gpu_memory_utilization)
    gpu = lab.probe_gpu() if backend == "cuda" else None
    if opts.batches is None:  # the default sweep, cut to what this GPU holds
        fits = None
        if gpu is not None and spec.spec is not None:
            fits = batches_that_fit(spec, gpu.total_bytes, opts.gpu_memory_utilization, context)
        opts.batches = default_batches(fits)
        if opts.batches != BATCHES:
            print(f"pre-flight: batches up to {max(opts.batches)}: about {fits} fit this GPU")
    largest = max(opts.batches)
    if gpu is not None:
        check_batch_fits(spec, gpu.total_bytes, opts.gpu_memory_utilization, largest, context)
    lab.setup_environment(spec.dummy)

    from vllm import SamplingParams

    llm = lab.start_engine(
        spec,
        backend,
        max_model_len,
        opts,
        kv_tokens=context * largest,  # CPU: room for the largest batch's KV cache
        max_num_seqs=largest,  # the scheduler may run every request of the largest batch at once
    )
    vocab = llm.model_config.get_vocab_size()
    seeds = itertools.count(opts.seed)  # a fresh prompt for every request

    def generate(b: int, new_tokens: int) -> tuple[list, float]:
        prompts = [lab.prompt_ids(opts.prompt_tokens, vocab, next(seeds)) for _ in range(b)]
        for prompt in prompts:
            lab.validate_token_ids(prompt, vocab)
        params = SamplingParams(max_tokens=new_tokens, ignore_eos=True, detokenize=False)
        t0 = time.perf_counter()
        outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
        return outs, time.perf_counter() - t0

    def decode_window(outs: list) -> float:
        """Last token of the batch minus the last first token: the steps after every prefill."""
        return max(o.metrics.last_token_ts for o in outs) - max(
            o.metrics.first_token_ts for o in outs
        )

    def batch(b: int, repeat: int, series: str = "batch_sweep"):
        outs, wall = generate(b, opts.new_tokens)
        rows = [lab.measurement(series, f"batch {b}", repeat, out, wall) for out in outs]
        # engine-core timestamps (monotonic, one clock for every request of the call)
        span = max(o.metrics.last_token_ts for o in outs) - min(o.metrics.queued_ts for o in outs)
        short_outs, _ = generate(b, short)
        window, short_window = decode_window(outs), decode_window(short_outs)
        summary = {
            "batch": b,
            "repeat": repeat,
            "tpot_s": statistics.median(r.tpot_s for r in rows),
            "decode_step_s": (window - short_window) / (opts.new_tokens - short),
            "decode_window_s": window,
            "short_decode_window_s": short_window,
            "short_all_running": min(o.metrics.last_token_ts for o in short_outs)
            >= max(o.metrics.first_token_ts for o in short_outs),
            "output_tokens_per_s": sum(r.new_tokens for r in rows) / span,
            "span_s": span,
            "wall_s": wall,
        }
        return rows, summary

    for _ in range(opts.warmup):  # compile and allocate for the largest batch, unmeasured
        batch(largest, 0, "warmup")

    rows: list[lab.Measurement] = []
    summaries: list[dict] = []
    for repeat in range(opts.repeats):
        for b in opts.batches:
            got, summary = batch(b, repeat)
            rows += got
            summaries.append(summary)

    print(f"\nbatch sweep: {opts.prompt_tokens}-token prompts, {opts.new_tokens} new tokens each")
    print(
        f"{'B':>5} {'step ms':>9} {'B/step tok/s':>13} {'req TPOT ms':>12} {'output tok/s':>13} "
        f"{'span s':>8}"
    )
    for b in opts.batches:
        mine = [s for s in summaries if s["batch"] == b]
        step = statistics.median(s["decode_step_s"] for s in mine)
        tpot = statistics.median(s["tpot_s"] for s in mine)
        tps = statistics.median(s["output_tokens_per_s"] for s in mine)
        span = statistics.median(s["span_s"] for s in mine)
        print(
            f"{b:>5} {step * 1e3:9.2f} {b / step:13,.0f} {tpot * 1e3:12.2f} {tps:13,.0f} "
            f"{span:8.3f}"
        )
    if not all(s["short_all_running"] for s in summaries):
        print("note: a short call ended a request before the last one decoded: the full-batch")
        print("      step is not exact there; run again with a larger --short-new-tokens")

    parameters = lab.common_parameters(
        llm,
        opts,
        warmup=opts.warmup,
        repeats=opts.repeats,
        batches=opts.batches,
        prompt_tokens=opts.prompt_tokens,
        new_tokens=opts.new_tokens,
        short_new_tokens=short,
        max_num_seqs=largest,
    )
    doc = lab.results_document("batch_sweep", backend, spec, llm, parameters, rows)
    doc["batch_summaries"] = summaries
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
