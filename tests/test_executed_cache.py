"""tests/executed.py: a block's output is run once per state of the repository and reused by the
tests that need it; any edit to what blocks read makes it run again, and an error is never kept."""

import pytest
from markdown_exec._internal.formatters.base import ExecutionError

import executed

# each run of the block adds a line to runs.txt (outside what blocks read, so the state holds)
COUNTING = "open('runs.txt', 'a').write('run\\n')\nprint(open('snippets/m.py').read().strip())\n"


@pytest.fixture
def repository(tmp_path, monkeypatch):
    for base in executed.READ_BY_BLOCKS:
        (tmp_path / base).mkdir()
    (tmp_path / "snippets" / "m.py").write_text("first\n", encoding="utf-8")
    monkeypatch.setattr(executed, "ROOT", tmp_path)
    monkeypatch.setattr(executed, "CACHE", tmp_path / ".cache" / "executed")
    executed.repository_state.cache_clear()
    yield tmp_path
    executed.repository_state.cache_clear()


def runs(repository) -> int:
    return (repository / "runs.txt").read_text(encoding="utf-8").count("run")


def test_an_output_is_run_once_and_run_again_after_an_edit(repository):
    assert executed.build_output(COUNTING, "b") == "first\n"
    assert executed.build_output(COUNTING, "b") == "first\n"
    assert runs(repository) == 1
    (repository / "snippets" / "m.py").write_text("second\n", encoding="utf-8")
    executed.repository_state.cache_clear()  # a new test run sees the new state
    assert executed.build_output(COUNTING, "b") == "second\n"
    assert runs(repository) == 2
    # the folder of the old state is gone: one state's answers at a time
    assert len(list(executed.CACHE.iterdir())) == 1


def test_a_block_that_raises_raises_every_time_and_is_not_kept(repository):
    for _ in range(2):
        with pytest.raises(ExecutionError):
            executed.build_output("raise ValueError('no')\n", "bad")
    assert not executed.CACHE.exists() or not any(executed.CACHE.rglob("*.txt"))
