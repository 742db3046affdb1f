"""Published measurements (published.toml) beside the core's floor for each one's exact setting.

The floor is the roofline lower bound of the course's core: for a request measured alone (batch
1), the time to generate its tokens, prefill included, as the publisher timed it; for requests
sent with no delay (the engine batches all it holds), the compute a request needs at peak FLOP/s,
whatever the batch. The share is floor time / measured time: 1 is the roofline, 0.5 is half of it.
Run it: python snippets/core/published.py
"""

import dataclasses
import datetime
import tomllib
from dataclasses import dataclass
from pathlib import Path

from core.formats import BF16, FP8, WeightFormat, checkpoint_format
from core.forward import decode_flops, prefill_flops
from core.gpus import GPU, load_gpus
from core.models import load_model, load_models
from core.moe import MOE_MODELS_DIR, load_moe_model
from core.roofline import compute_peak, e2e_bound_s

PUBLISHED_FILE = Path(__file__).resolve().parent / "published.toml"

# The weight formats the rows name, as bytes the core can count. GPTQ checkpoints (Qwen's
# GPTQ-Int8 and GPTQ-Int4: quantization_config bits 8 or 4, group_size 128) store, like AWQ, packed
# weights, an FP16 scale and a packed zero per group of 128 inputs of one output; embedding and
# lm_head stay 16-bit. Qwen2.5-72B's quantized checkpoints pad the MLP to 29,696 columns, which
# the 72B's BF16 shape (29,568) leaves out: a few bytes fewer, so the floor stays a floor.
FORMATS: dict[str, WeightFormat] = {
    "BF16": BF16,
    "FP8": FP8,
    "AWQ": checkpoint_format(load_model("qwen2.5-7b-instruct-awq")),
    "GPTQ-Int8": WeightFormat("GPTQ 8-bit g128", bits=8, group_size=128, zero_point=True),
    "GPTQ-Int4": WeightFormat("GPTQ 4-bit g128", bits=4, group_size=128, zero_point=True),
}
COURSE_ENGINE = "vLLM"  # the engine the course's labs run: preferred when rows tie
MAX_LOAD = "max"  # batch: requests sent with no delay, as many in flight as the engine holds
TEXT_FIELDS = (
    "publisher",
    "url",
    "hardware",
    "gpu",
    "engine",
    "engine_version",
    "model",
    "published_model",
    "format",
    "metric",
)


@dataclass(frozen=True)
class Published:
    """One published measurement, as the page states it."""

    publisher: str
    url: str
    read: datetime.date
    hardware: str
    gpu: str
    gpus: int
    engine: str
    engine_version: str
    model: str
    published_model: str
    format: str
    batch: int | str
    input_len: int
    output_len: int
    metric: str
    value: float  # tokens per second, in every row
    note: str = ""

    @property
    def phase(self) -> str:
        """ "decode": one request at a time (mostly decode steps); "serving": maximum load."""
        return "serving" if self.batch == MAX_LOAD else "decode"


