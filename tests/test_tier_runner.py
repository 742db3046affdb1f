"""scripts/test_tiers.py (`make test`, `make check`): every test file runs in exactly one tier, the
lab smoke tests are found by file name, and the closing table adds up."""

import importlib.util
import re
import sys
import time

import pytest

from conftest import ROOT

# scripts/ is no package: the runner is loaded from its file
_spec = importlib.util.spec_from_file_location("test_tiers", ROOT / "scripts" / "test_tiers.py")
test_tiers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(test_tiers)

ALL_TIERS = list(test_tiers.TIERS)
LABS_SMOKE_MARK = re.compile(r"^(pytestmark = |@)pytest\.mark\.labs_smoke", re.MULTILINE)


def tier_of_each_test_file() -> dict[str, list[str]]:
    """For each test file, the tiers whose pytest command runs it."""
    runs: dict[str, list[str]] = {}
    for path in sorted(ROOT.glob("tests/**/test_*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for tier in ("tests", "browser", "labs"):
            for command in test_tiers.commands(tier, ALL_TIERS):
                ignored = [
                    a.removeprefix("--ignore=") for a in command if a.startswith("--ignore=")
                ]
                named = [a for a in command[1:] if a.startswith("tests")]
                chosen = any(rel == n or rel.startswith(n + "/") for n in named) if named else True
                if chosen and not any(rel == i or rel.startswith(i + "/") for i in ignored):
                    runs.setdefault(rel, []).append(tier)
    return runs


def test_every_test_file_runs_in_exactly_one_tier():
    files = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("tests/**/test_*.py"))
    runs = tier_of_each_test_file()
    assert {f: runs.get(f, []) for f in files if len(runs.get(f, [])) != 1} == {}


def test_browser_and_lab_smoke_files_are_in_their_own_tiers():
    runs = tier_of_each_test_file()
    assert runs["tests/browser/test_pages.py"] == ["browser"]
    assert runs["tests/test_site.py"] == ["tests"]
    smoke = [f for f, tiers in runs.items() if tiers == ["labs"]]
    assert smoke, "no lab smoke file found"


def test_every_file_marked_labs_smoke_runs_in_the_labs_tier():
    labs = set(test_tiers.labs_smoke_files())
    marked = {
        p.relative_to(ROOT).as_posix()
        for p in ROOT.glob("tests/**/test_*.py")
        if LABS_SMOKE_MARK.search(p.read_text(encoding="utf-8"))
    }
    assert marked <= labs, f"marked labs_smoke but outside {test_tiers.LABS_SMOKE_FILES}"


@pytest.mark.parametrize("name", ["test_labs_smoke.py", "test_labs_smoke_prefix_caching.py"])
def test_one_parametrized_smoke_file_or_one_per_lab_matches(name):
    assert (ROOT / "tests" / name).match(test_tiers.LABS_SMOKE_FILES)


def test_the_tiers_run_in_their_order_and_an_unknown_one_is_refused(capsys):
    assert test_tiers.main(["nowhere"]) == 2
    assert "unknown tier(s) nowhere" in capsys.readouterr().err
    assert test_tiers.commands("setup", ["tests"]) == [
        [test_tiers.os.environ.get("MAKE", "make"), "--no-print-directory", "setup"]
    ]
    assert test_tiers.commands("setup", ["tests", "labs"])[0][-1] == "setup-labs"


def test_the_table_lists_each_tier_and_the_total():
    results = [
        test_tiers.TierResult("build", 75.0, True),
        test_tiers.TierResult("tests", 61.5, False),
    ]
    lines = test_tiers.table(results, ["browser"]).splitlines()
    assert lines[2].split() == ["build", "1:15.0", "passed"]
    assert lines[3].split() == ["tests", "1:01.5", "FAILED"]
    assert lines[4].split(maxsplit=2) == ["browser", "-", "not run"]
    assert lines[5].split() == ["total", "2:16.5"]


def test_the_browser_and_labs_tiers_run_side_by_side_and_their_outputs_do_not_interleave(
    monkeypatch, capsys
):
    slow = "import time; print('slow starts'); time.sleep(1.5); print('slow ends')"
    fast = "import sys; print('fast says hi'); sys.exit(3)"
    scripts = {"browser": slow, "labs": fast}
    monkeypatch.setattr(
        test_tiers, "commands", lambda tier, _: [[sys.executable, "-c", scripts[tier]]]
    )
    started = time.monotonic()
    results = test_tiers.run_side_by_side(["browser", "labs"], ["browser", "labs"])
    wall = time.monotonic() - started
    assert [(r.name, r.passed) for r in results] == [("browser", True), ("labs", False)]
    assert results[1].seconds < results[0].seconds <= wall  # labs ended first, on its own clock
    out = capsys.readouterr().out.split("===== tier: ")
    # each tier's output comes whole, under its own heading, in the order the tiers ended
    assert [part.split(" =====")[0] for part in out[1:]] == ["labs", "browser"]
    assert "fast says hi" in out[1] and "slow" not in out[1]
    assert "slow starts\nslow ends" in out[2] and "fast" not in out[2]


def test_the_total_is_the_wall_clock_when_tiers_overlapped():
    results = [
        test_tiers.TierResult("browser", 300.0, True),
        test_tiers.TierResult("labs", 360.0, True),
    ]
    last = test_tiers.table(results, [], wall=365.0).splitlines()[-1]
    assert last.split() == ["total", "6:05.0", "wall", "clock"]
