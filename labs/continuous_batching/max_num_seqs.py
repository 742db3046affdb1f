"""Continuous batching in vLLM: one mixed request stream served with several max_num_seqs limits.

vLLM always batches continuously; max_num_seqs caps how many sequences one step may run. For each
value, a fresh engine (in a child process, so the GPU memory of the previous one is released)
serves the same seeded stream: fixed-length prompts, output lengths drawn from a geometric
distribution (numpy, the simulator's), each forced with ignore_eos so the lengths are exact. All
requests are handed over at once (an offline job); per request, vLLM's request metrics give TTFT,
TPOT and end-to-end latency, and the stream's output throughput is every new token over the span
from the first request queued to the last token. Prefix caching is off; a short unmeasured
warm-up runs first on each engine.

  python labs/continuous_batching/max_num_seqs.py             # Qwen2.5-7B-Instruct-AWQ on a GPU
  .venv-labs/bin/python labs/continuous_batching/max_num_seqs.py --dummy --config tiny \\
      --values 1,8 --requests 16 --prompt-tokens 32 --mean-output 8 --max-output 32   # CPU smoke
"""

import argparse
import json
import statistics
import sys
import time

import labkit as lab

VALUES = [1, 4, 16, 64, 256]
REQUESTS = 256
PROMPT_TOKENS = 256
MEAN_OUTPUT = 128  # geometric, as in the lesson's simulator
MAX_OUTPUT = 1024


def output_lengths(n: int, mean: float, cap: int, seed: int) -> list[int]:
    """n output lengths: geometric with this mean, cut at cap (the simulator's distribution)."""
    import numpy as np  # a dependency of vLLM

    rng = np.random.default_rng(seed)
    return [int(x) for x in np.minimum(rng.geometric(1 / mean, n), cap)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def serve(opts: argparse.Namespace, spec: lab.LabModel, backend: str, value: int) -> dict:
    """Child process: one engine with max_num_seqs=value serves the whole stream."""
    from vllm import SamplingParams

    max_model_len = opts.max_model_len or opts.prompt_tokens + opts.max_output  # as pre-flight
    lengths = output_lengths(opts.requests, opts.mean_output, opts.max_output, opts.seed)
    llm = lab.start_engine(
        spec,
        backend,
        max_model_len,
        opts,
        kv_tokens=max_model_len * value,  # CPU: every running sequence at its longest
        max_num_seqs=value,  # the knob: sequences one step may run
    )
    vocab = llm.model_config.get_vocab_size()
    prompts = [
        lab.prompt_ids(opts.prompt_tokens, vocab, opts.seed + i) for i in range(len(lengths))
    ]
    for prompt in prompts:
        lab.validate_token_ids(prompt, vocab)
    params = [SamplingParams(max_tokens=n, ignore_eos=True, detokenize=False) for n in lengths]
    # warm-up, unmeasured: the first steps of a fresh engine compile and allocate
    warm = [{"prompt_token_ids": p} for p in prompts[: min(value, 8)]]
    warm_params = SamplingParams(max_tokens=2, ignore_eos=True, detokenize=False)
    llm.generate(warm, warm_params, use_tqdm=False)
    t0 = time.perf_counter()
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    wall = time.perf_counter() - t0
    rows = [lab.measurement("max_num_seqs", f"max_num_seqs {value}", 0, o, wall) for o in outs]
    # engine-core timestamps (monotonic, one clock for every request of the call)
    span = max(o.metrics.last_token_ts for o in outs) - min(o.metrics.queued_ts for o in outs)
    latencies = [o.metrics.last_token_ts - o.metrics.queued_ts for o in outs]
    summary = {
        "max_num_seqs": value,
        "output_tokens_per_s": sum(r.new_tokens for r in rows) / span,
        "span_s": span,
        "latency_p50_s": percentile(latencies, 50),
        "latency_p99_s": percentile(latencies, 99),
        "ttft_p50_s": percentile([r.ttft_s for r in rows], 50),
        "ttft_p99_s": percentile([r.ttft_s for r in rows], 99),
        "tpot_p50_s": statistics.median(r.tpot_s for r in rows if r.tpot_s is not None),
    }
    parameters = lab.common_parameters(llm, opts)
    doc = lab.results_document("max_num_seqs", backend, spec, llm, parameters, rows)
    doc["max_num_seqs_summaries"] = [summary]
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument(
        "--values", type=lab.int_list, default=VALUES, help="max_num_seqs, comma list"
    )
    parser.add_argument("--requests", type=int, default=REQUESTS, help="requests in the stream")
    parser.add_argument("--prompt-tokens", type=int, default=PROMPT_TOKENS, help="per request")
    parser.add_argument("--mean-output", type=float, default=MEAN_OUTPUT, help="geometric mean")
    parser.add_argument("--max-output", type=int, default=MAX_OUTPUT, help="max_tokens cap")
    parser.add_argument("--only", type=int, default=None, help=argparse.SUPPRESS)  # child mode
    opts = parser.parse_args()
    if opts.requests < 1 or opts.prompt_tokens < 1 or opts.mean_output < 1 or opts.max_output < 2:
        parser.error("--requests, --prompt-tokens, --mean-output must be >= 1, --max-output >= 2")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    max_model_len = opts.max_model_len or opts.prompt_tokens + opts.max_output
    longest = opts.prompt_tokens + opts.max_output
    if opts.only is not None:  # child: serve once, write the partial document, exit
        backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
        lab.setup_environment(spec.dummy)
        doc = serve(opts, spec, backend, opts.only)
        opts.out.write_text(json.dumps(doc) + "\n", encoding="utf-8")
        return

    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    lengths = output_lengths(opts.requests, opts.mean_output, opts.max_output, opts.seed)
    print(
        f"stream: {opts.requests} requests, {opts.prompt_tokens}-token prompts, outputs geometric "
        f"(mean {opts.mean_output:g}, cut at {opts.max_output}): drawn mean "
        f"{statistics.mean(lengths):.1f}, max {max(lengths)}, seed {opts.seed}"
    )
    keys = [str(v) for v in opts.values]
    docs = lab.run_children(__file__, sys.argv[1:], keys, "max_num_seqs")

    print(f"\n{'max_num_seqs':>12} {'tok/s':>8} {'p50 lat s':>9} {'p99 lat s':>9} "
          f"{'p50 TTFT s':>10} {'p99 TTFT s':>10} {'p50 TPOT ms':>11}")  # fmt: skip
    doc = lab.merge_children(docs, "max_num_seqs_summaries")
    summaries = doc["max_num_seqs_summaries"]
    for s in summaries:
        print(
            f"{s['max_num_seqs']:>12} {s['output_tokens_per_s']:8,.0f} {s['latency_p50_s']:9.2f} "
            f"{s['latency_p99_s']:9.2f} {s['ttft_p50_s']:10.2f} {s['ttft_p99_s']:10.2f} "
            f"{s['tpot_p50_s'] * 1e3:11.2f}"
        )
    doc["parameters"] |= {  # the child's engine parameters, and the sweep's
        "warmup": 1,
        "values": opts.values,
        "requests": opts.requests,
        "prompt_tokens": opts.prompt_tokens,
        "mean_output": opts.mean_output,
        "max_output": opts.max_output,
        "output_lengths": lengths,
    }
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
