"""Figures the speculative-decoding lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ speculative_decoding.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/speculative_decoding/values.py` to list every name and its value.
"""

from batched_decode.batch_bound import CONTEXT, configurations, max_batch
from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.models import load_model
from core.reference import BF16_MODEL
from core.roofline import tpot_bound
from core.speculative import (
    alpha_from_mean_length,
    batched_speedup,
    best_draft_tokens,
    break_even_batch,
    expected_tokens,
    speedup,
    verify_critical_batch,
    verify_step_bound,
)
from speculative_decoding import lab_results as lab
from speculative_decoding import simulate as sim
from speculative_decoding.estimator import ALPHA, DRAFT_MODEL, DRAFT_TOKENS, draft_cost

QUIZ_ALPHA, QUIZ_GAMMA = 0.7, 3  # the numeric self-test
QUIZ_MEAN_LENGTH = 2.8  # a mean acceptance length read from vLLM's log, gamma = QUIZ_GAMMA
TRANSFER_GPU = "h200_sxm"
LARGE_BATCH = 256  # a batch well past where speculation pays on the RTX 4090


def _b(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def values() -> dict[str, str]:
    (rtx, bf16, f_bf16), (_, awq, f_awq), (h100, _, _), _ = configurations()
    g, a = DRAFT_TOKENS, ALPHA
    e = expected_tokens(a, g)
    verify1 = verify_step_bound(rtx, bf16, batch=1, context=CONTEXT, draft_tokens=g, fmt=f_bf16)
    plain1 = tpot_bound(rtx, bf16, CONTEXT, f_bf16, 1)
    c = draft_cost(rtx, bf16, f_bf16)
    best = best_draft_tokens(a, c)

    def even(gpu, model, fmt) -> str:
        return _b(break_even_batch(gpu, model, context=CONTEXT, alpha=a, draft_tokens=g, fmt=fmt))

    def at(gpu, model, fmt, batch) -> str:
        s = batched_speedup(
            gpu, model, batch=batch, context=CONTEXT, alpha=a, draft_tokens=g, fmt=fmt
        )
        return f"{s:.2f}"

    tokens, counters = sim.simulate()
    estimates = sim.alpha_estimates(counters)
    mean_alpha = sim.EASY_SHARE * sim.EASY_ALPHA + (1 - sim.EASY_SHARE) * sim.HARD_ALPHA
    tgpu = load_gpus()[TRANSFER_GPU]
    tb = load_model(BF16_MODEL)
    return {
        "alpha": f"{a}",
        "gamma": f"{g}",
        "gamma_plus_one": f"{g + 1}",
        "expected": f"{e:.2f}",
        "verify_ms": f"{verify1.seconds * 1e3:.2f}",
        "verify_extra": f"{(verify1.seconds / plain1.seconds - 1) * 100:.2g}%",  # a few 1e-5
        "compute_floor_ratio": f"{e / (g + 1):.2f}",
        "draft_model": load_model(DRAFT_MODEL).name,
        "draft_vocab": f"{load_model(DRAFT_MODEL).vocab_size:,}",
        "target_vocab": f"{bf16.vocab_size:,}",
        "draft_cost": f"{c:.3f}",
        "speedup_ngram": f"{speedup(a, g, 0):.2f}",
        "speedup_draft": f"{speedup(a, g, c):.2f}",
        "best_gamma_draft": f"{best}",
        "best_speedup_draft": f"{speedup(a, best, c):.2f}",
        "break_rtx_bf16": even(rtx, bf16, f_bf16),
        "break_rtx_awq": even(rtx, awq, f_awq),
        "break_h100_bf16": even(h100, bf16, f_bf16),
        "verify_bstar_rtx_bf16": _b(
            verify_critical_batch(rtx, bf16, context=CONTEXT, draft_tokens=g, fmt=f_bf16)
        ),
        "verify_bstar_h100_bf16": _b(
            verify_critical_batch(h100, bf16, context=CONTEXT, draft_tokens=g, fmt=f_bf16)
        ),
        "speedup_rtx_bf16_at_fits": at(rtx, bf16, f_bf16, max_batch(rtx, bf16, f_bf16, CONTEXT)),
        "speedup_rtx_awq_at_fits": at(rtx, awq, f_awq, max_batch(rtx, awq, f_awq, CONTEXT)),
        "large_batch": f"{LARGE_BATCH}",
        "speedup_rtx_bf16_large": at(rtx, bf16, f_bf16, LARGE_BATCH),
        "speedup_h100_bf16_large": at(h100, bf16, f_bf16, LARGE_BATCH),
        # the simulator
        "sim_steps": f"{sim.STEPS:,}",
        "sim_easy_share": f"{sim.EASY_SHARE:.0%}",
        "sim_easy_alpha": f"{sim.EASY_ALPHA}",
        "sim_hard_alpha": f"{sim.HARD_ALPHA}",
        "sim_mean_alpha": f"{mean_alpha:.3f}",
        "sim_mean_tokens": f"{tokens.mean():.2f}",
        "sim_e_at_mean_alpha": f"{expected_tokens(mean_alpha, sim.DRAFT_TOKENS):.2f}",
        "sim_one_token_share": f"{(tokens == 1).mean():.0%}",
        "sim_all_accepted_share": f"{(tokens == sim.DRAFT_TOKENS + 1).mean():.0%}",
        "sim_alpha_first": f"{estimates['first position']:.3f}",
        "sim_alpha_conditional": f"{estimates['conditional']:.3f}",
        "sim_alpha_from_length": f"{estimates['from mean length']:.3f}",
        # the lab (labs/speculative_decoding/ngram_lookup.py) and what it is checked against
        "ngram_lab_gamma": f"{lab.LAB_GAMMA}",
        "ngram_lab_lookup_min": f"{lab.LAB_LOOKUP_MIN}",
        "ngram_lab_lookup_max": f"{lab.LAB_LOOKUP_MAX}",
        "ngram_lab_passage": f"{lab.LAB_PASSAGE_TOKENS}",
        "ngram_lab_copies": f"{lab.LAB_COPIES}",
        "ngram_lab_prompt": f"{lab.lab_prompt_tokens():,}",
        "ngram_lab_new": f"{lab.LAB_NEW_TOKENS}",
        "ngram_lab_batch_small": f"{min(lab.LAB_BATCHES)}",
        "ngram_lab_batch_large": f"{max(lab.LAB_BATCHES)}",
        "ngram_lab_speedup_slack": f"{lab.SPEEDUP_SLACK:g}",
        # self-test
        "quiz_alpha": f"{QUIZ_ALPHA}",
        "quiz_gamma": f"{QUIZ_GAMMA}",
        "quiz_expected": f"{expected_tokens(QUIZ_ALPHA, QUIZ_GAMMA):.2f}",
        "quiz_mean_length": f"{QUIZ_MEAN_LENGTH}",
        "quiz_alpha_from_length": f"{alpha_from_mean_length(QUIZ_MEAN_LENGTH, QUIZ_GAMMA):.2f}",
        "transfer_gpu": tgpu.name,
        "transfer_break_bf16": _b(
            break_even_batch(
                tgpu, tb, context=CONTEXT, alpha=a, draft_tokens=g, fmt=checkpoint_format(tb)
            )
        ),
        "transfer_ridge": f"{tgpu.ridge_point:.0f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
