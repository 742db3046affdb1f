"""Prefix caching on and off: cached tokens per request and TTFT, one engine, one request stream.

A stream of requests: each of --system-prompts system prompts is followed by --requests different
questions. Run "off": the prefix cache is reset (LLM.reset_prefix_cache) before every request,
so nothing is reused. Run "on": reset once, then the same stream; every request after a system
prompt's first should reuse that prompt's full blocks. Requests go one at a time (no batching),
so each TTFT is one prefill. RequestOutput.num_cached_tokens is compared with the lesson's
cached_tokens(); vLLM's own counters (LLM.get_metrics: vllm:prefix_cache_hits / _queries) are
printed too.

  python labs/prefix_caching/prefix_cache.py                       # Qwen2.5-7B-Instruct-AWQ, GPU
  .venv-labs/bin/python labs/prefix_caching/prefix_cache.py --dummy --config tiny   # CPU smoke
"""

import argparse
import statistics
import time

import labkit as lab
from prefix_caching.reuse import cached_tokens


def reset_cache(llm) -> None:
    """Empties the prefix cache, or stops the lab: vLLM 0.26 returns False (and keeps every block)
    while a request still holds blocks, and the "off" run would then silently hit the cache."""
    if not llm.reset_prefix_cache():
        raise RuntimeError(
            "llm.reset_prefix_cache() returned False: a request still holds cached blocks, so "
            "the cache was not emptied and the next request could reuse them"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument("--system-prompt", type=int, default=2000, help="tokens per system prompt")
    parser.add_argument("--system-prompts", type=int, default=2, help="distinct system prompts")
    parser.add_argument("--question", type=int, default=64, help="tokens per question")
    parser.add_argument("--requests", type=int, default=4, help="questions per system prompt")
    parser.add_argument("--new-tokens", type=int, default=8, help="new tokens per request")
    opts = parser.parse_args()
    for name in ("system_prompt", "system_prompts", "question", "requests", "new_tokens"):
        if getattr(opts, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    prompt_len = opts.system_prompt + opts.question
    max_model_len = opts.max_model_len or prompt_len + opts.new_tokens
    backend = lab.preflight(
        spec, max_model_len, prompt_len + opts.new_tokens, opts.gpu_memory_utilization
    )
    lab.setup_environment(spec.dummy)

    from vllm import SamplingParams

    llm = lab.start_engine(
        spec,
        backend,
        max_model_len,
        opts,
        enable_prefix_caching=True,  # vLLM's default, stated: this lab is about it
    )
    vocab = llm.model_config.get_vocab_size()
    block_size = llm.llm_engine.vllm_config.cache_config.block_size
    systems = [
        lab.prompt_ids(opts.system_prompt, vocab, 1000 + opts.seed + k)
        for k in range(opts.system_prompts)
    ]
    requests = []  # (label, system prompt index, token ids), the system prompts interleaved
    for r in range(opts.requests):
        for k in range(opts.system_prompts):
            question = lab.prompt_ids(opts.question, vocab, 2000 + opts.seed + 97 * r + k)
            requests.append((f"system {k} question {r}", k, systems[k] + question))
    params = SamplingParams(max_tokens=opts.new_tokens, ignore_eos=True, detokenize=False)

    def one(series: str, label: str, prompt: list[int]) -> lab.Measurement:
        lab.validate_token_ids(prompt, vocab)
        t0 = time.perf_counter()
        [out] = llm.generate([{"prompt_token_ids": prompt}], params, use_tqdm=False)
        return lab.measurement(series, label, 0, out, time.perf_counter() - t0)

    one("warm-up", "warm-up", lab.prompt_ids(prompt_len, vocab, opts.seed))  # not measured
    rows = []
    print(f"{'run':<17} {'request':<22} {'prompt':>7} {'cached':>7} {'expected':>9} {'TTFT ms':>9}")
    for series in ("prefix_cache_off", "prefix_cache_on"):
        reset_cache(llm)  # nothing from the warm-up or the other run
        seen: set[int] = set()
        for label, k, prompt in requests:
            if series == "prefix_cache_off":
                reset_cache(llm)  # off: nothing survives between requests
            rows.append(one(series, label, prompt))
            shared = opts.system_prompt if series == "prefix_cache_on" and k in seen else 0
            expected = cached_tokens(shared, len(prompt), block_size)
            seen.add(k)
            m = rows[-1]
            print(
                f"{series:<17} {label:<22} {m.prompt_tokens:>7} {m.cached_tokens:>7} "
                f"{expected:>9} {m.ttft_s * 1e3:>9.1f}"
            )

    def repeat_ttft_ms(series: str) -> float:
        """Median TTFT of the requests after each system prompt's first."""
        ttft = [m.ttft_s for m in rows if m.series == series and not m.label.endswith(" 0")]
        return statistics.median(ttft) * 1e3 if ttft else float("nan")

    print(
        f"\nmedian TTFT of repeat requests: off {repeat_ttft_ms('prefix_cache_off'):.1f} ms, "
        f"on {repeat_ttft_ms('prefix_cache_on'):.1f} ms (block size {block_size})"
    )
    counters = {m.name: m.value for m in llm.get_metrics() if "prefix_cache" in m.name}
    print(f"engine counters (both runs and the warm-up): {counters}")

    parameters = lab.common_parameters(
        llm,
        opts,
        warmup=1,
        system_prompt_tokens=opts.system_prompt,
        question_tokens=opts.question,
        system_prompts=opts.system_prompts,
        requests=opts.requests,
        new_tokens=opts.new_tokens,
        block_size=block_size,
    )
    doc = lab.results_document("prefix_cache", backend, spec, llm, parameters, rows)
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
