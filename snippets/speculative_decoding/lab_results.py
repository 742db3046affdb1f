"""The n-gram speculation lab (labs/speculative_decoding/ngram_lookup.py): its defaults, the
lesson's predictions it is checked against, and its recorded GPU runs (Markdown).

From the engine's counters of one batch (vLLM's spec-decode metrics, deltas around the measured
call): the mean acceptance length 1 + accepted / drafts and the alpha whose E(alpha, gamma)
equals it (core.speculative.alpha_from_mean_length). From that alpha, the lesson predicts the
speed-up at the run's batch and context (core.speculative.batched_speedup, a ratio of two lower
bounds) and the rate at each draft position (alpha^i if alpha were the same everywhere). The TPOT
floors: a plain decode step's lower bound (core.roofline.batch_tpot_bound_s), and
with speculation that bound over the mean acceptance length (every step reads the weights at
least once and emits at most that many tokens per request on average). With no recorded run
this prints the floors at the lab's defaults on an RTX 4090 with the AWQ model, and no
measured figure.

Run it: python snippets/speculative_decoding/lab_results.py [zh|en]
"""

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from core.formats import WeightFormat, checkpoint_format
from core.gpus import GPU, load_gpus
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
from core.speculative import alpha_from_mean_length, batched_speedup
from speculative_decoding.estimator import DRAFT_TOKENS

LAB = "ngram_speculation"
CONFIGS = ("off", "ngram")
# The lab's defaults (labs/speculative_decoding/ngram_lookup.py reads them from here)
LAB_GAMMA = DRAFT_TOKENS
LAB_LOOKUP_MIN, LAB_LOOKUP_MAX = 3, 5  # n-gram lengths the proposer matches (vLLM's default 5)
LAB_PASSAGE_TOKENS = 256  # one passage of token ids ...
LAB_COPIES = 4  # ... repeated: the prompt an extractive task gives a model to copy from
LAB_NEW_TOKENS = 128
LAB_BATCHES = (1, 32)
LAB_GPU, LAB_MODEL = "rtx_4090", "Qwen/Qwen2.5-7B-Instruct-AWQ"
EXAMPLE_ALPHAS = (0.5, 0.8, 0.95)
# a measured speed-up may beat the lesson's ratio of two best cases by this much before the
# verifier calls the prediction wrong (labs/speculative_decoding/claims.py)
SPEEDUP_SLACK = 1.3  # the page's predictions before any alpha is measured


@dataclass(frozen=True)
class Acceptance:
    """One batch's spec-decode counters, as deltas of LLM.get_metrics() around its call."""

    drafts: int
    draft_tokens: int
    accepted: int
    accepted_per_pos: tuple[int, ...]

    @property
    def mean_length(self) -> float:
        """1 + accepted / drafts: tokens a drafting step emits per request, vLLM's definition."""
        return 1 + self.accepted / self.drafts

    @property
    def rate_per_pos(self) -> tuple[float, ...]:
        return tuple(a / self.drafts for a in self.accepted_per_pos)

    def alpha(self, gamma: int) -> float:
        """The alpha whose E(alpha, gamma) equals the measured mean acceptance length."""
        return alpha_from_mean_length(min(self.mean_length, gamma + 1), gamma)


def acceptance(summary: dict) -> Acceptance | None:
    """A results row's counters; None where no step drafted."""
    if not summary["num_drafts"]:
        return None
    return Acceptance(
        summary["num_drafts"],
        summary["num_draft_tokens"],
        summary["num_accepted_tokens"],
        tuple(summary["accepted_per_pos"]),
    )


def decode_context(prompt: int, new: int) -> int:
    """The context half-way through the decode: where the speed-up is evaluated."""
    return prompt + new // 2


def predicted_speedup(
    gpu: GPU, spec: ModelSpec, fmt: WeightFormat, *, batch: int, prompt: int, new: int,
    alpha: float, gamma: int,
) -> float:  # fmt: skip
    """The lesson's speed-up at this batch: n-gram drafts cost no GPU time."""
    context = decode_context(prompt, new)
    return batched_speedup(
        gpu, spec, batch=batch, context=context, alpha=alpha, draft_tokens=gamma, fmt=fmt
    )


def tpot_floor_s(
    gpu: GPU, spec: ModelSpec, fmt: WeightFormat, *, batch: int, prompt: int, new: int,
    mean_length: float = 1.0,
) -> float:  # fmt: skip
    """A lower bound of a request's TPOT: the plain decode steps' mean bound over the tokens a
    step emits per request (1 without speculation, at most the mean acceptance length with)."""
    return batch_tpot_bound_s(gpu, spec, fmt, prompt, new, batch) / mean_length


def lab_prompt_tokens() -> int:
    return LAB_PASSAGE_TOKENS * LAB_COPIES


def default_floors() -> dict[str, float]:
    """The floors and predictions the page shows before any run: the lab's defaults on the
    RTX 4090 with the AWQ model it loads."""
    gpu = load_gpus()[LAB_GPU]
    spec = model_for_repo(LAB_MODEL)
    fmt = checkpoint_format(spec)
    prompt, new = lab_prompt_tokens(), LAB_NEW_TOKENS
    out = {}
    for b in LAB_BATCHES:
        out[f"floor_b{b}_ms"] = tpot_floor_s(gpu, spec, fmt, batch=b, prompt=prompt, new=new) * 1e3
        for a in EXAMPLE_ALPHAS:
            s = predicted_speedup(
                gpu, spec, fmt, batch=b, prompt=prompt, new=new, alpha=a, gamma=LAB_GAMMA
            )
            out[f"speedup_b{b}_a{a}"] = s
    return out


