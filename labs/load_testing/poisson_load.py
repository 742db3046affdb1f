"""A load test in-process: requests sent at seeded Poisson (or gamma) times to vLLM's AsyncLLM.

For each request rate, the same number of requests is sent at times drawn as `vllm bench serve
--request-rate R --burstiness b` draws them (snippets/load_testing/arrivals.py: gamma gaps with
mean 1/R, b = 1 is Poisson). Every request streams its output (RequestOutputKind.DELTA), and the
client stamps each chunk on arrival, as a streaming HTTP client would. TTFT, TPOT, ITL, E2E and
goodput for the given SLOs come from snippets/latency_metrics/metrics.py, the definitions the
lessons use (vllm/benchmarks/serve.py's). One engine serves every rate, idle between them, after
an unmeasured warm-up; prefix caching is off (distinct prompts anyway); every request generates
exactly --output-tokens tokens (ignore_eos).

  python labs/load_testing/poisson_load.py                  # Qwen2.5-7B-Instruct-AWQ on a GPU
  .venv-labs/bin/python labs/load_testing/poisson_load.py --dummy --config tiny \\
      --rates 2,8 --requests 8 --prompt-tokens 32 --output-tokens 8   # CPU smoke
"""

import argparse
import asyncio
import time

import labkit as lab

RATES = [1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0]  # requests per second
REQUESTS = 200  # per rate
PROMPT_TOKENS = 512
OUTPUT_TOKENS = 128
SLO_TTFT_MS = 1000.0
SLO_TPOT_MS = 50.0


async def send(engine, i: int, prompt: list[int], params, start: float, at_s: float):
    """Waits until its send time, then streams one request; returns a StreamedRequest."""
    from latency_metrics.metrics import StreamedRequest

    await asyncio.sleep(max(0.0, start + at_s - time.perf_counter()))
    sent = time.perf_counter()
    times, tokens = [], []
    async for out in engine.generate({"prompt_token_ids": prompt}, params, request_id=f"r{i}"):
        new = len(out.outputs[0].token_ids)  # DELTA: only the tokens of this chunk
        if new:
            times.append(time.perf_counter() - sent)
            tokens.append(new)
    return StreamedRequest(f"r{i}", sent - start, len(prompt), tuple(times), tuple(tokens))


async def run_rate(engine, prompts, params, send_times: list[float]) -> list:
    start = time.perf_counter()
    tasks = [
        asyncio.create_task(send(engine, i, p, params, start, t))
        for i, (p, t) in enumerate(zip(prompts, send_times, strict=True))
    ]
    return list(await asyncio.gather(*tasks))


def summary(rate: float, requests: list, slo_ms: dict[str, float]) -> dict:
    from latency_metrics.metrics import goodput, percentile, summarize

    m = summarize(requests)
    ttft = [r.ttft_s for r in requests]
    tpot = [r.tpot_s for r in requests if r.tpot_s is not None]
    itl = [gap for r in requests for gap in r.itl_s]
    e2e = [r.e2e_s for r in requests]
    row = {"rate": rate, "requests": len(requests), "duration_s": m["duration_s"]}
    row |= {"request_throughput": m["request_throughput"], "goodput": goodput(requests, slo_ms)}
    row["output_throughput"] = m["output_throughput"]
    for name, values in (("ttft", ttft), ("tpot", tpot), ("itl", itl), ("e2e", e2e)):
        for q in (50, 99):
            row[f"{name}_p{q}_s"] = percentile(values, q) if values else None
    return row


