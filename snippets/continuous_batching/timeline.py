"""The slots-over-steps picture on the page, computed: which request holds which slot at each step.

A toy stream (five requests, two slots, decode steps only) under both policies. The page draws
chart(lang), an inline SVG through core.svgchart like the course's other charts (so its text stays
11 px or more on a phone), from the same timeline() the tests check, so the picture cannot drift
from the rule it illustrates. gantt(lang) is the same timeline as Mermaid text.

Run it: python snippets/continuous_batching/timeline.py [zh|en] > timeline.svg
"""

import sys

import core.svgchart as svg

TOY = {"A": 2, "B": 8, "C": 3, "D": 5, "E": 2}  # request -> decode steps, in arrival order
TOY_SLOTS = 2
IDLE = "-"

Segment = tuple[str, int, int]  # (request or IDLE, first step, step after the last)


def timeline(
    policy: str, outputs: dict[str, int] = TOY, slots: int = TOY_SLOTS
) -> list[list[Segment]]:
    """Per slot, its segments. Everyone is waiting at step 0 and served first come, first served."""
    if policy not in ("static", "continuous"):
        raise ValueError(f"policy must be static or continuous, got {policy!r}")
    queue = list(outputs)
    lanes: list[list[Segment]] = [[] for _ in range(slots)]
    free_at = [0] * slots
    while queue:
        if policy == "static":  # the next batch starts when the whole previous batch is done
            start = max(free_at)
            for lane, end in zip(lanes, free_at, strict=True):
                if end < start:
                    lane.append((IDLE, end, start))
            for slot in range(min(slots, len(queue))):
                name = queue.pop(0)
                lanes[slot].append((name, start, start + outputs[name]))
                free_at[slot] = start + outputs[name]
        else:  # a slot takes the next request the step it frees up
            slot = min(range(slots), key=lambda s: free_at[s])
            name = queue.pop(0)
            lanes[slot].append((name, free_at[slot], free_at[slot] + outputs[name]))
            free_at[slot] += outputs[name]
    end = max(free_at)
    for lane, last in zip(lanes, free_at, strict=True):
        if last < end:
            lane.append((IDLE, last, end))
    return lanes


def makespan(lanes: list[list[Segment]]) -> int:
    return max(seg[2] for lane in lanes for seg in lane)


def busy_share(lanes: list[list[Segment]]) -> float:
    busy = sum(e - s for lane in lanes for name, s, e in lane if name != IDLE)
    return busy / (len(lanes) * makespan(lanes))


TEXT = {
    "zh": {
        "title": "两个槽位、五个请求：每格是一个解码步",
        "desc": "横轴是解码步，每一行是一个槽位，每个条形是占着槽位的请求，虚线框是空闲。{rows}",
        "row": "{policy} · {slot} {i}：{bars}",
        "x_axis": "解码步",
        "static": "静态",
        "continuous": "连续",
        "slot": "槽位",
        "idle": "空闲",
    },
    "en": {
        "title": "Two slots, five requests: one unit is one decode step",
        "desc": "Decode steps run left to right; each row is a slot, each bar the request holding "
        "it, a dashed box an idle slot. {rows}",
        "row": "{policy} {slot} {i}: {bars}",
        "x_axis": "decode step",
        "static": "static",
        "continuous": "continuous",
        "slot": "slot",
        "idle": "idle",
    },
}


MARGIN = {"left": 150, "top": 40, "right": 24, "bottom": 48}
STEP_PX = 26  # one decode step
ROW_PX, BAR_PX, POLICY_GAP = 28, 20, 14


def chart(lang: str = "zh") -> str:
    """Both policies' slots as rows of bars over decode steps, the title above them."""
    text = TEXT[lang]
    steps = max(makespan(timeline(policy)) for policy in ("static", "continuous"))
    rows = [(policy, i, lane) for policy in ("static", "continuous") for i, lane in
            enumerate(timeline(policy), start=1)]  # fmt: skip
    bottom = MARGIN["top"] + len(rows) * ROW_PX + POLICY_GAP
    frame = svg.Frame.within(MARGIN, right=MARGIN["left"] + steps * STEP_PX, bottom=bottom)
    sx = svg.LinearAxis(0, steps, frame.left, frame.right)
    described = []
    for policy, i, lane in rows:
        bars = ", ".join(f"{text['idle'] if n == IDLE else n} {s}–{e}" for n, s, e in lane)
        described.append(text["row"].format(policy=text[policy], slot=text["slot"], i=i, bars=bars))
    out = svg.open_svg(
        frame,
        "timeline-chart",
        ("timeline-title", "timeline-desc"),
        text["title"],
        text["desc"].format(rows="; ".join(described)),
    )
    out.append(svg.text(8, 18, text["title"]).replace("<text ", '<text font-weight="bold" ', 1))
    out += svg.x_ticks(frame, sx.ticks(5))
    out.append(
        svg.text((frame.left + frame.right) / 2, frame.height - 10, text["x_axis"], "middle")
    )
    for row, (policy, i, lane) in enumerate(rows):
        top = frame.top + row * ROW_PX + (POLICY_GAP if policy == "continuous" else 0) + 4
        label = f"{text[policy]} · {text['slot']} {i}"
        out.append(svg.text(frame.left - svg.TICK_INSET, top + BAR_PX / 2 + 4, label, "end"))
        for name, start, end in lane:
            x, width = sx(start), sx(end) - sx(start)
            if name == IDLE:
                style = f'fill="none" stroke="{svg.FOREGROUND}" stroke-dasharray="4 3"'
            else:
                style = f'style="fill: {svg.LINK}" fill-opacity="0.25" stroke="{svg.LINK}"'
            out.append(
                f'<rect x="{x + 1:.1f}" y="{top}" width="{width - 2:.1f}" height="{BAR_PX}" '
                f"{style}/>"
            )
            label = text["idle"] if name == IDLE else name
            out.append(svg.text(x + width / 2, top + BAR_PX / 2 + 4, label, "middle"))
    return svg.close_svg(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
