"""The reference decode loop: time prefill and decode of a Qwen2-shaped model in plain PyTorch.

No vLLM: a model built from the course's core shapes with random weights (reference_model.py),
a static KV cache, and a stopwatch. It runs on a laptop CPU, on any CUDA GPU and in CI (a tiny
config). What it measures:
  prefill  one forward pass over P prompt tokens (batch 1), for each P in --prompt-lengths
  decode   one step of B sequences that each already hold --context tokens, for each B in --batches
and it writes the results, with where and how they were measured, as JSON (schema.json here).
machine_roofline.py sets these times beside the floors for the machine it measured.

    python labs/calibration/reference_loop.py --model qwen2.5-0.5b-instruct
    python labs/calibration/reference_loop.py --model tiny --smoke          # seconds, CI
    python labs/calibration/reference_loop.py --model qwen2.5-7b-instruct --device cuda \
        --prompt-lengths 128,512,2048,8192 --batches 1,8,32,64,128,256 --context 1024
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from core.formats import BF16, resident_weight_bytes
from core.models import ModelSpec, kv_bytes_per_token, load_model, params
from labkit import PreflightError, cpu_name, device_slug  # no vLLM or torch at import

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TINY_CONFIG = REPO / "labs" / "configs" / "tiny-qwen2" / "config.json"
SCHEMA_VERSION = 1
GiB = 2**30
# activations, the logits and the allocator's slack on top of weights + KV cache: generous on
# purpose, the pre-flight would rather refuse than let the process be killed half-way
WORKSPACE_BYTES = GiB // 2


@dataclass(frozen=True)
class Plan:
    model: ModelSpec
    device: str  # "cpu" or "cuda"
    prompt_lengths: tuple[int, ...]
    batches: tuple[int, ...]
    context: int
    repeats: int
    threads: int | None

    @property
    def longest(self) -> int:
        return max(max(self.prompt_lengths), self.context + 1)


def model_spec(name: str) -> ModelSpec:
    """A model the core knows (snippets/core/models/<key>.json), or "tiny" for CI."""
    if name == "tiny":
        config = json.loads(TINY_CONFIG.read_text(encoding="utf-8"))
        return ModelSpec.from_config(config, key="tiny-qwen2", name="tiny Qwen2 (CI)")
    try:
        spec = load_model(name)
    except KeyError as e:
        raise PreflightError(str(e.args[0]), "pass --model with one of the keys listed") from None
    if spec.quantization is not None:
        raise PreflightError(
            f"{name} is a quantized checkpoint; the reference loop runs 16-bit weights only",
            "pass the 16-bit model's key, e.g. qwen2.5-7b-instruct",
        )
    return spec


def memory_needed(plan: Plan) -> int:
    """Bytes the run holds at its largest: BF16 weights + the largest KV cache + a workspace."""
    spec = plan.model
    kv = kv_bytes_per_token(spec) * max(plan.batches) * (plan.context + 1)
    kv = max(kv, kv_bytes_per_token(spec) * max(plan.prompt_lengths))
    return int(resident_weight_bytes(spec, BF16) + kv + WORKSPACE_BYTES)


def available_memory(device: str) -> int:
    if device == "cuda":
        import torch

        free, _total = torch.cuda.mem_get_info()
        return free
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def preflight(plan: Plan) -> None:
    """Everything that can be known before a tensor is allocated."""
    if importlib.util.find_spec("torch") is None:
        raise PreflightError(
            "PyTorch is not installed in this Python",
            "use the labs' environment (make labs-env: .venv-labs/bin/python) or pip install torch",
        )
    import torch

    if plan.device == "cuda" and not torch.cuda.is_available():
        raise PreflightError(
            "--device cuda, but torch sees no CUDA GPU", "run on a GPU machine or use --device cpu"
        )
    need, have = memory_needed(plan), available_memory(plan.device)
    if need > have:
        raise PreflightError(
            f"the run needs about {need / GiB:.1f} GiB ({plan.model.name} in BF16 plus the KV "
            f"cache for batch {max(plan.batches)} at {plan.context} tokens) but "
            f"{have / GiB:.1f} GiB is free on {plan.device}",
            "use a smaller --model, fewer --batches or a shorter --context",
        )


@dataclass(frozen=True)
class Timing:
    phase: str  # "prefill" or "decode"
    batch: int
    tokens: int  # prefill: prompt length; decode: cached context of each sequence
    seconds: list[float]

    @property
    def median_s(self) -> float:
        return statistics.median(self.seconds)


def _timed(fn, device: str, repeats: int) -> list[float]:
    import torch

    fn()  # warm-up: allocator, kernels, caches
    out = []
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        out.append(time.perf_counter() - start)
    return out


def measure(plan: Plan) -> list[Timing]:
    import torch

    # beside this script (a script's folder is on its import path); imported after the pre-flight
    from reference_model import KVCache, build

    if plan.threads:
        torch.set_num_threads(plan.threads)
    device = torch.device(plan.device)
    model = build(plan.model, plan.longest, torch.bfloat16, device)
    vocab = plan.model.vocab_size
    gen = torch.Generator().manual_seed(0)
    rows = []
    for p in plan.prompt_lengths:
        cache = KVCache.allocate(plan.model, 1, p, torch.bfloat16, device)
        prompt = torch.randint(vocab, (1, p), generator=gen).to(device)
        seconds = _timed(partial(model, prompt, cache, 0), plan.device, plan.repeats)
        rows.append(Timing("prefill", 1, p, seconds))
    for b in plan.batches:
        cache = KVCache.allocate(plan.model, b, plan.context + 1, torch.bfloat16, device)
        token = torch.randint(vocab, (b, 1), generator=gen).to(device)
        seconds = _timed(partial(model, token, cache, plan.context), plan.device, plan.repeats)
        rows.append(Timing("decode", b, plan.context, seconds))
    return rows


def device_record(device: str) -> dict:
    """What the run ran on, as exactly as the machine tells it."""
    import torch

    if device == "cuda":
        name = torch.cuda.get_device_name()
        _free, total = torch.cuda.mem_get_info()
        return {
            "kind": "cuda",
            "name": name,
            "slug": device_slug(name),
            "cores": None,
            "memory_bytes": total,
            "cuda": torch.version.cuda,
        }
    cores = len(os.sched_getaffinity(0))
    name = cpu_name()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    # "cpu_2vcpu_amd_epyc_...": the number of cores the process may use belongs in the name
    return {
        "kind": "cpu",
        "name": name,
        "slug": f"cpu_{cores}vcpu_{device_slug(name)}"[:60],
        "cores": cores,
        "memory_bytes": memory,
        "cuda": None,
    }


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def results_document(plan: Plan, rows: list[Timing]) -> dict:
    import torch

    spec = plan.model
    return {
        "schema_version": SCHEMA_VERSION,
        "lab": "reference_loop",
        "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "device": device_record(plan.device),
        "software": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "commit": git_commit(),
        },
        "model": {
            "key": spec.key,
            "name": spec.name,
            "dtype": "bfloat16",
            "weights": "random",
            "num_parameters": params(spec),
        },
        "parameters": {
            "repeats": plan.repeats,
            "threads": torch.get_num_threads(),
            "context": plan.context,
            "prompt_lengths": list(plan.prompt_lengths),
            "batches": list(plan.batches),
        },
        "measurements": [asdict(r) | {"median_s": r.median_s} for r in rows],
    }


def int_tuple(text: str) -> tuple[int, ...]:
    values = tuple(int(v) for v in text.split(","))
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"positive integers separated by commas, got {text!r}")
    return values


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--model", default="qwen2.5-0.5b-instruct", help="a model key of the core, or 'tiny'"
    )
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--prompt-lengths", type=int_tuple, default=(32, 128, 512))
    p.add_argument("--batches", type=int_tuple, default=(1, 4, 16))
    p.add_argument("--context", type=int, default=512, help="cached tokens per sequence in decode")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's choice)"
    )
    p.add_argument("--smoke", action="store_true", help="tiny lengths, 2 repeats: proves it runs")
    p.add_argument(
        "--out", type=Path, default=None, help="results file (default under .cache/lab-results/)"
    )
    return p.parse_args(argv)


def plan_from(args: argparse.Namespace) -> Plan:
    if args.smoke:
        args.prompt_lengths, args.batches, args.context, args.repeats = (8, 16), (1, 2), 16, 2
    return Plan(
        model_spec(args.model),
        args.device,
        args.prompt_lengths,
        args.batches,
        args.context,
        args.repeats,
        args.threads,
    )


def write(doc: dict, out: Path | None) -> Path:
    if out is None:
        stamp = doc["date"].replace("-", "").replace(":", "")
        out = (
            REPO / ".cache" / "lab-results" / doc["device"]["slug"] / f"reference_loop-{stamp}.json"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return out


def run(plan: Plan) -> dict:
    """Pre-flight, measure, and the results document (machine_roofline.py calls this too)."""
    preflight(plan)
    return results_document(plan, measure(plan))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    plan = plan_from(args)
    doc = run(plan)
    for m in doc["measurements"]:
        print(
            f"{m['phase']:8} batch {m['batch']:4}  tokens {m['tokens']:6}  "
            f"{m['median_s'] * 1e3:10.2f} ms"
        )
    print(f"results: {write(doc, args.out)}")


if __name__ == "__main__":
    main()
