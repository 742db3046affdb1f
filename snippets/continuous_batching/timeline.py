"""The slots-over-steps picture on the page, computed: which request holds which slot at each step.

A toy stream (five requests, two slots, decode steps only) under both policies. The page's Mermaid
gantt chart is exactly gantt(lang), checked by tests/test_continuous_batching.py, so the picture
cannot drift from the rule it illustrates (dateFormat X: one decode step is drawn as one second).

Run it: python snippets/continuous_batching/timeline.py [zh|en]
"""

import sys

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
        "static": "静态",
        "continuous": "连续",
        "slot": "槽位",
        "idle": "空闲",
    },
    "en": {
        "title": "Two slots, five requests: one unit is one decode step",
        "static": "static",
        "continuous": "continuous",
        "slot": "slot",
        "idle": "idle",
    },
}


def gantt(lang: str = "zh") -> list[str]:
    """The Mermaid gantt lines (without the fence) for both policies."""
    text = TEXT[lang]
    lines = ["gantt", f"    title {text['title']}", "    dateFormat X", "    axisFormat %s"]
    for policy in ("static", "continuous"):
        for i, lane in enumerate(timeline(policy), start=1):
            lines.append(f"    section {text[policy]} · {text['slot']} {i}")
            for name, start, end in lane:  # contiguous from step 0: each bar follows the last
                label = text["idle"] if name == IDLE else name
                tag = "crit, " if name == IDLE else ""
                first = "0, " if start == 0 else ""  # Mermaid: "Ns" is a duration of N units
                lines.append(f"    {label} : {tag}{first}{end - start}s")
    return lines


def main(lang: str = "zh") -> None:
    print("\n".join(["```mermaid", *gantt(lang), "```"]))


if __name__ == "__main__":
    main(*sys.argv[1:2])
