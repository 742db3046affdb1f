"""The CUDA graphs lab (labs/kernels_cuda_graphs/cuda_graphs.py): its defaults, the floor it is
checked against, the capture sizes the engine must report, and its recorded GPU runs (Markdown).

The lab starts one engine with enforce_eager=True (no torch.compile, no CUDA graphs) and one with
vLLM's defaults (torch.compile, then CUDA graphs captured for every size of
core.kernels.default_capture_sizes), each in a fresh process with empty compile caches, and
measures the start-up and batch-1 and batch-32 TPOT. The floor of a batch's TPOT is the mean
lower bound of its decode steps (core.roofline.batch_tpot_bound_s); the launch
overhead that CUDA graphs remove is what lies between the eager TPOT and that floor. With no
recorded run this prints the floors at the lab's defaults and the capture sizes the default
engine will report on an RTX 4090 with the AWQ model, and no measured figure.

Run it: python snippets/kernels_cuda_graphs/lab_results.py [zh|en]
"""

import statistics
import sys
from pathlib import Path

from core.engine import MAX_NUM_BATCHED_TOKENS, MAX_NUM_SEQS
from core.formats import WeightFormat, checkpoint_format
from core.gpus import GPU, load_gpus
from core.kernels import default_capture_sizes, kernels_per_step
from core.lab_results import (
    RESULTS,
    markdown_head,
    markdown_row,
    model_for,
    print_recorded_runs,
    runs_with_gpus,
)
from core.models import ModelSpec, model_for_repo
from core.roofline import batch_tpot_bound_s

LAB = "cuda_graphs"
CONFIGS = ("eager", "default")  # enforce_eager=True; vLLM's defaults (compile + CUDA graphs)
# The lab's defaults (labs/kernels_cuda_graphs/cuda_graphs.py reads them from here)
LAB_BATCHES = (1, 32)
LAB_PROMPT_TOKENS = 512
LAB_NEW_TOKENS = 128
LAB_GPU, LAB_MODEL = "rtx_4090", "Qwen/Qwen2.5-7B-Instruct-AWQ"


def tpot_floor_s(
    gpu: GPU, spec: ModelSpec, fmt: WeightFormat, *, batch: int, prompt: int, new: int
) -> float:
    """The mean lower bound of the decode steps a request of the lab spends its TPOT in."""
    return batch_tpot_bound_s(gpu, spec, fmt, prompt, new, batch)


def lab_capture_sizes() -> list[int]:
    """What the default engine captures with the LLM defaults the lab keeps."""
    return default_capture_sizes(MAX_NUM_SEQS, MAX_NUM_BATCHED_TOKENS)


def default_floors() -> dict[int, float]:
    gpu = load_gpus()[LAB_GPU]
    spec = model_for_repo(LAB_MODEL)
    fmt = checkpoint_format(spec)
    return {
        b: tpot_floor_s(gpu, spec, fmt, batch=b, prompt=LAB_PROMPT_TOKENS, new=LAB_NEW_TOKENS)
        for b in LAB_BATCHES
    }


TEXT = {
    "zh": {
        "none": (
            "目前还没有记录在案的运行：labs/results/ 里没有 cuda_graphs 的结果文件，本页不给实测"
            "数字。按实验的默认设置（{prompt} 个 token 的提示词、每个请求 {new} 个新 token），"
            "在 {gpu} 上运行 {model} 时，每步至少 {kernels} 次启动，TPOT 将被检查的"
            "下界如下；默认配置的引擎应报告 {count} 个捕获尺寸（最大 {largest}）。"
        ),
        "floor_header": ["B", "TPOT 下界 (ms)"],
        "header": [
            "配置",
            "B",
            "TPOT 中位数 (ms)",
            "下界 (ms)",
            "TPOT ÷ 下界",
            "输出吞吐 (token/s)",
            "启动 (s)",
            "cudagraph_mode",
            "捕获尺寸数",
        ],
        "run": "{gpu}（{device}）· vLLM {vllm} · {model}（{quant}）· {date} · {file}",
        "notes": (
            "有重复时取中位数。启动 = 在新进程里构造 LLM(...) 的用时，编译缓存为空；下界按这次"
            "运行实际加载的权重格式、批大小和解码各步的上下文计算；— 表示 GPU 或模型不在课程的"
            "核心表里。"
        ),
    },
    "en": {
        "none": (
            "No run is recorded yet: labs/results/ holds no cuda_graphs results file, so this "
            "page shows no measured figure. At the lab's defaults ({prompt}-token prompts, {new} "
            "new tokens per request), on the {gpu} with {model} (at least {kernels} "
            "launches a step), these are the TPOT floors it will be checked against; the default "
            "engine should report {count} capture sizes (the largest {largest})."
        ),
        "floor_header": ["B", "TPOT floor (ms)"],
        "header": [
            "config",
            "B",
            "median TPOT (ms)",
            "floor (ms)",
            "TPOT / floor",
            "output throughput (tokens/s)",
            "start-up (s)",
            "cudagraph_mode",
            "capture sizes",
        ],
        "run": "{gpu} ({device}) · vLLM {vllm} · {model} ({quant}) · {date} · {file}",
        "notes": (
            "Medians where a batch was repeated. Start-up = building LLM(...) in a fresh process "
            "with empty compile caches; floors are for the weights the run loaded, its batch and "
            "its decode steps' contexts; — marks a GPU or model the course's core does not know."
        ),
    },
}


def engine(run: dict, config: str) -> dict | None:
    return next((e for e in run["graph_engines"] if e["config"] == config), None)


def table(run: dict, gpu: GPU | None, header: list[str]) -> list[str]:
    p = run["parameters"]
    resolved = model_for(run) if gpu is not None else None
    lines = markdown_head(header)
    for b in p["batches"]:
        for config in p["configs"]:
            calls = [
                c
                for c in run["graph_calls"]
                if (c["config"], c["batch"], c["phase"]) == (config, b, "measured")
            ]
            e = engine(run, config)
            if not calls or e is None:
                continue
            tpot = statistics.median(c["tpot_s"] for c in calls)
            tps = statistics.median(c["output_tokens_per_s"] for c in calls)
            floor = None
            if resolved:
                floor = tpot_floor_s(
                    gpu, *resolved, batch=b, prompt=p["prompt_tokens"], new=p["new_tokens"]
                )
            cells = [
                config,
                f"{b}",
                f"{tpot * 1e3:,.2f}",
                "—" if floor is None else f"{floor * 1e3:,.2f}",
                "—" if floor is None else f"{tpot / floor:.2f}",
                f"{tps:,.0f}",
                f"{e['startup_s']:.0f}",
                e["cudagraph_mode"],
                f"{len(e['capture_sizes'])}",
            ]
            lines.append(markdown_row(cells))
    return lines


def main(lang: str = "zh", results_dir: Path = RESULTS) -> None:
    text = TEXT[lang]
    runs = runs_with_gpus(results_dir, {LAB})
    if not runs:
        spec = model_for_repo(LAB_MODEL)
        sizes = lab_capture_sizes()
        print(
            text["none"].format(
                prompt=LAB_PROMPT_TOKENS,
                new=LAB_NEW_TOKENS,
                gpu=load_gpus()[LAB_GPU].name,
                model=spec.name,
                kernels=kernels_per_step(spec),
                count=len(sizes),
                largest=sizes[-1],
            )
        )
        print()
        print("\n".join(markdown_head(text["floor_header"], label_column=False)))
        for b, floor in default_floors().items():
            print(markdown_row([f"{b}", f"{floor * 1e3:.2f}"]))
        return
    print_recorded_runs(text, runs, table, results_dir)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "zh")
