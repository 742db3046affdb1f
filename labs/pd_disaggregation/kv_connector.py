"""A KV-transfer connector on one machine: a producer engine prefills and stores the KV cache, a
consumer engine loads it instead of prefilling, and decodes the same tokens.

vLLM 0.26.0's ExampleConnector (vllm/distributed/kv_transfer/kv_connector/v1/example_connector.py)
writes each prompt's KV, one safetensors file per attention layer, under a shared folder; a second
engine configured as kv_consumer finds the folder by a hash of the prompt's token ids and loads it.
The two engines run one after the other in this process (as a prefill instance and a decode
instance would run side by side). Checked: the consumer's greedy tokens follow the producer's
(which computed its prefill itself) up to a near-tie (NEAR_TIE_NATS), the consumer loaded exactly
the tokens the connector's rule predicts (RequestOutput.num_cached_tokens; prefix caching is off
in both engines), and the bytes on disk equal kappa x stored tokens from the course's core. A
folder, not a network, carries the KV: the timings say nothing about a link.

  python labs/pd_disaggregation/kv_connector.py                       # Qwen2.5-7B-Instruct-AWQ, GPU
  .venv-labs/bin/python labs/pd_disaggregation/kv_connector.py --dummy --config tiny   # CPU smoke
"""

import argparse
import tempfile
import time
from pathlib import Path

import labkit as lab
from pd_disaggregation.example_connector import loaded_tokens, stored_bytes, stored_tokens

# The two engines' kv_transfer_config (vllm/config/kv_transfer.py, KVTransferConfig): the same
# connector, one role each. "kv_producer" saves the KV it computes, "kv_consumer" loads it.
PRODUCER = {"kv_connector": "ExampleConnector", "kv_role": "kv_producer"}
CONSUMER = {"kv_connector": "ExampleConnector", "kv_role": "kv_consumer"}
# The consumer recomputes the prompt's last tokens on top of the loaded KV, with other matmul
# shapes than the producer's one-pass prefill; GPU kernels are not bit-identical across shapes, and
# with random-token prompts (and random weights) the top two logits are often nearly tied, so a
# greedy continuation may take the other one. Accepted only at such a near-tie: the producer's top
# two log-probabilities at the first differing token within this many nats. BF16 keeps 8 bits of
# mantissa: a logit near 20 is rounded in steps of 0.125, so another reduction order moves it by
# about that much.
NEAR_TIE_NATS = 0.25


def top2(position: dict) -> list[tuple[int, float]]:
    """One generated position's logprobs (token id -> vLLM Logprob): the two most likely."""
    ranked = sorted(position.items(), key=lambda kv: kv[1].logprob, reverse=True)
    return [(token, lp.logprob) for token, lp in ranked[:2]]


def compare_greedy(reference: list[int], ranked: list[list], tokens: list[int]) -> dict:
    """The consumer's tokens against the producer's (`ranked`: its top two per position): where
    they first differ, and the producer's top-2 gap there (a near-tie, or a real difference)."""
    diverged = next(
        (i for i, (a, b) in enumerate(zip(reference, tokens, strict=False)) if a != b), None
    )
    if diverged is None and len(reference) != len(tokens):
        diverged = min(len(reference), len(tokens))
    gap, near_tie = None, diverged is None
    if diverged is not None and diverged < len(ranked) and len(ranked[diverged]) == 2:
        (first, lp1), (second, lp2) = ranked[diverged]
        gap = lp1 - lp2
        pair = {reference[diverged], tokens[diverged]} if diverged < len(tokens) else set()
        near_tie = pair == {first, second} and gap <= NEAR_TIE_NATS
    return {
        "tokens_match": diverged is None,
        "first_token_match": bool(tokens) and bool(reference) and tokens[0] == reference[0],
        "diverged_at": diverged,
        "top2_gap": gap,
        "near_tie": near_tie,
    }


def kv_files_bytes(folder: Path) -> tuple[int, int]:
    """(tokens, bytes) of the KV tensors in one stored prompt folder (one file per layer)."""
    from safetensors.torch import load_file

    tokens, total = set(), 0
    for path in sorted(folder.glob("*.safetensors")):
        kv = load_file(path)["kv_cache"]  # ExampleConnector's key; first dimension: tokens
        tokens.add(kv.shape[0])
        total += kv.numel() * kv.element_size()
    if len(tokens) != 1:
        raise RuntimeError(f"{folder}: layers hold different token counts {sorted(tokens)}")
    return tokens.pop(), total


