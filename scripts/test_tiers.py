"""`make test` and `make check`: the test run in tiers, timed, ending with a table of the times.

    python3 scripts/test_tiers.py setup build lint tests browser labs   # make test
    python3 scripts/test_tiers.py setup build lint tests                # make check

Tiers, in this order whatever the order given:
  setup    the environments (`make setup`, plus the labs' .venv-labs when the labs tier runs)
  build    the strict build into site/, once; its output is kept in .cache/strict-build.txt
  lint     ruff check and ruff format --check
  tests    every test outside tests/browser/ and the lab smoke files, on every core
           (pytest-xdist); they read the build above (tests/conftest.py, built_site)
  browser  tests/browser/: one Chromium and one server for the whole tier
  labs     the lab smoke files, tests/test_labs_smoke*.py (vLLM on CPU; minutes)

The browser and labs tiers run side by side when both are asked for: each is mostly one busy
thread at a time (Chromium's renderer; vLLM's imports and engine start-up on a CPU), so on two
cores they overlap instead of queueing. Each one's output is printed whole when it ends, and the
table's total is the wall-clock time of the run, not the sum of the tiers.

Every tier runs even when an earlier one failed, except after a failed setup or build (the rest
need them); the exit status is 1 when any tier failed. Standard library only: it runs with the
Python that creates .venv.
"""

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
SITE = ROOT / "site"
BUILD_OUTPUT = ROOT / ".cache" / "strict-build.txt"
BROWSER_TESTS = "tests/browser"
LABS_SMOKE_FILES = "tests/test_labs_smoke*.py"  # one file per lab today, or one parametrized file
TIERS = ("setup", "build", "lint", "tests", "browser", "labs")
NEEDED_BY_THE_REST = {"setup", "build"}
SIDE_BY_SIDE = ("browser", "labs")  # run at the same time when both are asked for


@dataclass(frozen=True)
class TierResult:
    name: str
    seconds: float
    passed: bool


def workers() -> str:
    """pytest-xdist workers for the tests tier: TEST_WORKERS, else one per core we may use."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return os.environ.get("TEST_WORKERS") or str(cores or 1)


def labs_smoke_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(LABS_SMOKE_FILES))


def commands(tier: str, tiers: list[str]) -> list[list[str]]:
    """The commands of one tier, run one after another in the repository root."""
    make = os.environ.get("MAKE", "make")
    pytest = [str(BIN / "pytest")]
    if tier == "setup":
        return [[make, "--no-print-directory", "setup-labs" if "labs" in tiers else "setup"]]
    if tier == "build":
        return [[str(BIN / "mkdocs"), "build", "--strict", "--clean", "--site-dir", str(SITE)]]
    if tier == "lint":
        return [[str(BIN / "ruff"), "check", "."], [str(BIN / "ruff"), "format", "--check", "."]]
    if tier == "tests":
        # loadgroup keeps each file on one worker (as loadfile does) and the files marked
        # one_worker together on one (tests/conftest.py)
        ignored = [f"--ignore={path}" for path in [BROWSER_TESTS, *labs_smoke_files()]]
        return [[*pytest, "-n", workers(), "--dist", "loadgroup", *ignored]]
    if tier == "browser":
        return [[*pytest, BROWSER_TESTS]]
    if tier == "labs":
        files = labs_smoke_files()
        return [[*pytest, *files]] if files else []
    raise ValueError(f"unknown tier {tier!r}; tiers: {', '.join(TIERS)}")


def run_build(command: list[str]) -> int:
    """The strict build, its output shown as it comes and kept for the tests (built_site)."""
    BUILD_OUTPUT.parent.mkdir(exist_ok=True)
    with BUILD_OUTPUT.open("w", encoding="utf-8") as kept:
        proc = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            kept.write(line)
        return proc.wait()


def run_tier(tier: str, tiers: list[str]) -> TierResult:
    print(f"\n===== tier: {tier} =====", flush=True)
    start = time.monotonic()
    passed = True
    for command in commands(tier, tiers):
        print("$ " + " ".join(command), flush=True)
        code = run_build(command) if tier == "build" else subprocess.call(command, cwd=ROOT)
        passed = passed and code == 0
        if tier in NEEDED_BY_THE_REST and not passed:
            break
    return TierResult(tier, time.monotonic() - start, passed)


def run_side_by_side(names: list[str], tiers: list[str]) -> list[TierResult]:
    """Tiers that each run one command, started together; each one's output is kept in
    .cache/tier-<name>.txt and printed whole when it ends, so the two never interleave."""
    start = time.monotonic()
    running = {}
    for name in names:
        [command] = commands(name, tiers)
        log = ROOT / ".cache" / f"tier-{name}.txt"
        log.parent.mkdir(exist_ok=True)
        with log.open("w", encoding="utf-8") as out:
            print(f"$ {' '.join(command)}  (side by side with the other tier)", flush=True)
            proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        running[name] = (proc, log)
    results = {}
    while running:
        for name, (proc, log) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[name]
            results[name] = TierResult(name, time.monotonic() - start, proc.returncode == 0)
            print(f"\n===== tier: {name} =====", flush=True)
            sys.stdout.write(log.read_text(encoding="utf-8", errors="replace"))
            sys.stdout.flush()
        time.sleep(1)
    return [results[name] for name in names]


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def table(results: list[TierResult], skipped: list[str], wall: float | None = None) -> str:
    """A row per tier and the total: `wall` (the run's own clock) when tiers overlapped, else
    the sum of the tiers."""
    rows = [(r.name, minutes(r.seconds), "passed" if r.passed else "FAILED") for r in results]
    rows += [(name, "-", "not run") for name in skipped]
    total = wall if wall is not None else sum(r.seconds for r in results)
    rows.append(("total", minutes(total), "wall clock" if wall is not None else ""))
    width = max(len(name) for name, _, _ in rows)
    lines = [f"{'tier':<{width}}  {'m:ss':>7}  result", "-" * (width + 17)]
    lines += [f"{name:<{width}}  {time_:>7}  {result}".rstrip() for name, time_, result in rows]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    asked = argv or list(TIERS)
    unknown = sorted(set(asked) - set(TIERS))
    if unknown:
        print(f"unknown tier(s) {', '.join(unknown)}; tiers: {', '.join(TIERS)}", file=sys.stderr)
        return 2
    tiers = [t for t in TIERS if t in asked]
    if "build" in tiers:  # the tests read this run's build instead of making their own
        os.environ["COURSE_BUILT_SITE"] = str(SITE)  # tests/conftest.py, built_site
        os.environ["COURSE_BUILD_OUTPUT"] = str(BUILD_OUTPUT)
    together = [t for t in SIDE_BY_SIDE if t in tiers and commands(t, tiers)]
    started = time.monotonic()
    results: list[TierResult] = []
    for tier in tiers:
        if tier in together[1:]:
            continue  # ran with together[0]
        if tier in together and len(together) > 1:
            results += run_side_by_side(together, tiers)
            continue
        results.append(run_tier(tier, tiers))
        if tier in NEEDED_BY_THE_REST and not results[-1].passed:
            break
    ran = {r.name for r in results}
    skipped = [t for t in tiers if t not in ran]
    wall = time.monotonic() - started if len(together) > 1 and not skipped else None
    print("\n===== time per tier =====\n" + table(results, skipped, wall), flush=True)
    return 0 if all(r.passed for r in results) and not skipped else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
