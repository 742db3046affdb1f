"""The course's charts as inline SVG from plain strings: frame, axes, grid, legend and colours.

Every chart of the course draws its frame with this module and only its own marks itself, so all
charts share one look. Colours are the page's text colour (currentColor) and Material's CSS
variables, each with a fallback for a page without them: a chart follows light and dark mode.
<title> and <desc> describe a chart to screen readers. Standard library only (it runs in the
reader's browser too).
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

# Colours: the page's own, so dark mode needs nothing more.
FOREGROUND = "currentColor"  # the text colour
LINK = "var(--md-typeset-a-color, #3f51b5)"  # the link colour: lighter in dark mode
ACCENT = "var(--md-accent-fg-color, #526cfe)"  # filled markers
BACKGROUND = "var(--md-default-bg-color, #fff)"  # hollow markers
TEXT = "var(--md-default-fg-color, #222)"  # the chart's own text colour
FILL = f'fill="{FOREGROUND}"'
GRID = f'stroke="{FOREGROUND}" stroke-opacity="0.15"'

# On a phone a chart keeps its text at MIN_TEXT_PX or more: it is wrapped in a .chart-scroll box
# (docs/stylesheets/extra.css) with the min-width at which its text is drawn that large; the box
# scrolls sideways on a narrower screen. The build wraps the page's charts (coursesite.charts);
# a chart made in the reader's browser (the playground) is wrapped by phone_box().
MIN_TEXT_PX = 11
PHONE_BOX = '<span class="chart-scroll" style="--chart-min-width: {}px">'
FONT_PX = 12  # open_svg's font size, in viewBox units

TICK_GAP = 16  # x tick labels: baseline below the axis
TICK_INSET = 6  # y tick labels: right edge left of the axis


def px(value: float) -> str:
    """A coordinate: whole numbers of the layout as they are, computed positions to 0.1 px."""
    return f"{value:.1f}" if isinstance(value, float) else f"{value}"


def decades(low: float, high: float) -> tuple[int, int]:
    """The powers of ten just below `low` and just above `high`: a log axis spans whole decades."""
    return math.floor(math.log10(low)), math.ceil(math.log10(high))


def tick(value: float) -> str:
    """A tick label: 0.01, 0.1, 1, 10, 1,000."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


@dataclass(frozen=True)
class LogAxis:
    """Powers of ten `first` .. `last` onto pixels: `start` is 10**first, each decade `step` px
    further (negative: upwards, for a y axis)."""

    first: int
    last: int
    start: float
    step: float

    def __call__(self, value: float) -> float:
        return self.start + (math.log10(value) - self.first) * self.step

    @property
    def end(self) -> float:
        return self(10.0**self.last)

    def ticks(self) -> list[tuple[float, str]]:
        """(pixel, label) at every power of ten."""
        return [(self(10.0**e), tick(10.0**e)) for e in range(self.first, self.last + 1)]


@dataclass(frozen=True)
class LinearAxis:
    """Values `low` .. `high` onto pixels `start` .. `end`."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        return self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start)

    def ticks(self, every: int) -> list[tuple[float, str]]:
        """(pixel, label) at every `every`-th whole number."""
        return [(self(v), f"{v}") for v in range(int(self.low), int(self.high) + 1, every)]


@dataclass(frozen=True)
class Frame:
    """The plot area (left, top) .. (right, bottom) inside a width x height chart; the margins
    around it hold the ticks, the axis titles and any legend."""

    width: float
    height: float
    left: float
    top: float
    right: float
    bottom: float

    @classmethod
    def within(cls, margin: dict[str, float], right: float, bottom: float) -> "Frame":
        """The frame whose plot area ends at (right, bottom), `margin` (left, top, right, bottom)
        around it."""
        width, height = right + margin["right"], bottom + margin["bottom"]
        return cls(width, height, margin["left"], margin["top"], right, bottom)


def text(x: float, y: float, content: str, anchor: str = "", rotate: float = 0) -> str:
    """A label in the page's text colour; `rotate` turns it about its anchor point."""
    where = f'transform="translate({px(x)} {px(y)}) rotate({rotate:g})"' if rotate else ""
    where = where or f'x="{px(x)}" y="{px(y)}"'
    align = f' text-anchor="{anchor}"' if anchor else ""
    return f"<text {where}{align} {FILL}>{escape(content)}</text>"