TEXT = {
    "zh": {
        "none": (
            "目前还没有记录在案的运行：labs/results/ 里没有 ngram_speculation 的结果文件，"
            "本页不给实测数字。按实验的默认设置（{prompt} 个 token 的提示词、每个请求 {new} 个"
            "新 token、γ = {gamma}），在 {gpu} 上用 AWQ 权重时它将被检查的下界和预测如下："
        ),
        "floor_header": ["B", "不投机时 TPOT 下界 (ms)"]
        + [f"α = {a} 时预测加速比" for a in EXAMPLE_ALPHAS],
        "header": [
            "配置",
            "B",
            "TPOT 中位数 (ms)",
            "下界 (ms)",
            "输出吞吐 (token/s)",
            "平均接受长度",
            "α（由平均接受长度）",
            "实测加速比",
            "预测加速比",
        ],
        "run": "{gpu}（{device}）· vLLM {vllm} · {model}（{quant}）· {date} · {file}",
        "notes": (
            "有重复时取中位数。加速比 = 不投机时的 TPOT ÷ 投机时的 TPOT；预测用本行测得的 α，"
            "按第 3 节的 speed-up(B) 计算（两个下界之比，草稿不耗 GPU 时间）；— 表示 GPU 或模型"
            "不在课程的核心表里。"
        ),
    },
    "en": {
        "none": (
            "No run is recorded yet: labs/results/ holds no ngram_speculation results file, so "
            "this page shows no measured figure. At the lab's defaults ({prompt}-token prompts, "
            "{new} new tokens per request, γ = {gamma}), on the {gpu} with the AWQ weights, these "
            "are the floors and predictions it will be checked against:"
        ),
        "floor_header": ["B", "TPOT floor without speculation (ms)"]
        + [f"predicted speed-up at α = {a}" for a in EXAMPLE_ALPHAS],
        "header": [
            "config",
            "B",
            "median TPOT (ms)",
            "floor (ms)",
            "output throughput (tokens/s)",
            "mean acceptance length",
            "α (from the mean length)",
            "measured speed-up",
            "predicted speed-up",
        ],
        "run": "{gpu} ({device}) · vLLM {vllm} · {model} ({quant}) · {date} · {file}",
        "notes": (
            "Medians where a batch was repeated. Speed-up = TPOT without speculation / TPOT with "
            "it; the prediction uses the α measured in that row and section 3's speed-up(B) (a "
            "ratio of two lower bounds, drafts free of GPU time); — marks a GPU or model the "
            "course's core does not know."
        ),
    },
}


def summaries(run: dict, config: str, batch: int) -> list[dict]:
    return [
        s
        for s in run["speculation"]
        if s["config"] == config and s["batch"] == batch and s["phase"] == "measured"
    ]


def pooled(rows: list[dict]) -> Acceptance | None:
    """The counters of several measured calls added up."""
    if not rows or not sum(s["num_drafts"] for s in rows):
        return None
    per_pos = [sum(col) for col in zip(*(s["accepted_per_pos"] for s in rows), strict=True)]
    return Acceptance(
        sum(s["num_drafts"] for s in rows),
        sum(s["num_draft_tokens"] for s in rows),
        sum(s["num_accepted_tokens"] for s in rows),
        tuple(per_pos),
    )


def table(run: dict, gpu: GPU | None, header: list[str]) -> list[str]:
    p = run["parameters"]
    resolved = model_for(run) if gpu is not None else None
    prompt, new, gamma = p["prompt_tokens"], p["new_tokens"], p["gamma"]
    lines = markdown_head(header)
    for b in p["batches"]:
        off = summaries(run, "off", b)
        off_tpot = statistics.median(s["tpot_s"] for s in off) if off else None
        for config in p["configs"]:
            rows = summaries(run, config, b)
            if not rows:
                continue
            tpot = statistics.median(s["tpot_s"] for s in rows)
            tps = statistics.median(s["output_tokens_per_s"] for s in rows)
            acc = pooled(rows)
            length = acc.mean_length if acc else 1.0
            floor = speed = predicted = None
            if resolved:
                args = dict(batch=b, prompt=prompt, new=new)
                floor = tpot_floor_s(gpu, *resolved, **args, mean_length=length)
                if acc:
                    predicted = predicted_speedup(
                        gpu, *resolved, **args, alpha=acc.alpha(gamma), gamma=gamma
                    )
            if acc and off_tpot:
                speed = off_tpot / tpot
            cells = [
                config,
                f"{b}",
                f"{tpot * 1e3:,.2f}",
                "—" if floor is None else f"{floor * 1e3:,.2f}",
                f"{tps:,.0f}",
                f"{length:.2f}",
                f"{acc.alpha(gamma):.3f}" if acc else "—",
                "—" if speed is None else f"{speed:.2f}",
                "—" if predicted is None else f"{predicted:.2f}",
            ]
            lines.append(markdown_row(cells))
    return lines


def main(lang: str = "zh", results_dir: Path = RESULTS) -> None:
    text = TEXT[lang]
    runs = runs_with_gpus(results_dir, {LAB})
    if not runs:
        gpu = load_gpus()[LAB_GPU]
        print(
            text["none"].format(
                prompt=lab_prompt_tokens(), new=LAB_NEW_TOKENS, gamma=LAB_GAMMA, gpu=gpu.name
            )
        )
        print()
        floors = default_floors()
        print("\n".join(markdown_head(text["floor_header"], label_column=False)))
        for b in LAB_BATCHES:
            cells = [f"{b}", f"{floors[f'floor_b{b}_ms']:.2f}"]
            cells += [f"{floors[f'speedup_b{b}_a{a}']:.2f}" for a in EXAMPLE_ALPHAS]
            print(markdown_row(cells))
        return
    print_recorded_runs(text, runs, table, results_dir)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "zh")
