"""How the course prints a quantity, and picks a text in the page's language, for every lesson.

Lessons print times with these so that a figure reads the same on every page (a bound of
12.3 ms is never 12.34 on one page and 12 on the next).
"""


def ms(seconds: float) -> str:
    """Milliseconds with three significant figures."""
    value = seconds * 1e3
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def ms_tenths(seconds: float | None) -> str:
    """Milliseconds to a tenth, with thousands separators (tables of measured runs); — for none."""
    return "—" if seconds is None else f"{seconds * 1e3:,.1f}"


def in_language(table: dict[str, dict], lang: str) -> dict:
    """A lesson's texts in the page's language: table["zh"] or table["en"]."""
    if lang not in table:
        raise ValueError(f"lang must be one of {sorted(table)}, got {lang!r}")
    return table[lang]
