"""A benchmark's current result, kept in the ADR it supports.

Each `scripts/bench_*.py` prints a report. With `--adr` it also writes that report, under a line
naming when, at which commit and with which command it was measured, between its markers in the
ADR, in both languages' files, replacing the previous result (earlier ones stay in git's history):

    <!-- bench:pages -->
    …the report…
    <!-- /bench:pages -->
"""

import argparse
import contextlib
import io
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADR_DIR = ROOT / "docs" / "adr"


def markers(block: str) -> tuple[str, str]:
    return f"<!-- bench:{block} -->", f"<!-- /bench:{block} -->"


def replace_block(text: str, block: str, body: str) -> str:
    """`text` with everything between the block's markers replaced by `body`."""
    start, end = markers(block)
    head, found, rest = text.partition(start)
    if not found or end not in rest:
        raise ValueError(f"no {start} … {end} block")
    _, _, tail = rest.partition(end)
    return f"{head}{start}\n{body.strip()}\n{end}{tail}"


def adr_files(adr: str) -> list[Path]:
    """docs/adr/<adr>.md (Chinese) and <adr>.en.md (English)."""
    return [ADR_DIR / f"{adr}.md", ADR_DIR / f"{adr}.en.md"]


def provenance(argv: Sequence[str], commit: str, when: datetime) -> str:
    script = Path(argv[0]).resolve()
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else Path(script.name)
    command = shlex.join(["python", shown.as_posix(), *argv[1:]])
    return f"Measured {when:%Y-%m-%d %H:%M} UTC at `{commit}` with `{command}`:"


def current_commit() -> str:
    found = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return found.stdout.strip() or "an unknown commit"


def write(adr: str, block: str, report: str, argv: Sequence[str] = ()) -> list[Path]:
    """Put `report` into the ADR's block in both languages; returns the files written."""
    argv = list(argv or sys.argv)
    head = provenance(argv, current_commit(), datetime.now(UTC))
    written = []
    for path in adr_files(adr):
        text = replace_block(path.read_text(encoding="utf-8"), block, f"{head}\n\n{report}")
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


class _Tee(io.TextIOBase):
    def __init__(self, *streams: io.TextIOBase) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


@contextlib.contextmanager
def recorded() -> Iterator[io.StringIO]:
    """Print as usual, and keep a copy of everything printed."""
    copy = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, copy)):
        yield copy


def run(main: Callable[[], None], adr: str, block: str) -> None:
    """main() as usual; with --adr on the command line, its report also goes into the ADR."""
    with recorded() as report:
        main()
    if "--adr" in sys.argv[1:]:
        for path in write(adr, block, report.getvalue()):
            print(f"wrote {path.relative_to(ROOT)}")


def add_argument(parser: argparse.ArgumentParser, adr: str, block: str) -> None:
    """--adr in the script's own options (run() acts on it)."""
    parser.add_argument(
        "--adr",
        action="store_true",
        help=f"also write the report into docs/adr/{adr}.md and .en.md "
        f"(block '{block}'), replacing the previous one",
    )
