"""Recorded GPU runs of the prefill/decode labs, beside the estimator's lower bounds (Markdown).

Reads labs/results/<gpu>/*.json (written by labs/prefill_decode/phases.py and sweep.py on a GPU,
checked by scripts/verify_labs.py) and prints one table per run with its provenance. CPU-only.
The page renders the printed Markdown; lines outside tables stay plain text (the site test looks
for each of them, verbatim, in the built page).
Lower bounds, not predictions: no run can beat them, and a real one stays above them. They come
from the course's core for the weights the run loaded (AWQ or BF16): core.roofline.ttft_bound and
the mean of core.roofline.tpot_bound over the run's decode steps.

Run it: python snippets/prefill_decode/lab_results.py [zh|en]
"""

import statistics
import sys
from pathlib import Path

from core.display import ms_tenths
from core.formats import WeightFormat
from core.gpus import GPU
from core.lab_results import (
    RESULTS,
    markdown_head,
    markdown_row,
    model_for,
    results_file,
    runs_with_gpus,
)
from core.models import ModelSpec
from core.roofline import decode_steps_bound_s, ttft_bound

LABS = {"phases", "sweep"}  # this lesson's labs (labs/prefill_decode/)

TEXT = {
    "zh": {
        "none": (
            "目前还没有记录在案的 GPU 运行：labs/results/ 里没有结果文件。在 GPU 上运行实验、"
            "按 README 的 Labs 一节提交结果后，这里会列出实测值和估算器给出的下界。"
        ),
        "header": [
            "调用",
            "prompt token",
            "新 token",
            "TTFT (ms)",
            "TTFT 下界 (ms)",
            "每 token (ms)",
            "每 token 下界 (ms)",
            "墙钟 (s)",
        ],
        "run": (
            "{gpu}（{device}，驱动 {driver}，CUDA {cuda}）· vLLM {vllm} · torch {torch} · "
            "{model}（{quant}，{dtype}，{load}）· {date} · {file}"
        ),
        "labels": {
            "short prompt, few new": "短 prompt，少量新 token",
            "long prompt, few new": "长 prompt，少量新 token",
            "short prompt, many new": "短 prompt，大量新 token",
            "prompt sweep": "prompt 扫描",
            "output sweep": "输出扫描",
        },
        "median": "有重复时取中位数。",
        "bounds": (
            "下界只是下限，不是预测，按这次运行实际加载的权重格式计算："
            "TTFT ≥ max(预填充运算量 ÷ 峰值算力, 预填充字节 ÷ 显存带宽)，"
            "每 token 时间 ≥ 各解码步（权重 + 当时上下文的 KV）字节 ÷ 显存带宽的平均。"
            "实测值来自 vLLM 的请求指标。"
        ),
        "no_bound": (
            "— 表示没有下界：GPU 不在 snippets/core/gpus.toml 中，或课程没有这个模型的配置。"
        ),
    },
    "en": {
        "none": (
            "No GPU run is recorded yet: labs/results/ holds no results file. Once a run on a "
            "GPU is added as the Labs section of the README describes, this lists its "
            "measurements beside the estimator's lower bounds."
        ),
        "header": [
            "call",
            "prompt tokens",
            "new tokens",
            "TTFT (ms)",
            "TTFT bound (ms)",
            "per token (ms)",
            "per-token bound (ms)",
            "wall (s)",
        ],
        "run": (
            "{gpu} ({device}, driver {driver}, CUDA {cuda}) · vLLM {vllm} · torch {torch} · "
            "{model} ({quant}, {dtype}, {load}) · {date} · {file}"
        ),
        "labels": {},
        "median": "Medians where a point was repeated.",
        "bounds": (
            "Lower bounds, not predictions. TTFT ≥ 2(N − E)·S ÷ peak FLOP/s, and no less than "
            "reading the weights and KV once; time per token ≥ (weight bytes as loaded − input "
            "embedding table + κ × context) ÷ memory bandwidth. E counts the input embedding "
            "table. Measurements come from vLLM's request metrics."
        ),
        "no_bound": (
            "— marks a missing bound: the GPU is not in snippets/core/gpus.toml, or the "
            "course has no config for the model."
        ),
    },
}


def ttft_bound_s(spec: ModelSpec, fmt: WeightFormat, gpu: GPU, prompt: int) -> float:
    return ttft_bound(gpu, spec, prompt, fmt).seconds


def token_bound_s(spec: ModelSpec, fmt: WeightFormat, gpu: GPU, prompt: int, new: int):
    """Mean lower bound of the new - 1 decode steps after the first token; None for one token."""
    if new < 2:
        return None
    return decode_steps_bound_s(gpu, spec, prompt, new, fmt) / (new - 1)


def rows(run: dict) -> list[tuple[str, int, int, dict[str, float | None]]]:
    """(label, prompt, new, medians of ttft_s / tpot_s / wall_s) per point, in run order."""
    points: dict[tuple, list[dict]] = {}
    for m in run["measurements"]:
        label = m["label"] if m["series"] == "phases" else m["series"].replace("_", " ")
        points.setdefault((label, m["prompt_tokens"], m["new_tokens"]), []).append(m)

    def median(ms: list[dict], field: str) -> float | None:
        values = [m[field] for m in ms if m[field] is not None]
        return statistics.median(values) if values else None

    fields = ("ttft_s", "tpot_s", "wall_s")
    return [(*key, {f: median(ms, f) for f in fields}) for key, ms in points.items()]


def table(run: dict, gpu: GPU | None, text: dict) -> list[str]:
    resolved = model_for(run) if gpu is not None else None
    header = text["header"]
    lines = markdown_head(header)
    for label, prompt, new, med in rows(run):
        ttft_floor = ttft_bound_s(*resolved, gpu, prompt) if resolved else None
        token_floor = token_bound_s(*resolved, gpu, prompt, new) if resolved else None
        cells = [
            text["labels"].get(label, label),
            f"{prompt:,}",
            f"{new:,}",
            ms_tenths(med["ttft_s"]),
            ms_tenths(ttft_floor),
            ms_tenths(med["tpot_s"]),
            ms_tenths(token_floor),
            f"{med['wall_s']:.3f}",
        ]
        lines.append(markdown_row(cells))
    return lines


def main(lang: str = "zh", results_dir: Path = RESULTS) -> None:
    text = TEXT[lang]
    runs = runs_with_gpus(results_dir, LABS)  # other lessons' labs are tabled on their own pages
    if not runs:
        print(text["none"])
        return
    for path, run, gpu in runs:
        device, model = run["device"], run["model"]
        provenance = text["run"].format(
            gpu=gpu.name if gpu else device["name"],
            device=device["name"],
            driver=device["driver"] or "?",
            cuda=device["cuda"] or "?",
            vllm=run["software"]["vllm"],
            torch=run["software"]["torch"],
            model=model["id"],
            quant=model["quantization"] or "—",
            dtype=model["dtype"],
            load=model["load_format"],
            date=run["date"][:10],
            file=results_file(path, results_dir),
        )
        print(f"{run['lab']} · {provenance}\n")
        print("\n".join(table(run, gpu, text)))
        print()
    print(f"{text['median']} {text['bounds']} {text['no_bound']}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "zh")
