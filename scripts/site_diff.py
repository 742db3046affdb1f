"""Compare two built sites file by file, build-time noise left out: which pages differ, and how.

Usage: python scripts/site_diff.py BEFORE AFTER [--lines N]

Noise: the sitemap's <lastmod> dates (the day of the build), and zip archives compared by their
members' names and bytes rather than as files. Every other byte counts: a refactoring of the
build (coursesite) must leave every page as it was, or explain each difference.
"""

import argparse
import difflib
import gzip
import re
import sys
import zipfile
from pathlib import Path

LASTMOD = re.compile(rb"<lastmod>[^<]*</lastmod>")


def normalised(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    if path.name.startswith("sitemap.xml"):
        data = LASTMOD.sub(b"<lastmod/>", data)
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            members = sorted(archive.namelist())
            data = b"\n".join(name.encode() + b" " + archive.read(name) for name in members)
    return data


def files(site: Path) -> set[str]:
    return {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--lines", type=int, default=12, help="diff lines shown per file")
    args = parser.parse_args()
    before, after = files(args.before), files(args.after)
    for name in sorted(before - after):
        print(f"only before: {name}")
    for name in sorted(after - before):
        print(f"only after: {name}")
    changed = 0
    for name in sorted(before & after):
        old, new = normalised(args.before / name), normalised(args.after / name)
        if old == new:
            continue
        changed += 1
        print(f"differs: {name}")
        if zipfile.is_zipfile(args.after / name) or b"\0" in old + new:
            continue
        diff = difflib.unified_diff(
            old.decode("utf-8", "replace").splitlines(),
            new.decode("utf-8", "replace").splitlines(),
            lineterm="",
            n=0,
        )
        for line in list(diff)[2 : 2 + args.lines]:
            print("    " + line[:200])
    print(f"{changed} differing, {len(before - after)} removed, {len(after - before)} added")
    return 1 if changed or before != after else 0


if __name__ == "__main__":
    sys.exit(main())
