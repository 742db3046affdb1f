"""N-gram speculative decoding in vLLM, on and off: acceptance per position, TPOT and throughput.

An extractive workload: every request's prompt is a passage of token ids repeated --copies times,
the text a summarise-or-copy task hands a model, so the n-gram proposer (prompt lookup) finds
what to draft. For each configuration, one engine: "off" (plain decoding) and "ngram"
(speculative_config method "ngram", gamma = --gamma draft tokens, matches of --lookup-min ..
--lookup-max tokens). After an unmeasured warm-up at the largest batch, for each batch size B
(default 1 and 32): B requests with distinct passages, exactly --new-tokens each, one generate()
call. Per request vLLM's request metrics give TPOT; per call, the output throughput and the
deltas of the engine's spec-decode counters (LLM.get_metrics(), read before and after the call):
vllm:spec_decode_num_drafts, _num_draft_tokens, _num_accepted_tokens and
_num_accepted_tokens_per_pos. From them: the mean acceptance length 1 + accepted / drafts, the
rate per position, the alpha the lesson's E(alpha, gamma) gives for that length, and the lesson's
predicted speed-up at that alpha (snippets/speculative_decoding/lab_results.py). The engine's
own totals at the end are recorded too: the calls' deltas must add up to them. Both engines
schedule synchronously: vLLM turns asynchronous scheduling off with n-gram drafts, and the
baseline should differ from them in speculation alone.

  python labs/speculative_decoding/ngram_lookup.py             # Qwen2.5-7B-Instruct-AWQ on a GPU
  .venv-labs/bin/python labs/speculative_decoding/ngram_lookup.py --config tiny \\
      --batches 1,4 --passage-tokens 16 --copies 4 --new-tokens 24 --repeats 1   # CPU smoke
"""

import argparse
import itertools
import statistics
import time

import labkit as lab
from speculative_decoding import lab_results as lesson

COUNTERS = {  # LLM.get_metrics() names (Prometheus drops "_total" there) -> the results' keys
    "vllm:spec_decode_num_drafts": "num_drafts",
    "vllm:spec_decode_num_draft_tokens": "num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens": "num_accepted_tokens",
}
PER_POSITION = "vllm:spec_decode_num_accepted_tokens_per_pos"  # a Vector: one count per position


def spec_counters(llm, gamma: int) -> dict:
    """The engine's spec-decode counters now (all zero for an engine without speculation)."""
    found = {key: 0 for key in COUNTERS.values()} | {"accepted_per_pos": [0] * gamma}
    for metric in llm.get_metrics():
        if metric.name in COUNTERS:
            found[COUNTERS[metric.name]] += int(metric.value)
        elif metric.name == PER_POSITION:
            values = [int(v) for v in metric.values]
            if len(values) != gamma:
                raise RuntimeError(f"{PER_POSITION} has {len(values)} positions, not {gamma}")
            summed = zip(found["accepted_per_pos"], values, strict=True)
            found["accepted_per_pos"] = [a + b for a, b in summed]
    return found


def delta(after: dict, before: dict) -> dict:
    return {
        key: [a - b for a, b in zip(value, before[key], strict=True)]
        if isinstance(value, list)
        else value - before[key]
        for key, value in after.items()
    }


def extractive_prompt(passage_tokens: int, copies: int, vocab: int, seed: int) -> list[int]:
    """A passage of token ids, repeated: every n-gram of the output's copy is in the prompt."""
    return lab.prompt_ids(passage_tokens, vocab, seed) * copies


def speculative_config(config: str, opts: argparse.Namespace) -> dict | None:
    if config == "off":
        return None
    return {
        "method": "ngram",
        "num_speculative_tokens": opts.gamma,
        "prompt_lookup_min": opts.lookup_min,
        "prompt_lookup_max": opts.lookup_max,
    }


