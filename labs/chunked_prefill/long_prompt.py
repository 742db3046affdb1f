"""Chunked prefill in vLLM: running decodes' inter-token latency when a long prompt arrives.

For each max_num_batched_tokens value (chunked prefill on), and once with chunked prefill off
(max_num_batched_tokens = max_model_len, the least vLLM 0.26.0 accepts without chunking:
SchedulerConfig.verify_max_model_len), a fresh engine in a child process runs this scene:
--decodes requests are decoding (each has produced --warm-tokens tokens), then one
--long-prompt-token prompt arrives; the scene ends when every request has finished. The engine is
driven step by step (LLM.llm_engine: add_request, step), and the time each step's outputs reach
this process is every token's timestamp, as a streaming client would see it. Reported per
engine: the decodes' inter-token latency (ITL) before the long prompt and while it is prefilled
(its arrival to its first token), the long prompt's TTFT, how many engine steps its prefill
spanned, and vLLM's preemption counter (LLM.get_metrics). Prefix caching is off.

  python labs/chunked_prefill/long_prompt.py                  # Qwen2.5-7B-Instruct-AWQ on a GPU
  .venv-labs/bin/python labs/chunked_prefill/long_prompt.py --dummy --config tiny \\
      --values 128,512 --decodes 4 --long-prompt 600 --decode-tokens 24   # CPU smoke
"""

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass

import labkit as lab

VALUES = [512, 1024, 2048]  # max_num_batched_tokens with chunked prefill on
DECODES = 16
DECODE_PROMPT = 256  # tokens of each running request's prompt
DECODE_TOKENS = 64  # each running request's output: enough to outlast the long prefill
WARM_TOKENS = 8  # tokens every decode has produced before the long prompt arrives
LONG_PROMPT = 6000
LONG_TOKENS = 8
# Each llm_engine.step() must be exactly one engine step, so that counting the outputs between the
# long prompt's arrival and its first token counts the steps its prefill took (the lesson's
# ceil(P / (T - D)) with chunking). By default the engine core runs in its own process, ahead of
# this one, so outputs of steps scheduled before the arrival still arrive after it; and on CUDA
# vLLM schedules asynchronously (step n+1 planned before step n's outputs are back), one more.
# In-process engine core (lab.ENGINE_IN_PROCESS) and synchronous scheduling: no step is in flight
# when step() returns.


@dataclass(frozen=True)
class SceneRow:
    label: str
    max_num_batched_tokens: int
    enable_chunked_prefill: bool
    decodes: int
    decode_tokens_out: list[int]  # tokens each decode produced: must equal --decode-tokens
    long_prompt_tokens: int
    long_tokens_out: int
    long_ttft_s: float  # arrival (add_request) -> its first token reaches this process
    prefill_steps: int  # engine outputs from its arrival up to and including its first token
    itl_before_p50_s: float  # decodes' gaps before the long prompt arrived
    itl_before_max_s: float
    itl_during_max_s: float  # decodes' largest gap ending while it was being prefilled
    itl_all_p50_s: float  # every gap of every decode
    preemptions: int  # vllm:num_preemptions: 0 unless the KV cache ran out