async def load_test(opts: argparse.Namespace, spec: lab.LabModel, backend: str) -> dict:
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.sampling_params import RequestOutputKind, SamplingParams
    from vllm.usage.usage_lib import UsageContext
    from vllm.v1.engine.async_llm import AsyncLLM

    from load_testing.arrivals import arrival_times

    max_model_len = opts.max_model_len or opts.prompt_tokens + opts.output_tokens  # as pre-flight
    # the labs' shared settings (no prefix caching: every prompt is distinct anyway)
    settings = lab.engine_arguments(spec, backend, max_model_len, opts, max_model_len * 16)
    # SERVER: the batch defaults `vllm serve` gets (EngineArgs.get_batch_defaults: 2,048 tokens
    # per step and 256 sequences on GPUs under 70 GiB, 8,192 and 1,024 above); from_engine_args'
    # own default (the engine context) has none and falls back to 2,048 and 128 on any GPU
    engine = AsyncLLM.from_engine_args(
        AsyncEngineArgs(**settings), usage_context=UsageContext.OPENAI_API_SERVER
    )
    try:
        vocab = engine.model_config.get_vocab_size()
        lab.check_weight_format(spec, engine.model_config.quantization)
        params = SamplingParams(
            max_tokens=opts.output_tokens,
            ignore_eos=True,  # exactly output_tokens tokens per request
            detokenize=False,
            output_kind=RequestOutputKind.DELTA,  # each output holds only its new tokens
        )
        warm = [lab.prompt_ids(opts.prompt_tokens, vocab, opts.seed - 1 - i) for i in range(2)]
        await run_rate(engine, warm, params, [0.0, 0.0])  # unmeasured: compile and allocate
        slo_ms = {"ttft": opts.slo_ttft_ms, "tpot": opts.slo_tpot_ms}
        rows, summaries = [], []
        for k, rate in enumerate(opts.rates):
            seed = opts.seed + 1000 * k
            prompts = [
                lab.prompt_ids(opts.prompt_tokens, vocab, seed + i) for i in range(opts.requests)
            ]
            for prompt in prompts:
                lab.validate_token_ids(prompt, vocab)
            times = arrival_times(opts.requests, rate, opts.burstiness, opts.seed).tolist()
            requests = await run_rate(engine, prompts, params, times)
            s = summary(rate, requests, slo_ms)
            summaries.append(s)
            print(
                f"{rate:>6g} {s['ttft_p50_s'] * 1e3:>9.1f} {s['ttft_p99_s'] * 1e3:>9.1f} "
                f"{s['tpot_p50_s'] * 1e3:>9.2f} {s['itl_p99_s'] * 1e3:>9.2f} "
                f"{s['request_throughput']:>7.2f} {s['goodput']:>7.2f}"
            )
            rows += [
                {
                    "series": "load",
                    "rate": rate,
                    "request": r.name,
                    "sent_s": r.sent_s,
                    "prompt_tokens": r.prompt_tokens,
                    "chunk_times_s": list(r.chunk_times_s),
                    "chunk_tokens": list(r.chunk_tokens),
                }
                for r in requests
            ]
        scheduler = lab.vllm_config(engine).scheduler_config
        parameters = lab.common_parameters(
            engine,
            opts,
            warmup=1,
            rates=opts.rates,
            burstiness=opts.burstiness,
            requests=opts.requests,
            prompt_tokens=opts.prompt_tokens,
            output_tokens=opts.output_tokens,
            slo_ms=slo_ms,
            max_num_seqs=scheduler.max_num_seqs,  # above it, requests wait: the tail grows
            max_num_batched_tokens=scheduler.max_num_batched_tokens,
        )
        doc = lab.results_document("load_test", backend, spec, engine, parameters, [])
        doc["measurements"] = rows
        doc["load_summaries"] = summaries
        return doc
    finally:
        engine.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument("--rates", type=lab.float_list, default=RATES, help="req/s, comma list")
    parser.add_argument("--requests", type=int, default=REQUESTS, help="requests per rate")
    parser.add_argument("--burstiness", type=float, default=1.0, help="gamma shape; 1 = Poisson")
    parser.add_argument("--prompt-tokens", type=int, default=PROMPT_TOKENS, help="per request")
    parser.add_argument("--output-tokens", type=int, default=OUTPUT_TOKENS, help="per request")
    parser.add_argument("--slo-ttft-ms", type=float, default=SLO_TTFT_MS, help="goodput: TTFT")
    parser.add_argument("--slo-tpot-ms", type=float, default=SLO_TPOT_MS, help="goodput: TPOT")
    opts = parser.parse_args()
    if opts.requests < 2 or opts.prompt_tokens < 1 or opts.output_tokens < 2:
        parser.error("--requests and --output-tokens must be >= 2, --prompt-tokens >= 1")
    if not opts.burstiness > 0 or not (opts.slo_ttft_ms > 0 and opts.slo_tpot_ms > 0):
        parser.error("--burstiness and the SLOs must be positive")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    max_model_len = opts.max_model_len or opts.prompt_tokens + opts.output_tokens
    longest = opts.prompt_tokens + opts.output_tokens
    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    lab.setup_environment(spec.dummy)
    print(
        f"{opts.requests} requests per rate, {opts.prompt_tokens}-token prompts, "
        f"{opts.output_tokens} new tokens each, burstiness {opts.burstiness:g}, seed {opts.seed}; "
        f"goodput SLOs: TTFT <= {opts.slo_ttft_ms:g} ms, TPOT <= {opts.slo_tpot_ms:g} ms"
    )
    print(f"{'req/s':>6} {'TTFT p50':>9} {'TTFT p99':>9} {'TPOT p50':>9} {'ITL p99':>9} "
          f"{'done/s':>7} {'goodput':>7}   (ms; req/s)")  # fmt: skip
    doc = asyncio.run(load_test(opts, spec, backend))
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
