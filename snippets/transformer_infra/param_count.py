"""Count Qwen2.5-7B-Instruct's parameters exactly, matrix by matrix, from its config.json.

Run it: python snippets/transformer_infra/param_count.py
"""

from core.models import ModelSpec, layer_parameters, load_model, non_embedding_params, params

MODEL = "qwen2.5-7b-instruct"


def parameter_rows(spec: ModelSpec) -> list[tuple[str, int | None, int]]:
    """(component, parameters per layer or None, total parameters) for the whole model."""
    embedding = spec.vocab_size * spec.hidden_size
    rows: list[tuple[str, int | None, int]] = [("embed_tokens", None, embedding)]
    rows += [(name, n, n * spec.num_layers) for name, n in layer_parameters(spec)]
    rows.append(("norm (final)", None, spec.hidden_size))
    rows.append(("lm_head", None, 0 if spec.tie_word_embeddings else embedding))
    return rows


def share(part: int, total: int) -> str:
    return "<0.01%" if 0 < part / total < 1e-4 else f"{part / total:.2%}"


def main() -> None:
    spec = load_model(MODEL)
    rows = parameter_rows(spec)
    total = sum(n for _, _, n in rows)
    if total != params(spec):
        raise ValueError(f"the table adds up to {total:,}, the core counts {params(spec):,}")
    per_layer = sum(n for _, n, _ in rows if n is not None)
    non_embedding = non_embedding_params(spec)
    print(f"{spec.name}, {spec.num_layers} layers\n")
    print(f"{'component':<26}{'per layer':>14}{'total':>17}{'share':>9}")
    for name, n, n_total in rows:
        each = f"{n:,}" if n is not None else "-"
        print(f"{name:<26}{each:>14}{n_total:>17,}{share(n_total, total):>9}")
    print(f"{'decoder layers':<26}{per_layer:>14,}{per_layer * spec.num_layers:>17,}")
    print(f"{'total':<26}{'':>14}{total:>17,}{share(total, total):>9}")
    print(f"{'non-embedding':<26}{'':>14}{non_embedding:>17,}{share(non_embedding, total):>9}")


if __name__ == "__main__":
    main()
