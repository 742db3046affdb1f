"""The playground page's computation: lower bounds and the roofline chart for one choice.

The page (docs/performance/playground.ipynb) has a form; its button runs `report()` in the
reader's browser with Pyodide (scripts/coursesite/run_in_browser.py, docs/adr/0011).
`choices()` fills the form at build time. Standard library and the course's core only.

Run it: python snippets/playground/web.py [zh|en]  (prints the report's HTML for the defaults)
"""

import sys
from html import escape

from core.display import ms
from core.formats import BF16, FP8, WeightFormat, checkpoint_format
from core.gpus import load_gpus
from core.memory import fits
from core.models import ModelSpec, load_models
from core.roofline import e2e_bound_s, tpot_bound, ttft_bound
from roofline.chart import chart

DEFAULTS = {
    "model": "qwen2.5-7b-instruct",
    "fmt": "checkpoint",
    "gpu": "rtx_4090",
    "prompt_lengths": "128, 1024, 8192",
    "new_tokens": 256,
}
# AWQ as Qwen's AWQ checkpoints store it: 4-bit weights, one FP16 scale and a 4-bit zero per 128.
AWQ_4BIT = WeightFormat("AWQ 4-bit g128", bits=4, group_size=128, zero_point=True)
MAX_LENGTHS = 8

TEXT = {
    "zh": {
        "checkpoint": "与检查点相同（{name}）",
        "head": ["prompt 长度 S", "TTFT ≥ (ms)", "由谁决定", "TPOT ≥ (ms)", "E2E ≥ (s)", "放得下"],
        "memory": "带宽",
        "compute": "算力",
        "yes": "是",
        "no": "否",
        "caption": "{model}（{fmt}）在 {gpu} 上，批大小 1，生成 {n} 个 token 的下界",
        "bad_lengths": "prompt 长度应是 1 到 {most} 个正整数，用逗号分隔，收到的是 {text!r}",
        "bad_tokens": "新 token 数应是正整数，收到的是 {value!r}",
        "unknown": "没有名为 {key!r} 的{what}",
        "what": {"model": "模型", "gpu": "GPU", "fmt": "权重格式"},
    },
    "en": {
        "checkpoint": "as the checkpoint stores it ({name})",
        "head": ["prompt S", "TTFT ≥ (ms)", "set by", "TPOT ≥ (ms)", "E2E ≥ (s)", "fits"],
        "memory": "memory",
        "compute": "compute",
        "yes": "yes",
        "no": "NO",
        "caption": "Lower bounds for {model} ({fmt}) on the {gpu}, batch 1, {n} new tokens",
        "bad_lengths": "prompt lengths must be 1 to {most} positive integers separated by commas,"
        " got {text!r}",
        "bad_tokens": "new tokens must be a positive integer, got {value!r}",
        "unknown": "no {what} named {key!r}",
        "what": {"model": "model", "gpu": "GPU", "fmt": "weight format"},
    },
}


def weight_format(key: str, model: ModelSpec) -> WeightFormat:
    """The format for `key`: checkpoint (the model's own: BF16 or AWQ), bf16, fp8, awq."""
    if key == "checkpoint":
        return checkpoint_format(model)
    if key == "awq" and model.quantization is not None:
        return checkpoint_format(model)
    return {"bf16": BF16, "fp8": FP8, "awq": AWQ_4BIT}[key]


def choices(lang: str) -> dict[str, list[tuple[str, str]]]:
    """(value, label) of every option of the form's three lists."""
    return {
        "model": [(key, spec.name) for key, spec in load_models().items()],
        "fmt": [
            ("checkpoint", TEXT[lang]["checkpoint"].format(name="BF16 / AWQ")),
            ("bf16", BF16.name),
            ("fp8", FP8.name),
            ("awq", AWQ_4BIT.name),
        ],
        "gpu": [(key, gpu.name) for key, gpu in load_gpus().items()],
    }


def parse_lengths(text: str, lang: str = "en") -> list[int]:
    """The lengths in "128, 1024" -> [128, 1024]; else a ValueError naming what was typed."""
    parts = [p.strip() for p in str(text).replace("，", ",").split(",") if p.strip()]
    try:
        lengths = [int(p.replace("_", "")) for p in parts]
    except ValueError:
        lengths = []
    if not 1 <= len(lengths) <= MAX_LENGTHS or min(lengths) < 1:
        raise ValueError(TEXT[lang]["bad_lengths"].format(most=MAX_LENGTHS, text=text))
    return lengths


def _pick(table: dict, key: str, what: str, lang: str):
    if key not in table:
        raise ValueError(TEXT[lang]["unknown"].format(key=key, what=TEXT[lang]["what"][what]))
    return table[key]


def report(
    model: str, fmt: str, gpu: str, prompt_lengths: str, new_tokens: int | str, lang: str = "en"
) -> str:
    """HTML: the bounds table for each prompt length, then the roofline chart."""
    text = TEXT[lang]
    spec = _pick(load_models(), model, "model", lang)
    card = _pick(load_gpus(), gpu, "gpu", lang)
    if fmt not in {"checkpoint", "bf16", "fp8", "awq"}:
        _pick({}, fmt, "fmt", lang)
    weights = weight_format(fmt, spec)
    lengths = parse_lengths(prompt_lengths, lang)
    try:
        n = int(new_tokens)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(text["bad_tokens"].format(value=new_tokens))

    rows = []
    for s in lengths:
        ttft = ttft_bound(card, spec, s, weights)
        tpot = tpot_bound(card, spec, s, weights)
        e2e = e2e_bound_s(card, spec, s, n, weights)
        cells = [
            f"{s:,}",
            ms(ttft.seconds),
            text["memory"] if ttft.memory_bound else text["compute"],
            ms(tpot.seconds),
            f"{e2e:.2f}",
            text["yes"] if fits(card, spec, s + n, weights) else text["no"],
        ]
        rows.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{escape(h)}</th>" for h in text["head"])
    caption = text["caption"].format(model=spec.name, fmt=weights.name, gpu=card.name, n=n)
    table = (
        f"<table><caption>{escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    svg = chart(card, spec, lang, lengths=lengths, context=max(lengths), fmt=weights)
    return table + "\n" + svg


def main(lang: str = "zh") -> None:
    print(report(**DEFAULTS, lang=lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
