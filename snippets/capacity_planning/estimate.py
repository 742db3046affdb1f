"""A capacity plan from a product's numbers: standard library and the core, so it runs in the
browser. Change PRODUCT (or CANDIDATES) and run it again.

For each candidate (GPU, weight format as vLLM runs it on that GPU) the chain is:
  1. fit      resident weights; KV tokens the engine's budget leaves (core.memory, vLLM defaults)
  2. TP       each degree in TP_CHOICES whose per-GPU weights leave room for one max_model_len
              sequence; a step's time is its floor over TP GPUs plus the all-reduces' floor
              (two per layer, ring, over the card's link); the plan keeps the degree that
              needs the fewest GPUs in all
  3. floors   prefill of one prompt, decode step at batch B: the roofline lower bounds
  4. measured those floors divided by the measured-to-floor share of the closest published
              batch-1 run of the format (core.published: a row set against its own floor)
  5. batch    mean-value model of a server at batch B: each request costs its prefill plus 1/B of
              n_out decode steps, so  rate(B) = B / (n_out*t_step(B) + B*t_pf)  and
              TPOT(B) = t_step(B) + B*t_pf/n_out;
              the largest B with TPOT(B) <= target, within the KV cache at max_model_len each
  6. load     the rate the p99 targets allow is a share of rate(B) (LOAD_CEILING: the queueing
              the mean-value model leaves out; the build measures it with the load-testing
              simulator for this product, see plan_sim.py)
  7. replicas ceil(peak rate / rate per replica) + SPARE_REPLICAS, and USD per 1M output tokens
Every step time is a lower bound divided by a measured share: an estimate, not a measurement.

Run it: python snippets/capacity_planning/estimate.py
"""

import math
from dataclasses import dataclass
from functools import cache

from core.formats import FP8, SIXTEEN_BIT, WeightFormat, checkpoint_format, resident_weight_bytes
from core.gpus import GPU, load_gpus
from core.links import load_link, transfer_seconds
from core.memory import MemoryBudget
from core.models import ModelSpec, kv_bytes_per_token, load_model
from core.published import Calibrated, calibrated, closest_published
from core.quantization import as_run_on
from core.reference import AWQ_MODEL, BF16_MODEL
from core.roofline import tpot_bound, ttft_bound
from load_testing.cost import load_prices, usd_per_million_tokens


@dataclass(frozen=True)
class Product:
    peak_rate: float  # requests per second in the busiest hour
    prompt_tokens: int  # P
    mean_output: int  # O: mean new tokens per request
    max_output: int  # max_tokens: the longest answer the product allows
    ttft_p99_ms: float
    tpot_p99_ms: float


# A support assistant: a 1k-token prompt (system prompt, retrieved passages, the question),
# answers of 256 tokens on average and at most 1,024, 100 requests/s at the daily peak.
PRODUCT = Product(100.0, 1024, 256, 1024, ttft_p99_ms=1000.0, tpot_p99_ms=50.0)


@dataclass(frozen=True)
class Candidate:
    gpu_key: str
    model_key: str
    quantization: str | None  # vLLM's --quantization: None runs the checkpoint's own format


CANDIDATES = (
    Candidate("rtx_4090", AWQ_MODEL, None),
    Candidate("h100_sxm", BF16_MODEL, None),
    Candidate("h100_sxm", BF16_MODEL, "fp8"),
)
# The share of the mean-value rate at which the p99 targets still hold. The build measures it for
# PRODUCT on the load-testing simulator (plan_sim.py): this default is the lowest ceiling it found
# for a candidate the plan accepts (tests/test_capacity_planning.py holds the two equal).
LOAD_CEILING = 0.80
SPARE_REPLICAS = 1  # one replica may be down (a failure, a rolling upgrade) at the peak
TP_CHOICES = (1, 2, 4, 8)


# published.toml names a quantized checkpoint by the 16-bit model it was made from, with the
# format beside it
PUBLISHED_MODEL = {AWQ_MODEL: BF16_MODEL}
# No published batch-1 row measures FP8 weights. On an H100 vLLM multiplies them by activations it
# quantizes per token on the fly, one scale per weight tensor (Cutlass W8A8, vLLM 0.26.0's
# quantization/online/fp8.py): a plain matmul at another width, with no per-group dequantization
# as AWQ and GPTQ run, so of the measured formats BF16's path is the nearest and its row stands
# in. An argument, not a measurement: the page shows the plan on GPTQ-Int8's row too.
STAND_IN_FORMAT = {"FP8": "BF16"}


def published_format(candidate: Candidate) -> str:
    """The candidate's weight format as published.toml names it."""
    if candidate.quantization == "fp8":
        return "FP8"
    q = load_model(candidate.model_key).quantization
    return "BF16" if q is None else q["method"].upper()


@cache
def decode_rows() -> tuple[Calibrated, ...]:
    """Every published batch-1 row with its floor (core.published), computed once."""
    return tuple(c for c in calibrated() if c.row.phase == "decode")


