"""Published accuracy evaluations of quantized Qwen checkpoints: quoted, never computed.

Each entry is a measurement someone else published, with the page, the date this course read it,
the model it was run on (not always the lesson's own checkpoint: the page says so) and what was
measured. A figure here is typed once and referenced from the lesson through values.py.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Evaluation:
    publisher: str
    url: str
    read_on: str  # the date this course read the page
    released_on: str | None  # the date the page gives for the evaluated model, if it gives one
    model: str
    measured: str
    scores: dict[str, tuple[float, ...]]  # format -> one score per benchmark in `benchmarks`
    benchmarks: tuple[str, ...]


QWEN2_7B = Evaluation(
    publisher="Qwen documentation, Performance of Quantized Models",
    url="https://qwen.readthedocs.io/en/latest/getting_started/quantization_benchmark.html",
    read_on="2026-12-03",
    released_on=None,  # the page is not dated
    model="Qwen2-7B-Instruct",  # the page has not been updated for Qwen2.5
    measured="accuracy, greedy decoding; IFEval as strict prompt-level accuracy",
    benchmarks=("MMLU", "C-Eval", "IFEval"),
    scores={
        "BF16": (70.5, 77.2, 53.1),
        "GPTQ-Int8": (69.1, 76.7, 52.9),
        "GPTQ-Int4": (67.8, 75.2, 49.4),
        "AWQ": (67.4, 73.6, 51.4),
    },
)

QWEN25_7B_FP8 = Evaluation(
    publisher="Neural Magic, model card of neuralmagic/Qwen2.5-7B-FP8-dynamic",
    url="https://huggingface.co/neuralmagic/Qwen2.5-7B-FP8-dynamic",
    read_on="2026-12-03",
    released_on="2024-11-27",  # the card's "Release Date: 11/27/2024"
    model="Qwen2.5-7B (the base model, not Instruct)",
    # the card: weights FP8 with a static scale per output channel, activations FP8 with a
    # dynamic scale per token; vLLM's quantization="fp8" scales each weight matrix once
    measured="average score on the OpenLLM benchmark, version 1",
    benchmarks=("OpenLLM v1 average",),
    scores={"BF16": (70.92,), "FP8 dynamic": (71.00,)},
)


def main() -> None:
    for ev in (QWEN2_7B, QWEN25_7B_FP8):
        released = f", model released {ev.released_on}" if ev.released_on else ""
        print(f"{ev.publisher} ({ev.url}, read {ev.read_on}{released})")
        print(f"model: {ev.model}; measured: {ev.measured}")
        print(f"{'format':<12}" + "".join(f"{b:>20}" for b in ev.benchmarks))
        for fmt, scores in ev.scores.items():
            print(f"{fmt:<12}" + "".join(f"{s:>20.2f}" for s in scores))
        print()


if __name__ == "__main__":
    main()
