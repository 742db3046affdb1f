"""Recorded GPU runs of the batch-sweep lab, beside the lower bounds of batch_bound (Markdown).

Reads labs/results/<gpu>/*.json whose lab is "batch_sweep" (written by
labs/batched_decode/batch_sweep.py on a GPU, checked by scripts/verify_labs.py) and prints one
table per run: for each batch size B, the measured time of one decode step of the full batch
(the lab's difference of two calls) and the throughput it allows, next to their bounds, then each
request's median TPOT and the output throughput as recorded. With no recorded run it says so, and
prints no number. The bound for a batch is the mean of core.roofline.tpot_bound(batch=B) over the
decode steps the difference measures (the tokens after the short call's last), for the weights
the run loaded (AWQ or BF16).

Run it: python snippets/batched_decode/lab_results.py [zh|en]
"""

import statistics
import sys
from pathlib import Path

from core.formats import WeightFormat
from core.gpus import GPU
from core.lab_results import (
    RESULTS,
    markdown_head,
    markdown_row,
    model_for,
    print_recorded_runs,
    runs_with_gpus,
)
from core.models import ModelSpec
from core.roofline import batch_tpot_bound_s

LAB = "batch_sweep"
# The lab's defaults (labs/batched_decode/batch_sweep.py; tests/test_batched_decode.py checks them)
LAB_BATCHES = tuple(2**i for i in range(9))
LAB_PROMPT_TOKENS = 512
LAB_NEW_TOKENS = 128
LAB_SHORT_NEW_TOKENS = 64

TEXT = {
    "zh": {
        "none": (
            "目前还没有记录在案的批处理扫描运行：labs/results/ 里没有 batch_sweep 的结果文件。"
            "在 GPU 上运行 labs/batched_decode/batch_sweep.py、按 README 的 Labs 一节提交结果后，"
            "这里会按批大小列出实测的 TPOT 和吞吐，旁边是同一配置的下界。"
        ),
        "header": [
            "B",
            "满批解码一步 (ms)",
            "下界 (ms)",
            "B ÷ 一步 (token/s)",
            "吞吐上界 (token/s)",
            "请求 TPOT 中位数 (ms)",
            "输出吞吐 (token/s)",
        ],
        "run": "{gpu}（{device}）· vLLM {vllm} · {model}（{quant}）· {date} · {file}",
        "notes": (
            "有重复时取中位数。满批解码一步 = 两次调用（新 token 数不同）在最后一个请求开始解码"
            "之后的用时之差 ÷ 多出的步数；下界按这次运行实际加载的权重格式、批大小和这些步的"
            "上下文计算；"
            "— 表示 GPU 或模型不在课程的核心表里。请求 TPOT 取自每个请求的指标，包含和其他请求的"
            "预填充同在一步的那些步。输出吞吐 = 全部新 token ÷（第一个请求排队到最后一个 token），"
            "含预填充。"
        ),
    },
    "en": {
        "none": (
            "No batch-sweep run is recorded yet: labs/results/ holds no batch_sweep results file. "
            "Once labs/batched_decode/batch_sweep.py has run on a GPU and its results are added as "
            "the Labs section of the README describes, this lists measured TPOT and throughput "
            "for each batch size beside the bounds for the same configuration."
        ),
        "header": [
            "B",
            "full-batch decode step (ms)",
            "bound (ms)",
            "B / step (tokens/s)",
            "throughput bound (tokens/s)",
            "request TPOT, median (ms)",
            "output throughput (tokens/s)",
        ],
        "run": "{gpu} ({device}) · vLLM {vllm} · {model} ({quant}) · {date} · {file}",
        "notes": (
            "Medians where a batch size was repeated. Full-batch decode step = the difference "
            "between two calls (different numbers of new tokens) in the time after the last "
            "request started decoding, divided by the extra steps; bounds are for the weights the "
            "run loaded, its batch size and those steps' contexts; — marks a GPU or model the "
            "course's core does not know. Request TPOT comes from each request's metrics and "
            "includes the steps it shared with other requests' prefill. Output throughput = every "
            "new token / (first request queued to last token), prefill included."
        ),
    },
}


def step_bound_s(
    run: dict, gpu: GPU, resolved: tuple[ModelSpec, WeightFormat], batch: int
) -> float:
    """The bound of the steps a run's full-batch decode step is measured over."""
    p = run["parameters"]
    return batch_tpot_bound_s(
        gpu, *resolved, p["prompt_tokens"], p["new_tokens"], batch, after=p["short_new_tokens"]
    )


def table(run: dict, gpu: GPU | None, header: list[str]) -> list[str]:
    p = run["parameters"]
    resolved = model_for(run) if gpu is not None else None
    lines = markdown_head(header, label_column=False)
    for b in p["batches"]:
        mine = [s for s in run["batch_summaries"] if s["batch"] == b]
        if not mine:
            continue
        step = statistics.median(s["decode_step_s"] for s in mine)
        tpot = statistics.median(s["tpot_s"] for s in mine)
        tps = statistics.median(s["output_tokens_per_s"] for s in mine)
        bound = step_bound_s(run, gpu, resolved, b) if resolved else None
        cells = [
            f"{b}",
            f"{step * 1e3:,.2f}",
            "—" if bound is None else f"{bound * 1e3:,.2f}",
            f"{b / step:,.0f}",
            "—" if bound is None else f"{b / bound:,.0f}",
            f"{tpot * 1e3:,.2f}",
            f"{tps:,.0f}",
        ]
        lines.append(markdown_row(cells))
    return lines


def main(lang: str = "zh", results_dir: Path = RESULTS) -> None:
    text = TEXT[lang]
    runs = runs_with_gpus(results_dir, {LAB})
    if not runs:
        print(text["none"])
        return
    print_recorded_runs(text, runs, table, results_dir)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "zh")