def scene(llm, opts: argparse.Namespace, vocab: int) -> dict:
    """Decodes running, then the long prompt: returns each request's token timestamps."""
    from vllm import SamplingParams

    llm_engine = llm.llm_engine  # the name check_vllm_api.py checks LLMEngine members by
    decode = SamplingParams(max_tokens=opts.decode_tokens, ignore_eos=True, detokenize=False)
    long = SamplingParams(max_tokens=opts.long_tokens, ignore_eos=True, detokenize=False)
    seen: dict[str, int] = {}  # tokens so far per request (outputs are cumulative)
    times: dict[str, list[float]] = {}
    steps: list[float] = []  # when each engine output arrived

    def step() -> None:
        outputs = llm_engine.step()
        now = time.perf_counter()
        if outputs:
            steps.append(now)
        for out in outputs:
            n = len(out.outputs[0].token_ids)
            times.setdefault(out.request_id, []).extend([now] * (n - seen.get(out.request_id, 0)))
            seen[out.request_id] = n

    for i in range(opts.decodes):
        prompt = lab.prompt_ids(opts.decode_prompt, vocab, opts.seed + 1 + i)
        lab.validate_token_ids(prompt, vocab)
        llm_engine.add_request(f"decode-{i}", {"prompt_token_ids": prompt}, decode)
    names = [f"decode-{i}" for i in range(opts.decodes)]
    while min(len(times.get(n, [])) for n in names) < opts.warm_tokens:
        step()
    prompt = lab.prompt_ids(opts.long_prompt, vocab, opts.seed)
    lab.validate_token_ids(prompt, vocab)
    arrival = time.perf_counter()
    llm_engine.add_request("long", {"prompt_token_ids": prompt}, long)
    while llm_engine.has_unfinished_requests():
        step()
    return {"names": names, "times": times, "steps": steps, "arrival": arrival}


def summarize(opts, budget: int, chunked: bool, got: dict, preemptions: int) -> SceneRow:
    times, arrival = got["times"], got["arrival"]
    first = times["long"][0]
    gaps = [(b - a, b) for n in got["names"] for a, b in zip(times[n], times[n][1:], strict=False)]
    before = [g for g, end in gaps if end <= arrival]
    during = [g for g, end in gaps if arrival < end <= first]
    return SceneRow(
        label=f"{'chunked' if chunked else 'unchunked'} {budget}",
        max_num_batched_tokens=budget,
        enable_chunked_prefill=chunked,
        decodes=opts.decodes,
        decode_tokens_out=[len(times[n]) for n in got["names"]],
        long_prompt_tokens=opts.long_prompt,
        long_tokens_out=len(times["long"]),
        long_ttft_s=first - arrival,
        prefill_steps=sum(1 for t in got["steps"] if arrival < t <= first),
        itl_before_p50_s=statistics.median(before),
        itl_before_max_s=max(before),
        itl_during_max_s=max(during) if during else 0.0,
        itl_all_p50_s=statistics.median(g for g, _ in gaps),
        preemptions=preemptions,
    )


def serve(opts: argparse.Namespace, spec: lab.LabModel, backend: str, key: str) -> dict:
    """Child process: one engine (budget, chunking) plays the scene once after a warm-up."""
    from vllm import SamplingParams

    budget, chunked = int(key.split(":")[0]), key.endswith(":on")
    max_model_len = model_len(opts)
    os.environ.update(lab.ENGINE_IN_PROCESS)
    llm = lab.start_engine(
        spec,
        backend,
        max_model_len,
        opts,
        kv_tokens=scene_tokens(opts),  # CPU: every request of the scene at its full length
        max_num_batched_tokens=budget,  # the knob: the token budget of one engine step
        enable_chunked_prefill=chunked,
        max_num_seqs=opts.decodes + 1,  # every request of the scene runs at once
        async_scheduling=False,  # see lab.ENGINE_IN_PROCESS above
    )
    vocab = llm.model_config.get_vocab_size()
    warm = [{"prompt_token_ids": lab.prompt_ids(opts.decode_prompt, vocab, opts.seed + 99)}]
    llm.generate(
        warm, SamplingParams(max_tokens=2, ignore_eos=True, detokenize=False), use_tqdm=False
    )  # unmeasured: a fresh engine compiles and allocates
    got = scene(llm, opts, vocab)
    counters = {m.name: getattr(m, "value", None) for m in llm.get_metrics()}
    row = summarize(opts, budget, chunked, got, int(counters.get("vllm:num_preemptions") or 0))
    return lab.results_document(
        "chunked_prefill", backend, spec, llm, lab.common_parameters(llm, opts), [row]
    )


