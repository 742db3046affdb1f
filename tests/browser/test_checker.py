"""The checker itself: a page that asks another host, misses a file and throws is reported.

Nothing reaches the network: Chromium resolves no host but 127.0.0.1 (serve_site.CHROMIUM_ARGS).
"""

from serve_site import serve

from .pagecheck import visit

BAD_PAGE = """<!doctype html>
<html lang="en"><head><title>bad page</title>
<script src="https://cdn.example.org/lib.js"></script>
<link rel="stylesheet" href="//fonts.example.net/font.css">
</head><body>
<img src="missing.png" alt="">
<script>undefinedFunction();</script>
</body></html>
"""


def test_the_checker_reports_other_hosts_failures_and_errors(browser, tmp_path):
    (tmp_path / "index.html").write_text(BAD_PAGE, encoding="utf-8")
    with serve(tmp_path, "/") as base:
        report = visit(browser, base)
    assert set(report.external_requests()) == {
        "https://cdn.example.org/lib.js",
        "http://fonts.example.net/font.css",  # protocol-relative, from an http page
    }
    failed = "\n".join(report.failed)
    assert "cdn.example.org/lib.js" in failed, failed
    assert f"{base}missing.png (HTTP 404)" in report.failed, failed
    assert report.console_errors, "the 404 and the unresolvable hosts are console errors"
    assert any("undefinedFunction" in e for e in report.page_errors), report.page_errors
    assert report.lang == "en"
    assert not report.problems, report.problems
