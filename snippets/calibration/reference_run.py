"""The course's own recorded runs of the reference decode loop, beside the floors for the machine
each run measured (labs/calibration/machine_roofline.py writes them; core.measured compares).

Reads labs/results/<machine>/calibration-*.json and prints, per run, its provenance and one
Markdown table: every measured time, the core's floor on that machine's own measured bandwidth
and BF16 matmul throughput, and the share of that floor the plain PyTorch loop reached.

Run it: python snippets/calibration/reference_run.py en
"""

import json
import sys
from pathlib import Path

import core
from core.measured import Comparison, compare, measured_gpu
from core.models import ModelSpec, load_model

RESULTS = Path(core.__file__).resolve().parents[2] / "labs" / "results"

TEXT = {
    "zh": {
        "none": "还没有记录在案的参考循环运行：labs/results/ 下没有 calibration-*.json。",
        "run": (
            "{device}（{cores} 核，用 {threads} 个线程）· torch {torch} · Python {python} · "
            "{model}（BF16，随机权重）· 实测带宽 {gbs:.1f} GB/s，BF16 矩阵乘 {gflops:.0f} GFLOP/s"
            " · {date} · {file}"
        ),
        "header": ("阶段", "批大小", "token", "实测 (ms)", "下界 (ms)", "达到的比例", "受限于"),
        "phase": {"prefill": "预填充", "decode": "解码一步"},
        "bound": {"memory": "带宽", "compute": "算力"},
    },
    "en": {
        "none": "No run of the reference loop is recorded yet: labs/results/ holds no "
        "calibration-*.json.",
        "run": (
            "{device} ({cores} cores; torch threads: {threads}) · torch {torch} · "
            "Python {python} · {model} (BF16, random weights) · measured {gbs:.1f} GB/s, "
            "BF16 matmul {gflops:.0f} GFLOP/s · {date} · {file}"
        ),
        "header": ("Phase", "Batch", "Tokens", "Measured (ms)", "Floor (ms)", "Share", "Bound by"),
        "phase": {"prefill": "prefill", "decode": "decode step"},
        "bound": {"memory": "memory", "compute": "compute"},
    },
}


def recorded_runs(results: Path = RESULTS) -> list[tuple[Path, dict]]:
    """Every recorded run of machine_roofline.py, oldest first."""
    paths = sorted(results.glob("*/calibration-*.json"))
    return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def model_of(doc: dict) -> ModelSpec:
    return load_model(doc["model"]["key"])


def comparisons(doc: dict) -> list[Comparison]:
    """A run's measurements beside the floors for the machine it measured."""
    return compare(measured_gpu(doc["machine"]), model_of(doc), doc["measurements"])


def report(lang: str = "en", results: Path = RESULTS) -> str:
    text = TEXT[lang]
    runs = recorded_runs(results)
    if not runs:
        return text["none"]
    out = []
    for path, doc in runs:
        m = doc["machine"]
        out.append(
            text["run"].format(
                device=doc["device"]["name"], cores=doc["device"]["cores"],
                threads=doc["parameters"]["threads"],
                torch=doc["software"]["torch"], python=doc["software"]["python"],
                model=model_of(doc).name, gbs=m["bandwidth_gbs"], gflops=m["bf16_tflops"] * 1e3,
                date=doc["date"], file=f"{path.parent.name}/{path.name}",
            )
        )  # fmt: skip
        out += ["", "| " + " | ".join(text["header"]) + " |", "|---|--:|--:|--:|--:|--:|---|"]
        for c in comparisons(doc):
            out.append(
                f"| {text['phase'][c.phase]} | {c.batch} | {c.tokens:,} "
                f"| {c.measured_s * 1e3:,.1f} | {c.floor.seconds * 1e3:,.1f} | {c.share:.0%} "
                f"| {text['bound'][c.bound_by]} |"
            )
        out.append("")
    return "\n".join(out).rstrip()


def main(lang: str = "en") -> None:
    print(report(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
