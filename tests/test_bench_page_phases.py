"""scripts/bench_page_phases.py: self time per trace event, children subtracted, cut at the load."""

from bench_page_phases import self_times


def event(name: str, ts: float, dur: float, tid: int = 1) -> dict:
    return {"name": name, "ph": "X", "ts": ts, "dur": dur, "tid": tid}


def test_self_time_subtracts_children_and_stops_at_the_load_event():
    events = [
        event("ParseHTML", 1000, 10_000),  # 10 ms, of which 4 in style and 1 in script
        event("Document::recalcStyle", 2000, 4000),
        event("v8.run", 7000, 1000),
        event("Layout", 12_000, 3000),  # after the parse: its own
        event("Layout", 40_000, 5000),  # after the load event (30 ms after the first parse)
        event("ParseHTML", 1000, 50_000, tid=2),  # another thread
        {"name": "Mark", "ph": "I", "ts": 1500, "tid": 1},  # not a complete event
    ]
    found = self_times(events, until_us=30_000)
    assert found == {"ParseHTML": 5.0, "Document::recalcStyle": 4.0, "v8.run": 1.0, "Layout": 3.0}


def test_no_parse_no_times():
    assert self_times([event("Layout", 0, 1000)], until_us=10_000) == {}