def new_folder(parent: Path, prefix: str) -> Path:
    """An empty folder of its own under `parent` (created too: .cache/ is not in a fresh clone)."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab.add_common_options(parser)
    parser.add_argument(
        "--prompt-lens", type=lab.int_list, default=[1000, 2000], help="prompt tokens, comma list"
    )
    parser.add_argument("--new-tokens", type=int, default=16, help="new tokens per request")
    parser.add_argument(
        "--storage", type=Path, default=None, help="empty folder for the KV (default: a new one)"
    )
    opts = parser.parse_args()
    if opts.new_tokens < 2:
        parser.error("--new-tokens must be at least 2 (the first comes from the prefill)")
    if opts.storage is not None and opts.storage.is_dir() and any(opts.storage.iterdir()):
        parser.error(f"--storage {opts.storage} is not empty: stale KV would be loaded as a hit")

    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    longest = max(opts.prompt_lens) + opts.new_tokens
    max_model_len = opts.max_model_len or longest
    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    lab.setup_environment(spec.dummy)
    storage = opts.storage or new_folder(lab.REPO / ".cache", "kv-connector-")
    storage.mkdir(parents=True, exist_ok=True)

    from vllm import SamplingParams

    def engine(transfer: dict):
        # no prefix caching (the shared default): every cached token came through the connector
        return lab.start_engine(
            spec,
            backend,
            max_model_len,
            opts,
            seed=opts.seed,  # sampling; vLLM seeds dummy weights itself: the same in both engines
            kv_transfer_config={
                **transfer,
                "kv_connector_extra_config": {"shared_storage_path": str(storage)},  # the folder
            },
        )

    params = SamplingParams(
        max_tokens=opts.new_tokens,
        temperature=0.0,
        ignore_eos=True,
        detokenize=False,
        logprobs=2,  # the top two per token: how near a tie a differing token was
    )

    def run(llm, role: str) -> tuple[list, dict[int, list[int]], dict[int, list]]:
        """Each prompt alone, greedy; the measurements, the tokens it generated and their top
        two log-probabilities per position."""
        vocab = llm.model_config.get_vocab_size()
        rows, tokens, ranked = [], {}, {}
        for n in opts.prompt_lens:
            ids = lab.prompt_ids(n, vocab, opts.seed + n)  # the same ids in both engines
            lab.validate_token_ids(ids, vocab)
            t0 = time.perf_counter()
            [out] = llm.generate([{"prompt_token_ids": ids}], params, use_tqdm=False)
            rows.append(
                lab.measurement(role, f"{role} prompt {n}", 0, out, time.perf_counter() - t0)
            )
            tokens[n] = list(out.outputs[0].token_ids)
            ranked[n] = [top2(position) for position in out.outputs[0].logprobs or []]
        return rows, tokens, ranked

    producer = engine(PRODUCER)
    block_size = producer.llm_engine.vllm_config.cache_config.block_size
    model = lab.model_record(spec, producer.model_config)
    produced, reference, reference_ranked = run(producer, PRODUCER["kv_role"])
    # the prefill instance is done: stop its engine; start_engine waits until its memory is free
    lab.stop_engine(producer)
    del producer

    consumer = engine(CONSUMER)
    consumed, tokens, _ = run(consumer, CONSUMER["kv_role"])
    counters = {
        m.name.removeprefix("vllm:"): int(m.value)
        for m in consumer.get_metrics()
        if m.name in ("vllm:external_prefix_cache_queries", "vllm:external_prefix_cache_hits")
    }

    folders = sorted(p for p in storage.iterdir() if p.is_dir())
    on_disk = {kv_files_bytes(f)[0]: kv_files_bytes(f)[1] for f in folders}
    handoffs = []
    print(
        f"{'prompt':>7} {'stored':>7} {'bytes':>11} {'expected':>11} {'loaded':>7} {'rule':>5} "
        f"{'same tokens':>11} {'TTFT prod ms':>12} {'TTFT cons ms':>12}"
    )
    for (n, ref), p, c in zip(reference.items(), produced, consumed, strict=True):
        want_stored = stored_tokens(n, block_size)
        h = {
            "prompt_tokens": n,
            "stored_tokens": want_stored if want_stored in on_disk else 0,
            "stored_bytes": on_disk.get(want_stored, 0),
            "expected_stored_bytes": stored_bytes(spec.spec, n, block_size) if spec.spec else None,
            "loaded_tokens": c.cached_tokens,
            "expected_loaded_tokens": loaded_tokens(n, block_size),
            **compare_greedy(ref, reference_ranked[n], tokens[n]),
        }
        handoffs.append(h)
        print(
            f"{n:>7} {h['stored_tokens']:>7} {h['stored_bytes']:>11,} "
            f"{h['expected_stored_bytes'] or 0:>11,} {h['loaded_tokens']:>7} "
            f"{h['expected_loaded_tokens']:>5} {h['tokens_match']!s:>11} "
            f"{p.ttft_s * 1e3:>12.1f} {c.ttft_s * 1e3:>12.1f}"
        )
    print(f"\nconsumer engine counters: {counters} (block size {block_size}, KV under {storage})")

    parameters = lab.common_parameters(
        consumer,
        opts,
        prompt_lens=opts.prompt_lens,
        new_tokens=opts.new_tokens,
        block_size=block_size,
        kv_connector="ExampleConnector",
        near_tie_nats=NEAR_TIE_NATS,
    )
    doc = lab.results_document(
        "kv_connector", backend, spec, consumer, parameters, produced + consumed
    )
    doc["model"] = model
    doc["handoffs"] = handoffs
    doc["connector_counters"] = counters
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
