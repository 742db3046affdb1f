"""Cost per million output tokens from a GPU's hourly price and a throughput, and Little's law.

  cost per 1M tokens = price per hour / (tokens per second * 3600) * 1e6
  Little's law:        L = lambda * W   (requests in the system = arrival rate * time in it)

Prices are inputs read from prices.toml (each with its offer, source and date). The throughput
here is the roofline UPPER BOUND on decode throughput at batch B (B / TPOT lower bound, every
sequence at the same context), so the cost is a LOWER BOUND: a real engine is slower, and a
server that must meet latency targets runs below its peak. Standard library and the core only.

Run it: python snippets/load_testing/cost.py
"""

import tomllib
from dataclasses import dataclass
from pathlib import Path

import load_testing
from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.models import load_model
from core.roofline import e2e_bound_s, tpot_bound

# found through the package, so the file also works when its text is executed elsewhere
PRICES_FILE = Path(load_testing.__file__).with_name("prices.toml")
GPU_KEY = "rtx_4090"
MODEL_KEY = "qwen2.5-7b-instruct-awq"
BATCH = 16  # Part 3's slots
CONTEXT = 576  # tokens per sequence: a 512-token prompt and half of a 128-token answer
RATE = 8.0  # requests per second, for Little's law
PROMPT, OUTPUT = 512, 128  # the request behind Little's law's W


@dataclass(frozen=True)
class Price:
    gpu_key: str
    usd_per_hour: float
    offer: str
    source: str
    via: str
    read_on: str


def load_prices(path: Path = PRICES_FILE) -> dict[str, Price]:
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"{path}: cannot read the price table: {error}") from error
    prices = {}
    for key, row in table.items():
        missing = {"usd_per_gpu_hour", "offer", "source", "via", "read_on"} - set(row)
        if missing:
            raise ValueError(f"{path}: [{key}] lacks {', '.join(sorted(missing))}")
        if not row["usd_per_gpu_hour"] > 0:
            raise ValueError(f"{path}: [{key}] usd_per_gpu_hour must be positive")
        prices[key] = Price(
            key, float(row["usd_per_gpu_hour"]), row["offer"], row["source"], row["via"],
            str(row["read_on"]),
        )  # fmt: skip
    return prices


def usd_per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    if usd_per_hour < 0 or tokens_per_s <= 0:
        raise ValueError(f"need price >= 0 and throughput > 0, got {usd_per_hour}, {tokens_per_s}")
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


# How long each GPU lab takes on the reference card, engine starts included (estimates, in minutes;
# the lab cards on the lesson pages quote them with the cost they come to at prices.toml's price).
LAB_MINUTES = {
    "prefill_decode": 15,
    "batched_decode": 20,
    "continuous_batching": 20,
    "load_testing": 20,
    "chunked_prefill": 5,
}


def lab_cost_usd(minutes: float, usd_per_hour: float) -> float:
    """What `minutes` of one rented GPU cost at the hourly price."""
    if minutes < 0 or usd_per_hour < 0:
        raise ValueError(f"need minutes >= 0 and price >= 0, got {minutes}, {usd_per_hour}")
    return minutes / 60 * usd_per_hour


def littles_law(rate: float, latency_s: float) -> float:
    """Little's law, n_sys = lambda * t_sys: the mean number of requests in the system."""
    if rate < 0 or latency_s < 0:
        raise ValueError(f"rate and latency must be non-negative, got {rate}, {latency_s}")
    return rate * latency_s


def decode_throughput_bound(gpu_key: str, model_key: str, batch: int, context: int) -> float:
    """Output tokens/s of a decode batch, upper bound: batch / TPOT lower bound."""
    model = load_model(model_key)
    gpu = load_gpus()[gpu_key]
    return batch / tpot_bound(gpu, model, context, checkpoint_format(model), batch).seconds


def main() -> None:
    model = load_model(MODEL_KEY)
    gpu = load_gpus()[GPU_KEY]
    fmt = checkpoint_format(model)
    w = e2e_bound_s(gpu, model, PROMPT, OUTPUT, fmt)
    print(f"Little's law, {model.name} ({fmt.name}) on {gpu.name}:")
    print(
        f"  one {PROMPT}-token prompt, {OUTPUT} new tokens, alone: E2E >= {w:.2f} s; "
        f"at {RATE:g} req/s, n_sys = {RATE:g} x {w:.2f} = {littles_law(RATE, w):.1f} "
        "requests in flight"
    )
    price = load_prices()[GPU_KEY]
    tps = decode_throughput_bound(GPU_KEY, MODEL_KEY, BATCH, CONTEXT)
    print(f"\ncost: {price.offer}, ${price.usd_per_hour:.2f}/h (read {price.read_on})")
    print(f"  decode at batch {BATCH}, context {CONTEXT}: <= {tps:,.0f} output tokens/s (bound)")
    print(f"  => >= ${usd_per_million_tokens(price.usd_per_hour, tps):.3f} per 1M output tokens")


if __name__ == "__main__":
    main()
