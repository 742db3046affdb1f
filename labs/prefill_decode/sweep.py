"""Sweep the two phases: TTFT against prompt length, time per output token against output length.

prompt sweep: for each prompt length S, a few new tokens -> TTFT(S) and ms/token at context ~S
output sweep: one short prompt, for each n, n new tokens -> wall time(n) and ms/token
Each point runs --repeats times after a warm-up; prefix caching is off; timings come from vLLM's
request metrics. Writes a results JSON (labs/results/schema.json) and prints medians.

  python labs/prefill_decode/sweep.py                      # Qwen2.5-7B-Instruct-AWQ on a GPU
  .venv-labs/bin/python labs/prefill_decode/sweep.py --dummy --config tiny \\
      --prompt-lens 16,64,256 --output-lens 4,8,16 --repeats 1      # CPU smoke run
"""

import argparse
import itertools
import statistics
import time

import labkit as lab

PROMPT_LENS = [128, 256, 512, 1024, 2048, 4096, 8192]
OUTPUT_LENS = [16, 32, 64, 128, 256, 512]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument("--prompt-lens", type=lab.int_list, default=PROMPT_LENS, help="comma list")
    parser.add_argument("--context-new", type=int, default=32, help="new tokens, prompt sweep")
    parser.add_argument("--output-lens", type=lab.int_list, default=OUTPUT_LENS, help="comma list")
    parser.add_argument("--short-prompt", type=int, default=32, help="prompt tokens, output sweep")
    parser.add_argument("--repeats", type=int, default=3, help="calls per point (median reported)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured warm-up rounds")
    opts = parser.parse_args()
    if opts.context_new < 2:
        parser.error("--context-new must be at least 2 (time per token needs two tokens)")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    longest = max(
        max(opts.prompt_lens) + opts.context_new, opts.short_prompt + max(opts.output_lens)
    )
    max_model_len = opts.max_model_len or longest
    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    lab.setup_environment(spec.dummy)

    from vllm import SamplingParams

    llm = lab.start_engine(spec, backend, max_model_len, opts)
    vocab = llm.model_config.get_vocab_size()
    seeds = itertools.count(opts.seed)  # a fresh prompt for every call

    def one(series: str, prompt_tokens: int, new_tokens: int, repeat: int) -> lab.Measurement:
        prompt = lab.prompt_ids(prompt_tokens, vocab, next(seeds))
        lab.validate_token_ids(prompt, vocab)
        params = SamplingParams(max_tokens=new_tokens, ignore_eos=True, detokenize=False)
        t0 = time.perf_counter()
        [out] = llm.generate([{"prompt_token_ids": prompt}], params, use_tqdm=False)
        label = f"prompt {prompt_tokens}, {new_tokens} new"
        return lab.measurement(series, label, repeat, out, time.perf_counter() - t0)

    for _ in range(opts.warmup):  # compile and allocate for the extremes, unmeasured
        for prompt_tokens in (min(opts.prompt_lens), max(opts.prompt_lens)):
            one("warmup", prompt_tokens, opts.context_new, 0)

    rows: list[lab.Measurement] = []
    for repeat in range(opts.repeats):  # interleave repeats so drift spreads over every point
        rows += [one("prompt_sweep", s, opts.context_new, repeat) for s in opts.prompt_lens]
        rows += [one("output_sweep", opts.short_prompt, n, repeat) for n in opts.output_lens]

    def median(series: str, field: str, **match: int) -> float:
        return statistics.median(
            getattr(m, field)
            for m in rows
            if m.series == series and all(getattr(m, k) == v for k, v in match.items())
        )

    print(f"\nprompt sweep: {opts.context_new} new tokens per call, median of {opts.repeats}")
    print(f"{'prompt':>7} {'TTFT ms':>9} {'prefill ms':>10} {'ms/token':>9}")
    for s in opts.prompt_lens:
        ttft = median("prompt_sweep", "ttft_s", prompt_tokens=s)
        prefill = median("prompt_sweep", "prefill_s", prompt_tokens=s)
        tpot = median("prompt_sweep", "tpot_s", prompt_tokens=s)
        print(f"{s:>7} {ttft * 1e3:9.1f} {prefill * 1e3:10.1f} {tpot * 1e3:9.2f}")

    print(f"\noutput sweep: {opts.short_prompt}-token prompt, median of {opts.repeats}")
    print(f"{'new':>7} {'wall s':>9} {'decode s':>10} {'ms/token':>9}")
    walls = [median("output_sweep", "wall_s", new_tokens=n) for n in opts.output_lens]
    for n, wall in zip(opts.output_lens, walls, strict=True):
        decode = median("output_sweep", "decode_s", new_tokens=n)
        tpot = decode / (n - 1) * 1e3 if n > 1 else float("nan")
        print(f"{n:>7} {wall:9.3f} {decode:10.3f} {tpot:9.2f}")
    if len(opts.output_lens) >= 2:
        fit = lab.linear_fit(opts.output_lens, walls)
        print(
            f"wall ~= {fit.intercept:.3f} s + {fit.slope * 1e3:.2f} ms x new tokens "
            f"(R^2 = {fit.r2:.4f})"
        )

    parameters = lab.common_parameters(
        llm,
        opts,
        warmup=opts.warmup,
        repeats=opts.repeats,
        prompt_lens=opts.prompt_lens,
        context_new=opts.context_new,
        output_lens=opts.output_lens,
        short_prompt=opts.short_prompt,
    )
    doc = lab.results_document("sweep", backend, spec, llm, parameters, rows)
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
