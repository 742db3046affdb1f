"""Exact parameter counts from each model's config, next to the figures its model card prints.

Run it: python snippets/transformer_infra/model_cards.py
"""

import re
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

from core.models import ModelSpec, load_models, non_embedding_params, params

CARD_FIGURE = re.compile(r"\d+(\.\d+)?B")  # "7.61B", "72.7B", "8B"


def in_billions(count: int, like: str, rounding: str = ROUND_HALF_UP) -> str:
    """`count` in billions with as many decimals as the card figure `like` (e.g. "7.61B")."""
    if not CARD_FIGURE.fullmatch(like):
        raise ValueError(f"a card figure looks like '7.61B', got {like!r}")
    step = Decimal(like[:-1]).as_tuple().exponent  # -2 for "7.61"
    return f"{(Decimal(count) / 10**9).quantize(Decimal(1).scaleb(step), rounding=rounding)}B"


def card_reading(count: int, card: str) -> str:
    """How the card's figure relates to the exact count: rounded, truncated or neither."""
    if in_billions(count, card) == card:
        return "rounded"
    if in_billions(count, card, ROUND_DOWN) == card:
        return "truncated"
    return "differs"


def counts(spec: ModelSpec) -> dict[str, int]:
    return {"params": params(spec), "non_embedding_params": non_embedding_params(spec)}


def main() -> None:
    models = [m for m in load_models().values() if m.quantization is None and m.model_card]
    print(f"{'model':<24}{'count':<14}{'exact':>16}{'rounded':>10}{'card':>9}  card is")
    models.sort(key=params)
    for spec in models:
        for field, exact in counts(spec).items():
            card = spec.model_card.get(field)
            rounded = in_billions(exact, card or "0.00B")
            reading = card_reading(exact, card) if card else "-"
            label = "total" if field == "params" else "non-embedding"
            print(f"{spec.name:<24}{label:<14}{exact:>16,}{rounded:>10}{card or '-':>9}  {reading}")


if __name__ == "__main__":
    main()
