"""A clone of the repository is all a reader or contributor has: no file may point outside it.

Every tracked text file is read; a reference to a folder beside the clone, to
this machine's absolute workspace paths, or to a reference document kept beside the repository
(not in it) fails, naming the file and line. The patterns are spelled in pieces so that this file
does not match itself."""

import re
import subprocess

from conftest import ROOT

OUTSIDE = re.compile(
    "|".join(
        [
            re.escape("../" + "shared"),  # the folder beside a working copy, not in a clone
            re.escape("/" + "work/"),  # an absolute path on the authors' machine
            # reference notes kept outside the repository: restate what they say, do not cite them
            r"\b(?:TOOL" + r"CHAIN|FA" + r"CTS|LES" + r"SONS|VLLM-PARTS[0-9-]+)\.md\b",
        ]
    )
)


def tracked_text_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True
    ).stdout
    return [p for p in listed.split("\0") if p and (ROOT / p).is_file()]


def outside_references(text: str) -> list[tuple[int, str]]:
    """(line number, matched text) of every reference to a path outside the repository."""
    return [
        (number, match[0])
        for number, line in enumerate(text.splitlines(), start=1)
        for match in OUTSIDE.finditer(line)
    ]


def test_the_check_finds_each_kind_of_outside_reference():
    text = "\n".join(
        [
            "see ../" + "shared/notes.txt",
            "open /" + "work/main/README.md",
            "pitfalls in TOOL" + "CHAIN.md",
            "plain text, docs/adr/0007-notebooks.md",
        ]
    )
    assert [number for number, _ in outside_references(text)] == [1, 2, 3]


def test_no_tracked_file_cites_a_path_outside_the_repository():
    found = []
    for path in tracked_text_files():
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary: images, notebooks' attachments
        found += [f"{path}:{n}: {hit}" for n, hit in outside_references(text)]
    assert not found, "paths outside the repository (restate what they say instead):\n" + "\n".join(
        found
    )