def line(x1: float, y1: float, x2: float, y2: float, attributes: str) -> str:
    return f'<line x1="{px(x1)}" y1="{px(y1)}" x2="{px(x2)}" y2="{px(y2)}" {attributes}/>'


def vertical_rule(x: float, top: float, bottom: float, dash: str) -> str:
    """A dashed vertical line in the text colour: a threshold (ridge point, capacity)."""
    return line(x, top, x, bottom, f'stroke="{FOREGROUND}" stroke-dasharray="{dash}"')


def dash_attribute(dash: str) -> str:
    return f' stroke-dasharray="{dash}"' if dash else ""


def polyline(points: Iterable[tuple[float, float]], colour: str, width: int = 2, dash="") -> str:
    """A data line through pixel points, in `colour`, dashed as `dash` ("" for solid)."""
    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return (
        f'<polyline points="{coords}" fill="none" stroke-width="{width}"{dash_attribute(dash)} '
        f'style="stroke: {colour}"/>'
    )


def open_svg(
    frame: Frame, css_class: str, ids: tuple[str, str], title: str, desc: str
) -> list[str]:
    """The <svg> element with its accessible title and description (ids: title's, desc's)."""
    title_id, desc_id = ids
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {frame.width:.0f} {frame.height:.0f}" width="{frame.width:.0f}" '
        f'role="img" aria-labelledby="{title_id} {desc_id}" class="{css_class}" '
        f'style="max-width: 100%; height: auto; color: {TEXT}; font-size: 12px">',
        f'<title id="{title_id}">{escape(title)}</title>',
        f'<desc id="{desc_id}">{escape(desc)}</desc>',
    ]


def close_svg(parts: list[str]) -> str:
    return "\n".join([*parts, "</svg>"])


def min_width(viewbox_width: float, font_px: float = FONT_PX) -> int:
    """The drawn width at which text of `font_px` (in viewBox units) is MIN_TEXT_PX."""
    return math.ceil(viewbox_width * MIN_TEXT_PX / font_px)


def phone_box(svg: str) -> str:
    """A chart from open_svg() in its .chart-scroll box, as the build wraps a page's charts."""
    start = svg.index('viewBox="0 0 ') + len('viewBox="0 0 ')
    width = float(svg[start:].split()[0])
    return f"{PHONE_BOX.format(min_width(width))}{svg}</span>"


def x_ticks(frame: Frame, ticks: list[tuple[float, str]], grid: bool = True) -> list[str]:
    """Tick labels under the plot area, each with a vertical grid line unless grid=False."""
    out = []
    for x, label in ticks:
        if grid:
            out.append(line(x, frame.top, x, frame.bottom, GRID))
        out.append(text(x, frame.bottom + TICK_GAP, label, "middle"))
    return out


def y_ticks(frame: Frame, ticks: list[tuple[float, str]], grid: bool = True) -> list[str]:
    """Tick labels left of the plot area, each with a horizontal grid line unless grid=False."""
    out = []
    for y, label in ticks:
        if grid:
            out.append(line(frame.left, y, frame.right, y, GRID))
        out.append(text(frame.left - TICK_INSET, y + 4, label, "end"))
    return out


def axes(frame: Frame, x_title: str, y_title: str) -> list[str]:
    """The left and bottom axes and their titles, a quarter of the margin in from the edge."""
    f = frame
    return [
        f'<path d="M{px(f.left)} {px(f.top)} V{px(f.bottom)} H{px(f.right)}" '
        f'fill="none" stroke="{FOREGROUND}"/>',
        text((f.left + f.right) / 2, f.height - (f.height - f.bottom) // 4, x_title, "middle"),
        text(f.left // 4, (f.top + f.bottom) / 2, y_title, "middle", rotate=-90),
    ]


def legend(x: float, y: float, entries: Iterable[tuple[str, str, str]]) -> list[str]:
    """A line sample and a name per (name, colour, dash) entry, one row every 20 px from (x, y)."""
    out = []
    for i, (name, colour, dash) in enumerate(entries):
        row = y + 20 * i
        out.append(
            line(
                x,
                row,
                x + 28,
                row,
                f'stroke-width="2"{dash_attribute(dash)} style="stroke: {colour}"',
            )
        )
        out.append(text(x + 34, row + 4, name))
    return out


def notes(frame: Frame, lines: Iterable[str]) -> list[str]:
    """Lines of explanation in the plot area's top-left corner, where the data leaves room."""
    return [text(frame.left + 8, frame.top + 14 + 16 * i, note) for i, note in enumerate(lines)]