def model_len(opts: argparse.Namespace) -> int:
    """Long enough for every request, and for the long prompt next to every decode unchunked."""
    need = max(
        opts.long_prompt + max(opts.long_tokens, opts.decodes),
        opts.decode_prompt + opts.decode_tokens,
    )
    return max(need, opts.max_model_len or 0)


def scene_tokens(opts: argparse.Namespace) -> int:
    """KV tokens the scene holds at most: every request at its full length."""
    return opts.decodes * (opts.decode_prompt + opts.decode_tokens) + (
        opts.long_prompt + opts.long_tokens
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument(
        "--values",
        type=lab.int_list,
        default=VALUES,
        help="max_num_batched_tokens with chunked prefill on, comma list",
    )
    parser.add_argument(
        "--no-unchunked", action="store_true", help="skip the run with chunked prefill off"
    )
    parser.add_argument("--decodes", type=int, default=DECODES, help="requests decoding")
    parser.add_argument("--decode-prompt", type=int, default=DECODE_PROMPT, help="their prompt")
    parser.add_argument("--decode-tokens", type=int, default=DECODE_TOKENS, help="their output")
    parser.add_argument(
        "--warm-tokens",
        type=int,
        default=WARM_TOKENS,
        help="tokens each decode has produced when the long prompt arrives",
    )
    parser.add_argument("--long-prompt", type=int, default=LONG_PROMPT, help="its tokens")
    parser.add_argument("--long-tokens", type=int, default=LONG_TOKENS, help="its output")
    parser.add_argument("--only", default=None, help=argparse.SUPPRESS)  # child mode
    opts = parser.parse_args()
    for name in ("decodes", "decode_prompt", "warm_tokens", "long_prompt", "long_tokens"):
        if getattr(opts, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if opts.decode_tokens < opts.warm_tokens + 2:
        parser.error("--decode-tokens must exceed --warm-tokens by 2 or more")
    if min(opts.values) <= opts.decodes:
        parser.error(
            f"every --values budget must exceed --decodes ({opts.decodes}): the "
            "decodes take one token each and leave nothing for the prompt"
        )

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    max_model_len = model_len(opts)
    longest = max(opts.long_prompt + opts.long_tokens, opts.decode_prompt + opts.decode_tokens)
    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    if opts.only is not None:  # child: serve once, write the partial document, exit
        lab.setup_environment(spec.dummy)
        doc = serve(opts, spec, backend, opts.only)
        opts.out.write_text(json.dumps(doc) + "\n", encoding="utf-8")
        return

    keys = [f"{v}:on" for v in opts.values]
    if not opts.no_unchunked:
        keys.append(f"{max_model_len}:off")  # without chunking, the budget must hold max_model_len
    docs = lab.run_children(__file__, sys.argv[1:], keys, "max_num_batched_tokens:chunking")
    rows = [d["measurements"][0] for d in docs]
    print(f"\n{opts.decodes} decodes running, then a {opts.long_prompt}-token prompt arrives")
    print(
        f"{'engine':<16} {'steps':>5} {'ITL before p50 ms':>17} {'ITL during max ms':>17} "
        f"{'long TTFT ms':>12} {'preempted':>9}"
    )
    for r in rows:
        print(
            f"{r['label']:<16} {r['prefill_steps']:>5} {r['itl_before_p50_s'] * 1e3:>17.1f} "
            f"{r['itl_during_max_s'] * 1e3:>17.1f} {r['long_ttft_s'] * 1e3:>12.1f} "
            f"{r['preemptions']:>9}"
        )
    doc = docs[0]
    doc["parameters"] |= {  # the child's engine parameters, and the scene's
        "warmup": 1,
        "values": opts.values,
        "unchunked": not opts.no_unchunked,
        "decodes": opts.decodes,
        "decode_prompt_tokens": opts.decode_prompt,
        "decode_new_tokens": opts.decode_tokens,
        "warm_tokens": opts.warm_tokens,
        "long_prompt_tokens": opts.long_prompt,
        "long_new_tokens": opts.long_tokens,
    }
    doc["measurements"] = rows
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
