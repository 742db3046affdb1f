"""Figures the interview bank's system-design answers quote, as {{ interview.<name> }}.

Run `python snippets/interview/values.py` to list every name and its value.
"""

from interview.design import QUESTIONS, UTILIZATION, _on, plan


def values() -> dict[str, object]:
    out: dict[str, object] = {"utilization": f"{UTILIZATION:.0%}"}
    for key, w in QUESTIONS.items():
        p = plan(w)
        fewer = _on(w, p.gpus - 1) if p.gpus > 1 else p
        out |= {
            f"{key}_model": p.model_name,
            f"{key}_gpu": p.gpu_name,
            f"{key}_format": p.format_name,
            f"{key}_rate": f"{w.rate:g}",
            f"{key}_prompt": f"{w.prompt:,}",
            f"{key}_output": f"{w.output:,}",
            f"{key}_ttft_slo_ms": f"{w.ttft_slo_s * 1e3:,.0f}",
            f"{key}_tpot_slo_ms": f"{w.tpot_slo_s * 1e3:.0f}",
            f"{key}_gpus": p.gpus,
            f"{key}_prefill_ms": f"{p.prefill_s * 1e3:.0f}",
            f"{key}_prefill_share": f"{p.prefill_share:.0%}",
            f"{key}_fit": p.fit,
            f"{key}_batch": p.batch,
            f"{key}_step_ms": f"{p.step_s * 1e3:.1f}",
            f"{key}_tpot_ms": f"{p.tpot_s * 1e3:.1f}",
            f"{key}_ttft_ms": f"{p.ttft_s * 1e3:.0f}",
            f"{key}_queue_ms": f"{p.queue_s * 1e3:.0f}",
            f"{key}_fewer_gpus": fewer.gpus,
            f"{key}_fewer_prefill_share": f"{fewer.prefill_share:.0%}",
            f"{key}_fewer_decode_tok_s": f"{fewer.decode_tok_s:,.0f}",
            f"{key}_fewer_decode_ceiling_tok_s": f"{fewer.decode_ceiling_tok_s:,.0f}",
            f"{key}_fewer_free_share": f"{max(0.0, 1 - fewer.prefill_share):.0%}",
        }
        if fewer.batch is not None:  # None: no batch keeps up (the two figures above say why)
            out[f"{key}_fewer_batch"] = fewer.batch
    return out


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
