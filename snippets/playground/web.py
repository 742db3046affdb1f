"""The playground page's computation: lower bounds and the roofline chart for one choice.

A batch of B sequences decodes together: TPOT's floor is the core's batched step bound, the
output throughput at most B tokens per step, and the KV cache of B sequences of S + n tokens must
fit in what vLLM's default budget leaves next to the weights (core.memory.MemoryBudget). TTFT is
one request's prefill.

The page (docs/performance/playground.ipynb) has a form; its button runs `report()` in the
reader's browser with Pyodide (scripts/coursesite/run_in_browser.py, docs/adr/0011).
`choices()` fills the form at build time. Standard library and the course's core only.

Run it: python snippets/playground/web.py [zh|en]  (prints the report's HTML for the defaults)
"""

import sys
from html import escape

from core.display import ms
from core.formats import BF16, FP8, WeightFormat, checkpoint_format, resident_weight_bytes
from core.forward import kv_cache_bytes
from core.gpus import GIB, GPU, load_gpus
from core.memory import MemoryBudget
from core.models import ModelSpec, kv_bytes_per_token, load_models
from core.roofline import tpot_bound, ttft_bound
from core.svgchart import phone_box
from roofline.chart import chart

DEFAULTS = {
    "model": "qwen2.5-7b-instruct",
    "fmt": "checkpoint",
    "gpu": "rtx_4090",
    "prompt_lengths": "128, 1024, 8192",
    "new_tokens": 256,
    "batch": 1,
}
# AWQ as Qwen's AWQ checkpoints store it: 4-bit weights, one FP16 scale and a 4-bit zero per 128.
AWQ_4BIT = WeightFormat("AWQ 4-bit g128", bits=4, group_size=128, zero_point=True)
MAX_LENGTHS = 8

TEXT = {
    "zh": {
        "checkpoint": "与检查点相同（{name}）",
        "head": [
            "prompt 长度 S",
            "TTFT ≥ (ms)",
            "受限于",
            "TPOT ≥ (ms)",
            "吞吐 ≤ (token/s)",
            "KV (GiB)",
            "放得下",
        ],
        "memory": "带宽",
        "compute": "算力",
        "yes": "是",
        "no": "否",
        "caption": "{model}（{fmt}）在 {gpu} 上的下界：TTFT 是单个请求的预填充；"
        "TPOT 和吞吐是 {b} 条序列在上下文 S 处一起解码的一步（之后的步只会更长）；"
        "KV 按每条 S + {n} 个 token 计",
        "bad_lengths": "prompt 长度应是 1 到 {most} 个正整数，用逗号分隔，收到的是 {text!r}",
        "bad_tokens": "新 token 数应是正整数，收到的是 {value!r}",
        "bad_batch": "批大小应是正整数，收到的是 {value!r}",
        "unknown": "没有名为 {key!r} 的{what}",
        "what": {"model": "模型", "gpu": "GPU", "fmt": "权重格式"},
    },
    "en": {
        "checkpoint": "as the checkpoint stores it ({name})",
        "head": [
            "prompt S",
            "TTFT ≥ (ms)",
            "set by",
            "TPOT ≥ (ms)",
            "tokens/s ≤",
            "KV (GiB)",
            "fits",
        ],
        "memory": "memory",
        "compute": "compute",
        "yes": "yes",
        "no": "NO",
        "caption": "Bounds for {model} ({fmt}) on the {gpu}: TTFT is one request's prefill; "
        "TPOT and throughput are one step of {b} sequences decoding together at context S "
        "(later steps only take longer); KV is for S + {n} tokens each",
        "bad_lengths": "prompt lengths must be 1 to {most} positive integers separated by commas,"
        " got {text!r}",
        "bad_tokens": "new tokens must be a positive integer, got {value!r}",
        "bad_batch": "batch size must be a positive integer, got {value!r}",
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


def positive(value: int | str, message: str) -> int:
    """A positive whole number from the form's text; else a ValueError with `message`."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise ValueError(message.format(value=value))
    return number


def kv_token_budget(card: GPU, spec: ModelSpec, weights: WeightFormat) -> int:
    """Tokens of KV cache vLLM's default budget leaves next to the weights (0: none)."""
    try:
        return MemoryBudget.for_gpu(card).tokens(
            resident_weight_bytes(spec, weights), kv_bytes_per_token(spec)
        )
    except ValueError:  # the weights alone do not fit
        return 0


def _pick(table: dict, key: str, what: str, lang: str):
    if key not in table:
        raise ValueError(TEXT[lang]["unknown"].format(key=key, what=TEXT[lang]["what"][what]))
    return table[key]


def report(
    model: str,
    fmt: str,
    gpu: str,
    prompt_lengths: str,
    new_tokens: int | str,
    lang: str = "en",
    batch: int | str = 1,
) -> str:
    """HTML: the bounds table for each prompt length at batch size `batch`, then the chart."""
    text = TEXT[lang]
    spec = _pick(load_models(), model, "model", lang)
    card = _pick(load_gpus(), gpu, "gpu", lang)
    if fmt not in {"checkpoint", "bf16", "fp8", "awq"}:
        _pick({}, fmt, "fmt", lang)
    weights = weight_format(fmt, spec)
    lengths = parse_lengths(prompt_lengths, lang)
    n = positive(new_tokens, text["bad_tokens"])
    b = positive(batch, text["bad_batch"])
    budget = kv_token_budget(card, spec, weights)

    rows = []
    for s in lengths:
        ttft = ttft_bound(card, spec, s, weights)
        tpot = tpot_bound(card, spec, s, weights, batch=b)  # the first step: context S
        cells = [
            f"{s:,}",
            ms(ttft.seconds),
            text["memory"] if ttft.memory_bound else text["compute"],
            ms(tpot.seconds),
            f"{b / tpot.seconds:,.0f}",
            f"{kv_cache_bytes(spec, s + n, batch=b) / GIB:.2f}",
            text["yes"] if b * (s + n) <= budget else text["no"],
        ]
        rows.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{escape(h)}</th>" for h in text["head"])
    caption = text["caption"].format(model=spec.name, fmt=weights.name, gpu=card.name, n=n, b=b)
    table = (
        f"<table><caption>{escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    svg = chart(card, spec, lang, lengths=lengths, context=max(lengths), fmt=weights)
    return table + "\n" + phone_box(svg)  # the page's charts get this box from the build


def main(lang: str = "zh") -> None:
    print(report(**DEFAULTS, lang=lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
