"""The playground page's form, written into the page at build time.

The page (docs/performance/playground.ipynb) carries `<div data-run-form="playground.form">`;
the build's run-in-browser stage (scripts/coursesite/run_in_browser.py) imports the module the
marker names and puts `form_html()` in its place. The form's options come from web.py's
`choices()`; its button runs web.py's `report()` in the reader's browser
(docs/javascripts/run-in-browser.js, `playground()`). Standard library and the course only.

Run it: python snippets/playground/form.py [zh|en]  (prints the form's HTML)
"""

import html
import sys

from playground.web import DEFAULTS, choices

# Only the playground page carries the form, so its style travels with it (no site-wide CSS).
# On a phone the results table keeps a readable width (its seven columns would otherwise squeeze
# to a word per line) and scrolls sideways in its box; the chart has its own box (phone_box).
STYLE = """<style>
.md-typeset .run-playground { display: flex; flex-wrap: wrap; gap: .6em 1.2em; align-items: end; }
.md-typeset .run-playground label { display: flex; flex-direction: column; gap: .2em;
  max-width: 100%; }
.md-typeset .run-playground select, .md-typeset .run-playground input { max-width: 100%;
  padding: .3em; font: inherit; color: var(--md-default-fg-color);
  background: var(--md-default-bg-color); border: 1px solid var(--md-default-fg-color--light); }
.md-typeset .run-playground p { flex-basis: 100%; margin: 0; }
.md-typeset .run-playground-result { overflow-x: auto; }
.md-typeset .run-playground-result table { min-width: 36em; }
</style>"""
LABELS = {
    "zh": {
        "model": "模型",
        "fmt": "权重格式",
        "gpu": "GPU",
        "prompt_lengths": "prompt 长度 S（逗号分隔）",
        "new_tokens": "生成的 token 数 n",
        "batch": "批大小 B（一起解码的序列数）",
        "submit": "在浏览器中计算",
    },
    "en": {
        "model": "Model",
        "fmt": "Weight format",
        "gpu": "GPU",
        "prompt_lengths": "Prompt lengths S (comma-separated)",
        "new_tokens": "Tokens to generate n",
        "batch": "Batch size B (sequences decoding together)",
        "submit": "Compute in browser",
    },
}


def form_html(lang: str, runner_url: str) -> str:
    """The form in the page's language; `runner_url`: run-in-browser.js, relative to the page."""
    text = LABELS[lang]
    fields = []
    for name, options in choices(lang).items():
        items = "".join(
            f'<option value="{html.escape(value)}"'
            f"{' selected' if value == DEFAULTS[name] else ''}>{html.escape(label)}</option>"
            for value, label in options
        )
        fields.append(f'<label>{text[name]}<select name="{name}">{items}</select></label>')
    for name, kind in (("prompt_lengths", "text"), ("new_tokens", "number"), ("batch", "number")):
        extra = ' min="1" step="1"' if kind == "number" else ""
        fields.append(
            f'<label>{text[name]}<input name="{name}" type="{kind}"{extra}'
            f' value="{html.escape(str(DEFAULTS[name]))}" required></label>'
        )
    onsubmit = f"event.preventDefault();import('{runner_url}').then(m=>m.playground(this))"
    return STYLE + (
        f'<form class="run-playground" onsubmit="{onsubmit}">{"".join(fields)}'
        f'<p><button class="md-button md-button--primary" type="submit">{text["submit"]}'
        '</button> <span class="run-status" role="status"></span></p></form>'
        '<div class="run-playground-result"></div>'
    )


if __name__ == "__main__":
    print(form_html(sys.argv[1] if len(sys.argv) > 1 else "zh", "run-in-browser.js"))
