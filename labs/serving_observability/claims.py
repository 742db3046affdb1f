"""The serving_observability lab's claims, checked by scripts/verify_labs.py; its CPU smoke run.

None of them depends on speed, so a CPU run is checked in full: the counts the server reports
on /metrics equal the benchmark's, and the server's mean TTFT does not exceed the client's."""

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun
from serving_observability.metrics import reconcile, row_holds, samples_from


def stored_problems(doc: dict) -> list[str]:
    """Where the stored rows differ from a reconciliation of the stored scrapes."""
    before = samples_from(doc["scrapes"]["before"])
    after = samples_from(doc["scrapes"]["after"])
    want = {r["quantity"]: r for r in reconcile(before, after, doc["benchmark"])}
    got = {r["quantity"]: r for r in doc["measurements"]}
    problems = [] if sorted(got) == sorted(want) else [f"rows {sorted(got)}, want {sorted(want)}"]
    for quantity in sorted(set(got) & set(want)):
        for side in ("server", "client"):
            a, b = got[quantity][side], want[quantity][side]
            if abs(a - b) > 1e-9 * max(1.0, abs(b)):
                problems.append(f"{quantity}: stored {side} {a:.6g}, the scrapes give {b:.6g}")
    return problems


def completeness(doc: dict) -> Check:
    """Every request served with its exact tokens; the rows recomputed from the raw scrapes."""
    p, b = doc["parameters"], doc["benchmark"]
    problems = []
    if b["completed"] != p["requests"] or b["failed"]:
        problems.append(f"{b['completed']} of {p['requests']} requests done, {b['failed']} failed")
    asked = p["requests"] * p["output_len"]
    if b["total_output_tokens"] != asked:
        problems.append(f"{b['total_output_tokens']} tokens generated, asked {asked}")
    problems += stored_problems(doc)
    return lab.verdict(
        "completeness",
        problems,
        f"{p['requests']} requests of {p['output_len']} tokens; rows equal the scrapes' deltas",
        shown=5,
    )


def agreement(doc: dict) -> list[Check]:
    """The server's counters and histograms agree with the benchmark; the server went idle."""
    bad = [
        f"{r['quantity']}: server {r['server']:.6g}, benchmark {r['client']:.6g} ({r['relation']})"
        for r in doc["measurements"]
        if not row_holds(r)
    ]
    idle = doc["server"]["idle_after"]
    busy = [f"{k} {v:g}" for k, v in idle.items() if v != 0]
    return [
        lab.verdict(
            "server agrees with benchmark",
            bad,
            f"{len(doc['measurements'])} quantities: counts equal, server mean TTFT <= client's",
        ),
        lab.verdict("server idle after the run", busy, "0 requests running, 0 waiting"),
    ]


CLAIMS = {
    "serve_metrics": Claims(lambda doc: [completeness(doc), *agreement(doc)]),
}


# ---------------------------------------------------------------- CPU smoke run

REQUESTS, OUTPUT = 12, 8


def the_server_was_loopback_and_stopped(run: SmokeRun) -> None:
    assert run.doc["server"]["host"] == "127.0.0.1"
    assert "server stopped (exit code" in run.stdout


def the_table_is_printed(run: SmokeRun) -> None:
    assert "generation_tokens" in run.stdout and "MISMATCH" not in run.stdout


SMOKE = (
    Smoke(
        "serve_metrics.py",
        f"--config tiny --enforce-eager --requests {REQUESTS} --request-rate 8 "
        f"--input-len 32 --output-len {OUTPUT}",
        (the_server_was_loopback_and_stopped, the_table_is_printed),
        ("completeness", "server agrees with benchmark", "server idle after the run"),
    ),
)
