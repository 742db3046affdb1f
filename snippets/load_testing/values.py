"""Figures the load-testing lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ load_testing.<name> }}; coursesite.values fills them in.
Run `python snippets/load_testing/values.py` to list every name and its value.
"""

from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.models import load_model
from core.roofline import e2e_bound_s
from load_testing import arrivals, cost, sweep

XFER_GPU = "h100_sxm"
XFER_MODEL = "qwen2.5-7b-instruct"
XFER_BATCH = 64
LITTLE_CHECK_RATE = 8.0  # a rate of the sweep at which the simulation checks Little's law


def best(points: tuple[sweep.Point, ...]) -> sweep.Point:
    return max(points, key=lambda p: p.goodput)


def at(points: tuple[sweep.Point, ...], rate: float) -> sweep.Point:
    return next(p for p in points if p.rate == rate)


def values() -> dict[str, str]:
    hw = sweep.default_hardware()
    v = {
        "seed": f"{sweep.SEED}",
        "sweep_requests": f"{sweep.REQUESTS}",
        "prompt": f"{sweep.PROMPT_TOKENS}",
        "mean_output": f"{sweep.MEAN_OUTPUT}",
        "max_output": f"{sweep.MAX_OUTPUT:,}",
        "slots": f"{sweep.SLOTS}",
        "sim_gpu": hw.gpu.name,
        "sim_model": hw.model.name,
        "rates": ", ".join(f"{r:g}" for r in sweep.RATES),
        "bursty": f"{sweep.BURSTY:g}",
        "bursty_cv": f"{sweep.BURSTY**-0.5:g}",
        "slo_ttft_ms": f"{sweep.SLO_MS['ttft']:,g}",
        "slo_tpot_ms": f"{sweep.SLO_MS['tpot']:,g}",
        "arrival_requests": f"{arrivals.REQUESTS:,}",
        "arrival_rate": f"{arrivals.RATE:g}",
        "arrival_mean_gap_ms": f"{1e3 / arrivals.RATE:g}",
        "arrival_b_low": f"{sweep.BURSTY:g}",  # self-test 2 answers it with bursty_cv
        "arrival_b_high": f"{max(arrivals.BURSTINESS):g}",
    }
    for b in arrivals.BURSTINESS:
        key = f"{b:g}".replace(".", "_")
        d = arrivals.describe(arrivals.arrival_times(arrivals.REQUESTS, arrivals.RATE, b))
        v[f"arrival_cv_{key}"] = f"{d['cv']:.2f}"
        v[f"arrival_busiest_{key}"] = f"{d['busiest']}"
    # Little's law, closed form: one request alone
    model = load_model(cost.MODEL_KEY)
    gpu = load_gpus()[cost.GPU_KEY]
    w = e2e_bound_s(gpu, model, cost.PROMPT, cost.OUTPUT, checkpoint_format(model))
    v["little_rate"] = f"{cost.RATE:g}"
    v["little_prompt"] = f"{cost.PROMPT}"
    v["little_output"] = f"{cost.OUTPUT}"
    v["little_w_s"] = f"{w:.2f}"
    v["little_l"] = f"{cost.littles_law(cost.RATE, w):.1f}"
    # the sweep
    cap_req, cap_tok = sweep.capacity()
    v["capacity_req_s"] = f"{cap_req:.1f}"
    v["capacity_tok_s"] = f"{cap_tok:,.0f}"
    poisson, bursty = sweep.sweep(1.0), sweep.sweep(sweep.BURSTY)
    for name, points in (("poisson", poisson), ("bursty", bursty)):
        for p in points:
            key = f"{name}_{p.rate:g}".replace(".", "_")
            v[f"{key}_ttft_p50_s"] = f"{p.ttft_p50_s:.2f}"
            v[f"{key}_ttft_p99_s"] = f"{p.ttft_p99_s:.2f}"
            v[f"{key}_tpot_p99_ms"] = f"{p.tpot_p99_s * 1e3:.1f}"
            v[f"{key}_e2e_p99_s"] = f"{p.e2e_p99_s:.2f}"
            v[f"{key}_done"] = f"{p.request_throughput:.2f}"
            v[f"{key}_goodput"] = f"{p.goodput:.2f}"
        top = best(points)
        v[f"{name}_best_rate"] = f"{top.rate:g}"
        v[f"{name}_best_goodput"] = f"{top.goodput:.2f}"
        v[f"{name}_best_load"] = f"{top.rate / cap_req:.0%}"
    # where goodput peaks, across seeds: short runs scatter, long ones agree
    peaks = sweep.peak_loads()
    short, long = peaks[sweep.REQUESTS], peaks[sweep.LONG_REQUESTS]
    if not best(poisson).rate / cap_req > max(long):
        raise ValueError("the page calls the short run's peak luck, above the long runs' peaks")
    v["peak_grid_step"] = f"{sweep.PEAK_LOADS[1] - sweep.PEAK_LOADS[0]:.0%}"
    v["peak_grid_low"] = f"{sweep.PEAK_LOADS[0]:.0%}"
    v["short_seeds"] = f"{len(short)}"
    v["short_peak_min"], v["short_peak_max"] = f"{min(short):.0%}", f"{max(short):.0%}"
    v["short_traffic_s"] = f"{sweep.REQUESTS / best(poisson).rate:.0f}"
    v["long_requests"] = f"{sweep.LONG_REQUESTS:,}"
    v["long_seeds"] = f"{len(long)}"
    v["long_peak_min"], v["long_peak_max"] = f"{min(long):.0%}", f"{max(long):.0%}"
    v["long_peak_rate_min"] = f"{min(long) * cap_req:.1f}"
    v["long_peak_rate_max"] = f"{max(long) * cap_req:.1f}"
    low, high = poisson[0], poisson[-1]
    v["low_rate"] = f"{low.rate:g}"
    v["high_rate"] = f"{high.rate:g}"
    v["ttft_p99_growth"] = f"{high.ttft_p99_s / low.ttft_p99_s:.0f}"
    # Little's law, checked on the simulation: time-averaged requests in the system
    p = at(poisson, LITTLE_CHECK_RATE)
    if not p.request_throughput < p.rate:
        raise ValueError("the page says the run's actual rate is below the nominal one")
    v["little_check_rate"] = f"{p.rate:g}"
    v["little_check_l"] = f"{p.mean_in_system:.2f}"
    v["little_check_mean_e2e_s"] = f"{p.mean_e2e_s:.3f}"
    v["little_check_lambda"] = f"{p.request_throughput:.2f}"
    v["little_check_product"] = f"{p.request_throughput * p.mean_e2e_s:.2f}"
    # cost
    prices = cost.load_prices()
    price = prices[cost.GPU_KEY]
    v["price_usd_h"] = f"{price.usd_per_hour:.2f}"
    v["price_offer"] = price.offer
    v["price_read_on"] = price.read_on
    # the GPU labs' cost lines, at this price (the labs run on the same card)
    for slug, minutes in cost.LAB_MINUTES.items():
        v[f"lab_minutes_{slug}"] = f"{minutes}"
        v[f"lab_cost_usd_{slug}"] = f"{cost.lab_cost_usd(minutes, price.usd_per_hour):.2f}"
    v["cost_batch"] = f"{cost.BATCH}"
    v["cost_context"] = f"{cost.CONTEXT}"
    tps = cost.decode_throughput_bound(cost.GPU_KEY, cost.MODEL_KEY, cost.BATCH, cost.CONTEXT)
    v["cost_bound_tok_s"] = f"{tps:,.0f}"
    v["cost_bound_usd_m"] = f"{cost.usd_per_million_tokens(price.usd_per_hour, tps):.3f}"
    v["cost_capacity_usd_m"] = f"{cost.usd_per_million_tokens(price.usd_per_hour, cap_tok):.3f}"
    good = best(poisson)
    good_tok_s = good.good_output_throughput
    v["cost_goodput_tok_s"] = f"{good_tok_s:,.0f}"
    v["cost_goodput_usd_m"] = f"{cost.usd_per_million_tokens(price.usd_per_hour, good_tok_s):.3f}"
    # transfer: another GPU and the BF16 checkpoint
    x_price = prices[XFER_GPU]
    x_tps = cost.decode_throughput_bound(XFER_GPU, XFER_MODEL, XFER_BATCH, cost.CONTEXT)
    v["xfer_gpu"] = load_gpus()[XFER_GPU].name
    v["xfer_model"] = load_model(XFER_MODEL).name
    v["xfer_batch"] = f"{XFER_BATCH}"
    v["xfer_price_usd_h"] = f"{x_price.usd_per_hour:.2f}"
    v["xfer_offer"] = x_price.offer
    v["xfer_read_on"] = x_price.read_on
    v["xfer_tok_s"] = f"{x_tps:,.0f}"
    v["xfer_usd_m"] = f"{cost.usd_per_million_tokens(x_price.usd_per_hour, x_tps):.3f}"
    return v


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
