"""core.links: link bandwidths computed from the standards' signalling, and bad link files."""

import pytest

from core.links import LINKS_FILE, load_link, load_links, transfer_seconds

LINKS = load_links()


def test_every_link_has_a_source_and_a_positive_bandwidth():
    assert LINKS
    for link in LINKS.values():
        assert link.source.strip() and link.bandwidth_bytes > 0


def test_pcie_payload_is_the_lane_rate_less_128b_130b_encoding():
    # 16 lanes x 16 GT/s = 256 Gbit/s on the wire = 32 GB/s; 128b/130b leaves 31.5 GB/s
    assert LINKS["pcie4_x16"].bandwidth_gbs == pytest.approx(32 * 128 / 130)
    assert LINKS["pcie5_x16"].bandwidth_bytes == pytest.approx(
        2 * LINKS["pcie4_x16"].bandwidth_bytes
    )


def test_nvlink_both_directions_add_up_to_nvidias_900_gbs():
    assert 2 * LINKS["nvlink4_h100"].bandwidth_gbs == pytest.approx(900)


def test_network_rates_are_bits():
    assert LINKS["ethernet_100g"].bandwidth_gbs == pytest.approx(12.5)
    assert LINKS["infiniband_ndr"].bandwidth_gbs == pytest.approx(50)


def test_transfer_time_is_bytes_over_bandwidth():
    link = LINKS["infiniband_ndr"]
    assert transfer_seconds(link, 50e9) == pytest.approx(1.0)
    assert transfer_seconds(link, 0) == 0
    with pytest.raises(ValueError, match="non-negative"):
        transfer_seconds(link, -1)


def test_unknown_link_names_the_file_and_the_known_keys():
    with pytest.raises(KeyError, match="pcie4_x16"):
        load_link("pcie9")


ROW = 'name = "x"\nkind = "y"\nsource = "s"\n'


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (ROW + "lanes = 1\ngbit_per_lane = 1", "missing"),
        (ROW + "lanes = 1\ngbit_per_lane = 1\nencoding = [130, 128]", "encoding"),
        (ROW + "lanes = 0\ngbit_per_lane = 1\nencoding = [1, 1]", "positive"),
        (ROW + "lanes = 1\ngbit_per_lane = 1\nencoding = [1, 1]\nspeed = 3", "unknown"),
    ],
)
def test_a_bad_row_is_an_error_naming_the_file_and_link(tmp_path, row, message):
    path = tmp_path / "links.toml"
    path.write_text(f"[bad]\n{row}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message) as error:
        load_links(path)
    assert "bad" in str(error.value) and str(path) in str(error.value)


def test_the_shipped_file_is_the_default():
    assert load_links(LINKS_FILE) == LINKS
