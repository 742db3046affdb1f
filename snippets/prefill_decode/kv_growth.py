"""Print how the KV cache grows: one big write in prefill, then one token per decode step.

W = this step writes the token's K and V; R = this step reads K and V already cached.
"""

PROMPT = ["The", "capital", "of", "France", "is"]
ANSWER = ["Paris", ".", "It", "is"]


def kv_timeline(prompt: list[str], answer: list[str]) -> list[str]:
    if not prompt:
        raise ValueError("the prompt needs at least one token")
    tokens = prompt + answer[:-1]  # the last answer token is emitted but not yet fed back
    widths = [max(len(t), 1) for t in tokens]
    label_width = len(f"decode {len(answer) - 1}")

    body_width = sum(widths) + 2 * (len(widths) - 1)

    def row(label: str, cells: list[str], arrow: str, emits: str) -> str:
        body = "  ".join(c.center(w) for c, w in zip(cells, widths, strict=False))
        return f"{label:<{label_width}}  {body:<{body_width}}  {arrow} {emits}".rstrip()

    lines = [row("", tokens, "  ", "emits")]
    lines.append(row("prefill", ["W"] * len(prompt), "->", answer[0]))
    for step in range(1, len(answer)):
        cached = len(prompt) + step - 1
        lines.append(row(f"decode {step}", ["R"] * cached + ["W"], "->", answer[step]))
    return lines


def main() -> None:
    for line in kv_timeline(PROMPT, ANSWER):
        print(line)
    kv_tokens = len(PROMPT) + len(ANSWER) - 1
    print(
        f"\nKV cache: {len(PROMPT)} tokens after prefill, {kv_tokens} after {len(ANSWER) - 1} steps"
    )


if __name__ == "__main__":
    main()
