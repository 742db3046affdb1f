"""Figures the continuous-batching lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ continuous_batching.<name> }}; coursesite.values fills them in.
Run `python snippets/continuous_batching/values.py` to list every name and its value.
"""

import numpy as np

from continuous_batching.simulate import (
    MAX_OUTPUT,
    MEAN_OUTPUT,
    PROMPT_TOKENS,
    RATE,
    REQUESTS,
    SEED,
    SLOTS,
    Hardware,
    Summary,
    burst,
    compare,
    default_hardware,
    request_stream,
)
from continuous_batching.timeline import TOY, TOY_SLOTS, busy_share, makespan, timeline
from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.models import load_model

TRANSFER_GPU = "h100_sxm"
TRANSFER_MODEL = "qwen2.5-7b-instruct"
TRANSFER_SLOTS = 64
QUIZ_SLOTS = 4


def harmonic(k: int) -> float:
    """H_k = 1 + 1/2 + ... + 1/k: the expected maximum of k exponential draws, in means."""
    return sum(1 / i for i in range(1, k + 1))


def gains(static: Summary, continuous: Summary) -> tuple[float, float]:
    """Continuous over static: (slot utilization ratio, throughput ratio)."""
    return (
        continuous.slot_utilization / static.slot_utilization,
        continuous.throughput_tok_s / static.throughput_tok_s,
    )


def values() -> dict[str, str]:
    stream, hw = request_stream(), default_hardware()
    online = {s.policy: s for s in compare(stream, hw)}
    offline = {s.policy: s for s in compare(burst(stream), hw)}
    toy = {p: timeline(p) for p in ("static", "continuous")}
    out = stream.outputs
    v = {
        "seed": f"{SEED}",
        "requests": f"{REQUESTS}",
        "rate": f"{RATE:g}",
        "prompt": f"{PROMPT_TOKENS}",
        "mean_output": f"{MEAN_OUTPUT}",
        "max_output": f"{MAX_OUTPUT:,}",
        "slots": f"{SLOTS}",
        "sim_gpu": hw.gpu.name,
        "sim_model": hw.model.name,
        "drawn_mean": f"{out.mean():.1f}",
        "drawn_median": f"{np.median(out):.0f}",
        "drawn_p99": f"{np.percentile(out, 99):.0f}",
        "drawn_max": f"{out.max()}",
        "offered_tok_s": f"{RATE * out.mean():,.0f}",
        "timeline_requests": f"{len(TOY)}",
        "timeline_slots": f"{TOY_SLOTS}",
        "timeline_static_steps": f"{makespan(toy['static'])}",
        "timeline_continuous_steps": f"{makespan(toy['continuous'])}",
        "timeline_static_busy": f"{busy_share(toy['static']):.0%}",
        "timeline_continuous_busy": f"{busy_share(toy['continuous']):.0%}",
    }
    for scenario, rows in (("online", online), ("offline", offline)):
        for policy, s in rows.items():
            key = f"{scenario}_{policy}"
            v[f"{key}_util"] = f"{s.slot_utilization:.1%}"
            v[f"{key}_prefill_share"] = f"{s.prefill_share:.0%}"
            v[f"{key}_tok_s"] = f"{s.throughput_tok_s:,.0f}"
            v[f"{key}_mean_s"] = f"{s.mean_latency_s:.2f}"
            v[f"{key}_p99_s"] = f"{s.p99_latency_s:.2f}"
            v[f"{key}_ttft_s"] = f"{s.mean_ttft_s:.2f}"
    offered_share = RATE * out.mean() / offline["continuous"].throughput_tok_s
    v["offered_share_of_capacity"] = f"{offered_share:.0%}"
    v["harmonic_slots"] = f"{harmonic(SLOTS):.2f}"
    v["static_util_estimate"] = f"{1 / harmonic(SLOTS):.1%}"
    v["quiz_slots"] = f"{QUIZ_SLOTS}"
    v["quiz_harmonic"] = f"{harmonic(QUIZ_SLOTS):.2f}"
    v["quiz_util_estimate"] = f"{1 / harmonic(QUIZ_SLOTS):.0%}"
    model = load_model(TRANSFER_MODEL)
    t_hw = Hardware(load_gpus()[TRANSFER_GPU], model, checkpoint_format(model))
    t = {s.policy: s for s in compare(burst(stream), t_hw, TRANSFER_SLOTS)}
    v["xfer_gpu"] = t_hw.gpu.name
    v["xfer_model"] = model.name
    v["xfer_slots"] = f"{TRANSFER_SLOTS}"
    v["xfer_harmonic"] = f"{harmonic(TRANSFER_SLOTS):.2f}"
    v["xfer_util_estimate"] = f"{1 / harmonic(TRANSFER_SLOTS):.1%}"
    for policy, summary in t.items():
        v[f"xfer_{policy}_util"] = f"{summary.slot_utilization:.1%}"
        v[f"xfer_{policy}_tok_s"] = f"{summary.throughput_tok_s:,.0f}"
        v[f"xfer_{policy}_prefill_share"] = f"{summary.prefill_share:.0%}"
    xfer_util_gain, xfer_gain = gains(t["static"], t["continuous"])
    v["xfer_util_gain"] = f"{xfer_util_gain:.1f}"
    v["xfer_gain"] = f"{xfer_gain:.1f}"
    offline_util_gain, offline_gain = gains(offline["static"], offline["continuous"])
    v["offline_util_gain"] = f"{offline_util_gain:.1f}"
    v["offline_gain"] = f"{offline_gain:.1f}"
    # prefill takes the same time under both policies (compute-bound: batching it saves nothing),
    # so the decode time is where the policies differ
    v["offline_prefill_s"] = f"{offline['static'].prefill_s:.1f}"
    for policy, s in offline.items():
        v[f"offline_{policy}_decode_s"] = f"{s.decode_s:.1f}"
    decode_gain = offline["static"].decode_s / offline["continuous"].decode_s
    v["offline_decode_gain"] = f"{decode_gain:.1f}"
    return v


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