def measured_share(candidate: Candidate, fmt: str | None = None) -> Calibrated:
    """The published batch-1 run closest to the candidate (core.published.closest_published):
    its share, floor / measured, is the one applied to every step time. `fmt` searches another
    format; a format no row measures searches its STAND_IN_FORMAT instead."""
    wanted = fmt or published_format(candidate)
    rows = decode_rows()
    if wanted not in {c.row.format for c in rows}:
        wanted = STAND_IN_FORMAT[wanted]
    model = PUBLISHED_MODEL.get(candidate.model_key, candidate.model_key)
    found = closest_published(model, candidate.gpu_key, wanted, "decode", list(rows))
    if found is None:
        raise ValueError("published.toml has no batch-1 row")
    return found


def weight_format(candidate: Candidate, gpu: GPU, model: ModelSpec) -> WeightFormat:
    fmt = FP8 if candidate.quantization == "fp8" else checkpoint_format(model)
    return as_run_on(gpu, fmt)


@dataclass(frozen=True)
class Plan:
    candidate: Candidate
    gpu: GPU
    model: ModelSpec
    fmt: WeightFormat
    measured: Calibrated | None  # the published run the share comes from; None on floors alone
    share: float  # measured-to-floor share applied to every step time
    tp: int
    kv_tokens: int  # KV cache the engine's budget leaves, in tokens (per replica)
    kv_batch: int  # sequences that fit at max_model_len each
    batch: int  # max_num_seqs: the largest batch within the TPOT target and the KV cache
    prefill_s: float  # one prompt, floor / share
    step_s: float  # decode step at `batch`, floor / share
    tpot_s: float  # mean-value TPOT at `batch`, prefills included
    mean_rate: float  # rate(batch): requests/s the mean-value model sustains
    rate: float  # mean_rate * load ceiling: what the plan counts on per replica
    replicas: int
    usd_per_gpu_hour: float

    @property
    def gpus(self) -> int:
        return self.replicas * self.tp


# The link TP's all-reduces cross on each card: an RTX 4090 has no NVLink, an H100 SXM does
TP_LINK = {"rtx_4090": "pcie4_x16", "h100_sxm": "nvlink4_h100"}
ALL_REDUCES_PER_LAYER = 2  # Megatron-style TP: after attention's o_proj and after the MLP


def all_reduce_s(gpu: GPU, model: ModelSpec, tokens: int, tp: int) -> float:
    """Lower bound on a step's all-reduces at TP: a ring moves 2(N-1)/N of each 16-bit
    activation tensor (tokens x hidden) per GPU over its link; latency is left out."""
    if tp == 1:
        return 0.0
    payload = tokens * model.hidden_size * SIXTEEN_BIT
    per_layer = ALL_REDUCES_PER_LAYER * 2 * (tp - 1) / tp * payload
    return transfer_seconds(load_link(TP_LINK[gpu.key]), per_layer * model.num_layers)


