"""Interconnects (core/links.toml): one-way bandwidth after line encoding, from the signalling."""

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LINKS_FILE = Path(__file__).resolve().parent / "links.toml"
FIELDS = ("name", "kind", "lanes", "gbit_per_lane", "encoding", "source")


@dataclass(frozen=True)
class Link:
    key: str
    name: str
    kind: str
    lanes: int
    gbit_per_lane: float
    encoding: tuple[int, int]  # payload bits, line bits (128b/130b -> (128, 130))
    source: str

    @property
    def bandwidth_bytes(self) -> float:
        """Bytes per second in one direction after line encoding; packet headers and flow control
        still take their share, so this is a peak and real transfers are slower."""
        payload, line = self.encoding
        return self.lanes * self.gbit_per_lane * 1e9 * payload / line / 8

    @property
    def bandwidth_gbs(self) -> float:
        return self.bandwidth_bytes / 1e9


def transfer_seconds(link: Link, nbytes: float) -> float:
    """Lower bound on the time to move nbytes over the link in one direction."""
    if nbytes < 0:
        raise ValueError(f"bytes to move must be non-negative, got {nbytes}")
    return nbytes / link.bandwidth_bytes


def _link(key: str, row: dict, path: Path) -> Link:
    missing = [f for f in FIELDS if f not in row]
    extra = sorted(set(row) - set(FIELDS))
    if missing or extra:
        raise ValueError(
            f"{path}: link '{key}': missing {missing or 'nothing'}, unknown {extra or 'nothing'}"
        )
    enc = row["encoding"]
    if not (isinstance(enc, list) and len(enc) == 2 and 0 < enc[0] <= enc[1]):
        raise ValueError(
            f"{path}: link '{key}': encoding must be [payload bits, line bits], got {enc}"
        )
    if row["lanes"] < 1 or row["gbit_per_lane"] <= 0:
        raise ValueError(f"{path}: link '{key}': lanes and gbit_per_lane must be positive")
    return Link(key=key, **{**row, "encoding": (enc[0], enc[1])})


def load_links(path: Path = LINKS_FILE) -> dict[str, Link]:
    with path.open("rb") as f:
        table = tomllib.load(f)
    return {key: _link(key, row, path) for key, row in table.items()}


@cache  # a plan asks at every batch size it tries; the file does not change during a run
def load_link(key: str) -> Link:
    links = load_links()
    if key not in links:
        raise KeyError(f"no link '{key}' in {LINKS_FILE} (known: {', '.join(links)})")
    return links[key]


if __name__ == "__main__":
    for link in load_links().values():
        print(f"{link.name:<28} {link.bandwidth_gbs:>7.1f} GB/s per direction  ({link.source})")
