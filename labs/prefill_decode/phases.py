"""See the two phases in vLLM: the prompt's length drives prefill, max_tokens drives decode steps.

Three calls, each forced to produce exactly its number of new tokens:
  short prompt + few new tokens   (small prefill, few decode steps)
  long prompt  + few new tokens   (big prefill, few decode steps)
  short prompt + many new tokens  (small prefill, many decode steps)

  python labs/prefill_decode/phases.py                       # Qwen2.5-7B-Instruct-AWQ on a GPU
  python labs/prefill_decode/phases.py --dummy               # same shape, random weights, offline
  .venv-labs/bin/python labs/prefill_decode/phases.py --dummy --config tiny   # CPU smoke run
"""

import argparse
import time

import labkit as lab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument("--short-prompt", type=int, default=8, help="tokens in the short prompt")
    parser.add_argument("--long-prompt", type=int, default=2000, help="tokens in the long prompt")
    parser.add_argument("--few", type=int, default=8, help="new tokens for the few-token calls")
    parser.add_argument("--many", type=int, default=256, help="new tokens for the many-token call")
    opts = parser.parse_args()

    calls = [  # (label, prompt tokens, new tokens)
        ("short prompt, few new", opts.short_prompt, opts.few),
        ("long prompt, few new", opts.long_prompt, opts.few),
        ("short prompt, many new", opts.short_prompt, opts.many),
    ]
    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    max_model_len = opts.max_model_len or 8192
    longest = max(p + n for _, p, n in calls)
    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    lab.setup_environment(spec.dummy)

    from vllm import SamplingParams

    llm = lab.start_engine(spec, backend, max_model_len, opts)
    vocab = llm.model_config.get_vocab_size()

    def one(label: str, prompt_tokens: int, new_tokens: int, seed: int) -> lab.Measurement:
        prompt = lab.prompt_ids(prompt_tokens, vocab, seed)
        lab.validate_token_ids(prompt, vocab)
        # ignore_eos: real weights may stop early at EOS; we want exactly new_tokens decode steps.
        params = SamplingParams(max_tokens=new_tokens, ignore_eos=True, detokenize=False)
        t0 = time.perf_counter()
        [out] = llm.generate([{"prompt_token_ids": prompt}], params, use_tqdm=False)
        return lab.measurement("phases", label, 0, out, time.perf_counter() - t0)

    one("warm-up", opts.short_prompt, opts.few, seed=opts.seed)  # one-off costs, not measured
    print(lab.HEADER)
    rows = []
    for i, (label, prompt_tokens, new_tokens) in enumerate(calls, start=1):
        rows.append(one(label, prompt_tokens, new_tokens, seed=opts.seed + i))
        print(lab.row(rows[-1]))

    parameters = lab.common_parameters(
        llm,
        opts,
        warmup=1,
        calls=[{"label": c[0], "prompt_tokens": c[1], "new_tokens": c[2]} for c in calls],
    )
    doc = lab.results_document("phases", backend, spec, llm, parameters, rows)
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