def kv_bytes_per_gpu(model: ModelSpec, tp: int) -> float:
    """One token's KV bytes on each GPU at TP: its share of the KV heads. With more GPUs than KV
    heads vLLM replicates them (Qwen2Attention: max(1, kv_heads // TP) per GPU), so the share
    stops shrinking at TP = kv_heads."""
    return kv_bytes_per_token(model) * max(1, model.num_kv_heads // tp) / model.num_kv_heads


def step_s(gpu: GPU, model: ModelSpec, fmt: WeightFormat, batch: int, context: int, tp: int,
           share: float) -> float:  # fmt: skip
    """Decode step of `batch` sequences at `context` tokens each over TP GPUs: (floor / TP +
    all-reduces) / share."""
    floor = tpot_bound(gpu, model, context, fmt, batch).seconds / tp
    return (floor + all_reduce_s(gpu, model, batch, tp)) / share


def plan_at_tp(
    candidate: Candidate,
    product: Product,
    load_ceiling: float,
    tp: int,
    measured: Calibrated | None,
) -> Plan | None:
    """Steps 1 and 3-7 at one TP degree; None when the weights and one max_model_len sequence do
    not fit per GPU, one prompt's prefill misses the TTFT target, or no batch meets the TPOT one."""
    gpu, model = load_gpus()[candidate.gpu_key], load_model(candidate.model_key)
    share = 1.0 if measured is None else measured.share
    fmt = weight_format(candidate, gpu, model)
    budget = MemoryBudget.for_gpu(gpu)
    max_model_len = product.prompt_tokens + product.max_output
    blocks_per_seq = math.ceil(max_model_len / budget.block_size)
    room = budget.usable_bytes - budget.reserve_bytes - resident_weight_bytes(model, fmt) / tp
    if room < kv_bytes_per_gpu(model, tp) * blocks_per_seq * budget.block_size:
        return None
    kv_tokens = budget.tokens(resident_weight_bytes(model, fmt) / tp, kv_bytes_per_gpu(model, tp))
    kv_batch = kv_tokens // (blocks_per_seq * budget.block_size)
    floor = ttft_bound(gpu, model, product.prompt_tokens, fmt).seconds / tp
    prefill = (floor + all_reduce_s(gpu, model, product.prompt_tokens, tp)) / share
    if prefill * 1e3 > product.ttft_p99_ms:
        return None
    context = product.prompt_tokens + product.mean_output // 2  # the mean sequence mid-answer
    o = product.mean_output
    best = None
    for b in range(1, kv_batch + 1):
        s = step_s(gpu, model, fmt, b, context, tp, share)
        tpot = s + b * prefill / o
        if tpot * 1e3 > product.tpot_p99_ms:
            break  # TPOT(B) only grows with B
        best = (b, s, tpot, b / (o * s + b * prefill))
    if best is None:
        return None
    batch, s, tpot, mean_rate = best
    rate = mean_rate * load_ceiling
    replicas = math.ceil(product.peak_rate / rate) + SPARE_REPLICAS
    price = load_prices()[candidate.gpu_key].usd_per_hour
    return Plan(candidate, gpu, model, fmt, measured, share, tp, kv_tokens, kv_batch, batch,
                prefill, s, tpot, mean_rate, rate, replicas, price)  # fmt: skip


def plan(
    candidate: Candidate,
    product: Product = PRODUCT,
    load_ceiling: float = LOAD_CEILING,
    *,
    floors_only: bool = False,
    share_format: str | None = None,
) -> Plan | None:
    """The plan with the fewest GPUs over TP_CHOICES, the smaller TP on a tie; None when no TP
    degree meets the targets.
    floors_only: every step at its roofline floor (share 1), the plan a bound alone would give.
    share_format: take the share from the closest row of this format instead."""
    measured = None if floors_only else measured_share(candidate, share_format)
    plans = [plan_at_tp(candidate, product, load_ceiling, tp, measured) for tp in TP_CHOICES]
    found = [p for p in plans if p is not None]
    return min(found, key=lambda p: (p.gpus, p.tp)) if found else None


def usd_per_million(p: Plan, product: Product = PRODUCT) -> float:
    """At the peak: every GPU of the plan paid, the product's output tokens served."""
    return usd_per_million_tokens(
        p.gpus * p.usd_per_gpu_hour, product.peak_rate * product.mean_output
    )


def flags(p: Plan, product: Product = PRODUCT) -> str:
    """The `vllm serve` command line the plan implies (defaults left out)."""
    parts = [f"vllm serve {p.model.hf_repo}"]
    if p.candidate.quantization:
        parts.append(f"--quantization {p.candidate.quantization}")
    if p.tp > 1:
        parts.append(f"--tensor-parallel-size {p.tp}")
    parts.append(f"--max-model-len {product.prompt_tokens + product.max_output}")
    parts.append(f"--max-num-seqs {p.batch}")
    return " ".join(parts)


def main(product: Product = PRODUCT) -> None:
    print(
        f"product: {product.peak_rate:g} req/s at peak, prompt {product.prompt_tokens}, output "
        f"mean {product.mean_output} (max {product.max_output}); p99 TTFT <= "
        f"{product.ttft_p99_ms:g} ms, p99 TPOT <= {product.tpot_p99_ms:g} ms"
    )
    for c in CANDIDATES:
        p = plan(c, product)
        name = f"{load_gpus()[c.gpu_key].name}, {load_model(c.model_key).name}"
        if p is None:
            print(f"\n{name}: no TP degree and batch meets the targets")
            continue
        r = p.measured.row
        print(f"\n{name}, {p.fmt.name}: measured share {p.share:.0%} of the floor")
        print(
            f"  from {r.publisher}, {r.engine} {r.engine_version}, {r.hardware}, "
            f"{r.published_model} {r.format}, batch 1, {r.input_len}/{r.output_len} tokens "
            f"(read {r.read})"
        )
        if r.format != published_format(c):
            wanted = published_format(c)
            print(f"  no published row measures {wanted}: the {r.format} row stands in")
        print(
            f"  TP {p.tp}; KV cache {p.kv_tokens:,} tokens = {p.kv_batch} sequences at "
            f"max_model_len; max_num_seqs {p.batch}"
        )
        print(
            f"  prefill {p.prefill_s * 1e3:.0f} ms, step {p.step_s * 1e3:.1f} ms, TPOT "
            f"{p.tpot_s * 1e3:.1f} ms; {p.mean_rate:.1f} req/s x {LOAD_CEILING:.0%} = "
            f"{p.rate:.1f} req/s per replica"
        )
        print(
            f"  {p.replicas} replicas ({SPARE_REPLICAS} spare) = {p.gpus} GPUs x "
            f"${p.usd_per_gpu_hour:.2f}/h = ${p.gpus * p.usd_per_gpu_hour:.2f}/h, "
            f"${usd_per_million(p, product):.3f} per 1M output tokens at the peak"
        )
        print(f"  {flags(p, product)}")


if __name__ == "__main__":
    main()