def config_list(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names or any(c not in lesson.CONFIGS for c in names):
        raise argparse.ArgumentTypeError(f"expected some of {','.join(lesson.CONFIGS)}")
    return [c for c in lesson.CONFIGS if c in names]  # off first: the baseline


def measured_call(
    llm, prompts: list[list[int]], params, gamma: int, series: str, repeat: int
) -> tuple[list[lab.Measurement], dict]:
    """One generate() call of len(prompts) requests: each request's timings, and the call's
    median TPOT, output throughput and spec-decode counters (deltas around the call)."""
    vocab = llm.model_config.get_vocab_size()
    for prompt in prompts:
        lab.validate_token_ids(prompt, vocab)
    before = spec_counters(llm, gamma)
    t0 = time.perf_counter()
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    wall = time.perf_counter() - t0
    counted = delta(spec_counters(llm, gamma), before)
    label = f"batch {len(prompts)}"
    measured = [lab.measurement(series, label, repeat, o, wall) for o in outs]
    # engine-core timestamps: one monotonic clock for every request of the call
    span = max(o.metrics.last_token_ts for o in outs) - min(o.metrics.queued_ts for o in outs)
    return measured, {
        "tpot_s": statistics.median(m.tpot_s for m in measured),
        "output_tokens_per_s": sum(m.new_tokens for m in measured) / span,
        "span_s": span,
        **counted,
    }


def counters_text(acc: "lesson.Acceptance | None", gamma: int) -> str:
    if acc is None:
        return "no drafts"
    rates = " ".join(f"{r:.2f}" for r in acc.rate_per_pos)
    return (
        f"drafts {acc.drafts}, draft tokens {acc.draft_tokens}, accepted {acc.accepted}; "
        f"mean acceptance length {acc.mean_length:.2f}, alpha {acc.alpha(gamma):.3f}; "
        f"rate per position {rates}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument(
        "--configs", type=config_list, default=list(lesson.CONFIGS), help="off,ngram (default)"
    )
    parser.add_argument("--gamma", type=int, default=lesson.LAB_GAMMA, help="draft tokens")
    parser.add_argument("--lookup-min", type=int, default=lesson.LAB_LOOKUP_MIN)
    parser.add_argument("--lookup-max", type=int, default=lesson.LAB_LOOKUP_MAX)
    parser.add_argument("--passage-tokens", type=int, default=lesson.LAB_PASSAGE_TOKENS)
    parser.add_argument("--copies", type=int, default=lesson.LAB_COPIES, help="of the passage")
    parser.add_argument("--new-tokens", type=int, default=lesson.LAB_NEW_TOKENS)
    parser.add_argument(
        "--batches",
        type=lab.int_list,
        default=list(lesson.LAB_BATCHES),
        help=f"comma list of B (default {','.join(map(str, lesson.LAB_BATCHES))})",
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds over the batch sizes")
    opts = parser.parse_args()
    if not 1 <= opts.lookup_min <= opts.lookup_max:
        parser.error("need 1 <= --lookup-min <= --lookup-max")
    if opts.gamma < 1 or opts.new_tokens < 2 or opts.repeats < 1:
        parser.error("--gamma and --repeats must be at least 1, --new-tokens at least 2")
    if opts.passage_tokens < opts.lookup_max + 1 or opts.copies < 2:
        parser.error("the passage must be longer than --lookup-max and appear at least twice")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    prompt_tokens = opts.passage_tokens * opts.copies
    # a verification step may hold gamma draft positions beyond the last token
    context = prompt_tokens + opts.new_tokens + opts.gamma
    max_model_len = opts.max_model_len or context
    backend = lab.preflight(spec, max_model_len, context, opts.gpu_memory_utilization)
    lab.setup_environment(spec.dummy)

    from vllm import SamplingParams

    largest = max(opts.batches)
    # greedy: a draft token is kept exactly when it is the target's argmax (the lesson's rule)
    params = SamplingParams(
        max_tokens=opts.new_tokens, temperature=0.0, ignore_eos=True, detokenize=False
    )
    rows: list[lab.Measurement] = []
    summaries: list[dict] = []
    totals: dict[str, dict] = {}
    seeds = itertools.count(opts.seed)  # a fresh passage for every request
    for config in opts.configs:
        llm = lab.start_engine(
            spec,
            backend,
            max_model_len,
            opts,
            kv_tokens=context * largest,  # CPU: room for the largest batch's KV cache
            max_num_seqs=largest,
            speculative_config=speculative_config(config, opts),
            # vLLM 0.26 turns asynchronous scheduling off with ngram drafts (config/vllm.py); off
            # for both engines, so that they differ in speculation alone
            async_scheduling=False,
        )
        vocab = llm.model_config.get_vocab_size()

        # an unmeasured warm-up at the largest batch (allocation, first drafts), then the rounds
        plan = [("warmup", 0, largest)]
        plan += [("measured", r, b) for r in range(opts.repeats) for b in opts.batches]
        for phase, repeat, b in plan:
            prompts = [
                extractive_prompt(opts.passage_tokens, opts.copies, vocab, next(seeds))
                for _ in range(b)
            ]
            measured, summary = measured_call(
                llm, prompts, params, opts.gamma, f"spec_{config}", repeat
            )
            summaries.append(
                {"config": config, "phase": phase, "batch": b, "repeat": repeat} | summary
            )
            if phase == "measured":
                rows += measured
        totals[config] = spec_counters(llm, opts.gamma)
        print(f"engine counters at the end ({config}): {totals[config]}")
        if config != opts.configs[-1]:
            lab.stop_engine(llm)

    print(
        f"\n{lesson.LAB}: prompts of {opts.passage_tokens} tokens x {opts.copies}, "
        f"{opts.new_tokens} new tokens, gamma {opts.gamma}, lookup {opts.lookup_min}.."
        f"{opts.lookup_max}"
    )
    print(f"{'config':<7} {'B':>4} {'TPOT ms':>9} {'tok/s':>9}  counters")
    for b in opts.batches:
        for config in opts.configs:
            mine = [
                s
                for s in summaries
                if (s["config"], s["batch"], s["phase"]) == (config, b, "measured")
            ]
            tpot = statistics.median(s["tpot_s"] for s in mine)
            tps = statistics.median(s["output_tokens_per_s"] for s in mine)
            counted = counters_text(lesson.pooled(mine), opts.gamma)
            print(f"{config:<7} {b:>4} {tpot * 1e3:9.2f} {tps:9,.0f}  {counted}")

    parameters = lab.common_parameters(
        llm,  # the last engine; every engine had the same settings but speculative_config
        opts,
        warmup=1,
        repeats=opts.repeats,
        configs=opts.configs,
        gamma=opts.gamma,
        lookup_min=opts.lookup_min,
        lookup_max=opts.lookup_max,
        passage_tokens=opts.passage_tokens,
        copies=opts.copies,
        prompt_tokens=prompt_tokens,
        new_tokens=opts.new_tokens,
        batches=opts.batches,
        max_num_seqs=largest,
    )
    doc = lab.results_document(lesson.LAB, backend, spec, llm, parameters, rows)
    doc["speculation"] = summaries
    doc["spec_engine_counters"] = totals
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
