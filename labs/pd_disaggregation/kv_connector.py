"""A KV-transfer connector on one machine: a producer engine prefills and stores the KV cache, a
consumer engine loads it instead of prefilling, and decodes the same tokens.

vLLM 0.26.0's ExampleConnector (vllm/distributed/kv_transfer/kv_connector/v1/example_connector.py)
writes each prompt's KV, one safetensors file per attention layer, under a shared folder; a second
engine configured as kv_consumer finds the folder by a hash of the prompt's token ids and loads it.
The two engines run one after the other in this process (as a prefill instance and a decode
instance would run side by side). Checked: the consumer's greedy tokens equal the producer's
(which computed its prefill itself), the consumer loaded exactly the tokens the connector's rule
predicts (RequestOutput.num_cached_tokens; prefix caching is off in both engines), and the bytes on
disk equal kappa x stored tokens from the course's core. A folder, not a network, carries the KV:
the timings say nothing about a link.

  python labs/pd_disaggregation/kv_connector.py                       # Qwen2.5-7B-Instruct-AWQ, GPU
  .venv-labs/bin/python labs/pd_disaggregation/kv_connector.py --dummy --config tiny   # CPU smoke
"""

import argparse
import gc
import tempfile
import time
from pathlib import Path

import labkit as lab
from pd_disaggregation.example_connector import loaded_tokens, stored_bytes, stored_tokens

# The two engines' kv_transfer_config (vllm/config/kv_transfer.py, KVTransferConfig): the same
# connector, one role each. "kv_producer" saves the KV it computes, "kv_consumer" loads it.
PRODUCER = {"kv_connector": "ExampleConnector", "kv_role": "kv_producer"}
CONSUMER = {"kv_connector": "ExampleConnector", "kv_role": "kv_consumer"}


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

    from vllm import LLM, SamplingParams

    def engine(transfer: dict) -> LLM:
        return LLM(
            model=spec.model,
            load_format=spec.load_format,  # "dummy": random weights from config.json, seeded
            skip_tokenizer_init=spec.dummy,  # prompts are token ids: exact lengths
            seed=opts.seed,  # sampling; vLLM seeds dummy weights itself: the same in both engines
            max_model_len=max_model_len,
            enable_prefix_caching=False,  # every cached token below came through the connector
            disable_log_stats=False,  # fills RequestOutput.metrics and get_metrics()
            gpu_memory_utilization=opts.gpu_memory_utilization,
            kv_cache_memory_bytes=lab.cpu_kv_cache_bytes(backend, spec, max_model_len),
            kv_transfer_config={
                **transfer,
                "kv_connector_extra_config": {"shared_storage_path": str(storage)},  # the folder
            },
        )

    params = SamplingParams(
        max_tokens=opts.new_tokens, temperature=0.0, ignore_eos=True, detokenize=False
    )

    def run(llm: LLM, role: str) -> tuple[list, dict[int, list[int]]]:
        """Each prompt alone, greedy; the measurements and the tokens it generated."""
        vocab = llm.model_config.get_vocab_size()
        rows, tokens = [], {}
        for n in opts.prompt_lens:
            ids = lab.prompt_ids(n, vocab, opts.seed + n)  # the same ids in both engines
            lab.validate_token_ids(ids, vocab)
            t0 = time.perf_counter()
            [out] = llm.generate([{"prompt_token_ids": ids}], params, use_tqdm=False)
            rows.append(
                lab.measurement(role, f"{role} prompt {n}", 0, out, time.perf_counter() - t0)
            )
            tokens[n] = list(out.outputs[0].token_ids)
        return rows, tokens

    producer = engine(PRODUCER)
    lab.check_weight_format(spec, producer.model_config.quantization)
    block_size = producer.llm_engine.vllm_config.cache_config.block_size
    model = lab.model_record(spec, producer.model_config)
    produced, reference = run(producer, PRODUCER["kv_role"])
    producer.llm_engine.engine_core.shutdown()  # the prefill instance is done: stop its engine
    del producer  # process and free its memory before the decode instance starts
    gc.collect()

    consumer = engine(CONSUMER)
    consumed, tokens = run(consumer, CONSUMER["kv_role"])
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
            "tokens_match": tokens[n] == ref,
        }
        handoffs.append(h)
        print(
            f"{n:>7} {h['stored_tokens']:>7} {h['stored_bytes']:>11,} "
            f"{h['expected_stored_bytes'] or 0:>11,} {h['loaded_tokens']:>7} "
            f"{h['expected_loaded_tokens']:>5} {h['tokens_match']!s:>11} "
            f"{p.ttft_s * 1e3:>12.1f} {c.ttft_s * 1e3:>12.1f}"
        )
    print(f"\nconsumer engine counters: {counters} (block size {block_size}, KV under {storage})")

    parameters = {
        "max_model_len": max_model_len,
        "enable_prefix_caching": False,
        "gpu_memory_utilization": opts.gpu_memory_utilization,
        "seed": opts.seed,
        "prompt_lens": opts.prompt_lens,
        "new_tokens": opts.new_tokens,
        "block_size": block_size,
        "kv_connector": "ExampleConnector",
    }
    doc = lab.results_document(
        "kv_connector", backend, spec, consumer, parameters, produced + consumed
    )
    doc["model"] = model
    doc["handoffs"] = handoffs
    doc["connector_counters"] = counters
    print(f"\nresults: {lab.write_results(doc, opts.out)}")


if __name__ == "__main__":  # vLLM spawns worker processes that re-import this file
    main()
