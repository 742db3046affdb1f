"""Download and installed size of every wheel a hashed lock pins, without downloading them.

    python scripts/lock_sizes.py labs/requirements-gpu.txt [--site-packages DIR] [--top 15]

Installed size of a pin: the file sizes its RECORD lists, when DIR (e.g. .venv-labs' site-packages)
holds that exact name and version; otherwise the sum of the uncompressed file sizes in the zip
directory of the locked wheel (the file on PyPI whose sha256 is one of the lock's hashes and that
this interpreter would install: run it with the Python and platform the lock is for, 3.11 on
Linux x86_64), read with HTTP range requests, a few kB per wheel. Download size (PyPI's simple
index, the JSON form pip reads) is shown for the wheels looked up. pip's .pyc files and its
download cache come on top. The README's disk figures for the GPU labs come from this script.
"""

import argparse
import importlib.metadata
import io
import json
import re
import sys
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

INDEX = "https://pypi.org/simple"
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)")
HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


@dataclass(frozen=True)
class Wheel:
    name: str
    filename: str
    url: str
    download_bytes: int


def pinned_hashes(lock_text: str) -> dict[str, set[str]]:
    """'name==version' -> its sha256 hashes, from a `uv pip compile --generate-hashes` lock."""
    pins: dict[str, set[str]] = {}
    current = None
    for line in lock_text.splitlines():
        if match := PIN.match(line):
            current = f"{match[1]}=={match[2]}"
            pins[current] = set()
        elif current and not line.startswith(" "):
            current = None
        if current:
            pins[current] |= set(HASH.findall(line))
    return pins


def pick_wheel(pin: str, hashes: set[str], files: list[dict]) -> Wheel:
    """The locked wheel this interpreter would install: best-ranked tag among the hashed files."""
    rank = {tag: i for i, tag in enumerate(sys_tags())}
    best = None
    for f in files:
        if not f["filename"].endswith(".whl") or f["hashes"].get("sha256") not in hashes:
            continue
        tags = parse_wheel_filename(f["filename"])[3]
        score = min((rank[t] for t in tags if t in rank), default=None)
        if score is not None and (best is None or score < best[0]):
            best = (score, f)
    if best is None:
        raise LookupError(f"{pin}: no locked wheel for this interpreter and platform")
    f = best[1]
    return Wheel(pin, f["filename"], f["url"], f["size"])


def index_files(name: str) -> list[dict]:
    request = urllib.request.Request(
        f"{INDEX}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["files"]


class RemoteFile(io.RawIOBase):
    """A read-only, seekable view of a URL through HTTP range requests (enough for zipfile)."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = base + offset
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n < 0 else min(self.pos + n, self.size)
        if end <= self.pos:
            return b""
        headers = {"Range": f"bytes={self.pos}-{end - 1}"}
        request = urllib.request.Request(self.url, headers=headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            data = response.read()
        self.pos += len(data)
        return data


def installed_bytes(archive) -> int:
    """Sum of the uncompressed sizes of a wheel's files (a path or a seekable file object)."""
    with zipfile.ZipFile(archive) as wheel:
        return sum(info.file_size for info in wheel.infolist())


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def recorded_sizes(site_packages: Path | None) -> dict[str, int]:
    """'name==version' -> bytes its RECORD lists, for every distribution installed in a folder."""
    if site_packages is None:
        return {}
    sizes = {}
    for dist in importlib.metadata.distributions(path=[str(site_packages)]):
        pin = f"{normalize(dist.metadata['Name'])}=={dist.version}"
        sizes[pin] = sum(f.size or 0 for f in dist.files or [])
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lock", type=Path)
    parser.add_argument("--site-packages", type=Path, help="where some pins are installed")
    parser.add_argument("--top", type=int, default=15, help="largest wheels to list")
    opts = parser.parse_args(argv)
    local = recorded_sizes(opts.site_packages)
    rows = []  # (installed bytes, download bytes or None, what)
    for pin, hashes in pinned_hashes(opts.lock.read_text(encoding="utf-8")).items():
        name, version = pin.split("==")
        if f"{normalize(name)}=={version}" in local:
            rows.append((local[f"{normalize(name)}=={version}"], None, f"{pin} (RECORD)"))
            continue
        wheel = pick_wheel(pin, hashes, index_files(name))
        installed = installed_bytes(RemoteFile(wheel.url, wheel.download_bytes))
        rows.append((installed, wheel.download_bytes, wheel.filename))
    rows.sort(key=lambda r: -r[0])
    gb = lambda n: f"{n / 1e9:.2f}" if n is not None else "-"  # noqa: E731
    print(f"{'installed GB':>12} {'download GB':>11}  wheel")
    for installed, download, what in rows[: opts.top]:
        print(f"{gb(installed):>12} {gb(download):>11}  {what}")
    looked_up = [r for r in rows if r[1] is not None]
    print(
        f"{gb(sum(r[0] for r in rows)):>12} {'':>11}  all {len(rows)} pins of {opts.lock} "
        f"({len(rows) - len(looked_up)} from RECORD files)"
    )
    print(
        f"{gb(sum(r[0] for r in looked_up)):>12} {gb(sum(r[1] for r in looked_up)):>11}  "
        f"the {len(looked_up)} wheels looked up on PyPI"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