def _count(row: dict, name: str, minimum: int = 1) -> int:
    value = row[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def validate(row: dict) -> Published:
    """A row of published.toml as a Published, or ValueError naming what is wrong with it."""
    names = {f.name for f in dataclasses.fields(Published)}
    required = names - {"note"}
    if missing := required - row.keys():
        raise ValueError(f"missing fields: {sorted(missing)}")
    if unknown := row.keys() - names:
        raise ValueError(f"unknown fields: {sorted(unknown)}")
    for name in TEXT_FIELDS:
        if not isinstance(row[name], str) or not row[name].strip():
            raise ValueError(f"{name} must be a non-empty string, got {row[name]!r}")
    if not row["url"].startswith("https://") or " " in row["url"]:
        raise ValueError(f"url must be one https:// address, got {row['url']!r}")
    read = row["read"]
    if type(read) is not datetime.date or read > datetime.date.today():
        raise ValueError(f"read must be a past date (YYYY-MM-DD), got {read!r}")
    if row["gpu"] not in load_gpus():
        raise ValueError(f"unknown GPU {row['gpu']!r}: add it to core/gpus.toml with its datasheet")
    if row["model"] not in load_models():
        raise ValueError(f"unknown model {row['model']!r}: add its config to core/models/")
    if row["format"] not in FORMATS:
        raise ValueError(f"unknown format {row['format']!r} (known: {', '.join(FORMATS)})")
    if row["batch"] != MAX_LOAD:
        _count(row, "batch")
    for name in ("gpus", "input_len", "output_len"):
        _count(row, name)
    value = row["value"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"value must be a positive number, got {value!r}")
    return Published(**{**row, "value": float(value)})


def load_published(path: Path = PUBLISHED_FILE) -> list[Published]:
    with path.open("rb") as f:
        rows = tomllib.load(f).get("row", [])
    published = []
    for i, row in enumerate(rows, start=1):
        try:
            published.append(validate(row))
        except ValueError as error:
            raise ValueError(f"{path.name}, row {i}: {error}") from None
    return published


def tensor_parallel(gpu: GPU, count: int) -> GPU:
    """`count` GPUs splitting one model are at best one GPU `count` times as fast and as wide: the
    floor divides by `count` and counts no communication between them."""
    if count == 1:
        return gpu
    scaled = {
        "bf16_dense_tflops": gpu.bf16_dense_tflops * count,
        "memory_bandwidth_gbs": gpu.memory_bandwidth_gbs * count,
    }
    if gpu.fp8_dense_tflops:
        scaled["fp8_dense_tflops"] = gpu.fp8_dense_tflops * count
    return dataclasses.replace(gpu, name=f"{count}x {gpu.name}", **scaled)


@dataclass(frozen=True)
class Calibrated:
    """A published row, the floor for its setting (tokens/s at best) and the share it reached."""

    row: Published
    floor_tok_s: float  # the most tokens/s the roofline allows in this setting

    @property
    def share(self) -> float:
        """Floor time / measured time (= measured tokens/s / floor tokens/s): MBU for a batch-1
        row, whose floor is bandwidth in every decode step; MFU for a maximum-load row."""
        return self.row.value / self.floor_tok_s

    @property
    def utilization(self) -> str:
        return "MFU" if self.row.phase == "serving" else "MBU"


def floor_tok_s(row: Published) -> float:
    """The roofline's tokens/s for the row's own model, format, GPUs, lengths and batch."""
    gpu = tensor_parallel(load_gpus()[row.gpu], row.gpus)
    model, fmt = load_model(row.model), FORMATS[row.format]
    if row.phase == "decode":
        # as the publishers time it: output tokens / (prefill + every decode step) of one request
        return row.output_len / e2e_bound_s(gpu, model, row.input_len, row.output_len, fmt)
    # maximum load: any batch, so only compute bounds a request: its prefill and its decode steps
    flops = prefill_flops(model, row.input_len) + (row.output_len - 1) * decode_flops(model)
    return row.output_len * compute_peak(gpu, fmt) / flops


def calibrated(rows: list[Published] | None = None) -> list[Calibrated]:
    return [Calibrated(r, floor_tok_s(r)) for r in (load_published() if rows is None else rows)]


def closest_published(
    model: str, gpu: str, fmt: str, phase: str, rows: list[Calibrated] | None = None
) -> Calibrated | None:
    """The published row nearest a setting, for a page without a run of its own to quote: same
    phase ("decode" or "serving") required; then same model, same GPU, same format, vLLM (the
    course's engine), one GPU, the shortest prompt, in that order of weight. None when no row has
    that phase. `rows`: the calibrated rows to search (default: every published one)."""
    if phase not in ("decode", "serving"):
        raise ValueError(f"phase must be 'decode' or 'serving', got {phase!r}")
    candidates = [c for c in (calibrated() if rows is None else rows) if c.row.phase == phase]
    if not candidates:
        return None

    def nearness(c: Calibrated) -> tuple:
        r = c.row
        same = (r.model == model, r.gpu == gpu, r.format == fmt, r.engine == COURSE_ENGINE)
        return (*same, r.gpus == 1, -r.input_len)

    return max(candidates, key=nearness)


CARD_TEXT = {
    "zh": (
        "这个实验还没有记录在案的运行。已发表的测量里离它最近的一条：{publisher}，"
        "{engine} {version}，{hardware}，{model}（{fmt}），{batch}，"
        "输入 {input_len:,} / 输出 {output_len:,} token：{value:,.1f} token/s，"
        "达到同一设置下界的 {share:.0%}（下界时间 ÷ 实测时间，即 {utilization}）。"
        "来源：{url}（{read} 读取）。"
    ),
    "en": (
        "No run of this lab is recorded yet. The closest published measurement: {publisher}, "
        "{engine} {version} on {hardware}, {model} ({fmt}), {batch}, {input_len:,} in / "
        "{output_len:,} out: {value:,.1f} tokens/s, {share:.0%} of the floor for that setting "
        "(floor time ÷ measured time, that is {utilization}). Source: {url} (read {read})."
    ),
}
BATCH_TEXT = {"zh": ("批大小 {batch}", "最大负载"), "en": ("batch {batch}", "maximum load")}


# A dense model's share of its floor says nothing about an MoE model's: an MoE step reads only the
# experts its batch routes to, which no dense row stands in for: an MoE lab quotes only its model.
NO_MOE_ROW_TEXT = {
    "zh": (
        "这个实验还没有记录在案的运行，课程收录的已发表测量里也没有 "
        "{model} 的。MoE 模型一步只读批里路由到的专家，稠密模型测得的比例代替不了它，"
        "所以这里不并排展示别的模型的数据。"
    ),
    "en": (
        "No run of this lab is recorded yet, and no publisher in the course's table of published "
        "measurements measured {model}. An MoE step reads only the experts "
        "its batch is routed to, so a dense model's share of its floor cannot stand in for it, and "
        "no other model's row is shown here."
    ),
}


def _moe_name(model: str) -> str | None:
    """The display name of an MoE model the core knows, or None for any other key."""
    return load_moe_model(model).name if (MOE_MODELS_DIR / f"{model}.json").is_file() else None


def lab_card(
    lang: str, labs: set[str], model: str, gpu: str, fmt: str, phase: str, results_dir=None
) -> str:
    """A lab card's line while none of `labs` has a recorded run: the closest published row and
    the share of its floor it reached, or for an MoE model no publisher measured, a line saying so;
    "" once a run is recorded (the card tables that instead)."""
    from core.lab_results import RESULTS, recorded_runs

    if recorded_runs(results_dir or RESULTS, labs=labs):
        return ""
    if _moe_name(model) and all(c.row.model != model for c in calibrated()):
        return NO_MOE_ROW_TEXT[lang].format(model=_moe_name(model))
    c = closest_published(model, gpu, fmt, phase)
    if c is None:
        raise ValueError(f"no published row for phase {phase!r}")
    r = c.row
    one, loaded = BATCH_TEXT[lang]
    batch = loaded if r.batch == "max" else one.format(batch=r.batch)
    return CARD_TEXT[lang].format(
        publisher=r.publisher,
        engine=r.engine,
        version=r.engine_version,
        hardware=r.hardware,
        model=load_model(r.model).name,
        fmt=r.format,
        batch=batch,
        input_len=r.input_len,
        output_len=r.output_len,
        value=r.value,
        share=c.share,
        utilization=c.utilization,
        url=r.url,
        read=r.read.isoformat(),
    )


def main() -> None:
    print(
        f"{'publisher':<24}{'model':<22}{'GPU':<16}{'format':<10}{'batch':>6}{'in/out':>12}"
        f"{'tok/s':>10}{'floor':>10}{'share':>7}"
    )
    for c in calibrated():
        r = c.row
        gpu = f"{r.gpus}x {load_gpus()[r.gpu].name}"
        print(
            f"{r.publisher[:23]:<24}{r.model[:21]:<22}{gpu:<16}{r.format:<10}{r.batch!s:>6}"
            f"{f'{r.input_len}/{r.output_len}':>12}{r.value:>10,.1f}{c.floor_tok_s:>10,.1f}"
            f"{c.share:>7.0%}"
        )


if __name__ == "__main__":
    main()
