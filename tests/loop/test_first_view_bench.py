"""The first-view recall benchmark's core on a tiny real repository, so it cannot rot."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import first_view_recall as bench
from tests.guards.conftest import GitRepo

HELPERS = "".join(f"\n\ndef helper_{n}(value):\n    return value + {n}\n" for n in range(200))
SIGNING = (
    "import time\n\n\ndef sign_timestamp(payload):\n    return payload, time.time()\n" + HELPERS
)
FIXED = SIGNING.replace("time.time()", "time.monotonic()")


@pytest.fixture
def history(tmp_path: Path) -> GitRepo:
    home = tmp_path / "home"
    home.mkdir()
    repo = GitRepo(tmp_path / "repo", home)
    repo.write("pkg/signing.py", SIGNING)
    repo.write("pkg/tables.py", "def render_rows(rows):\n    return rows\n")
    repo.write("pkg/cli.py", "from pkg.signing import sign_timestamp\n")
    repo.write("tests/test_signing.py", "from pkg.signing import sign_timestamp\n")
    repo.commit("Start")
    repo.write("pkg/signing.py", FIXED)
    repo.commit("Signed timestamps use a monotonic clock\n\nCo-authored-by: A <a@example.invalid>")
    repo.write("tests/test_signing.py", "from pkg.signing import sign_timestamp  # more\n")
    repo.commit("Test the clock")  # changes no source file: not sampled
    return repo


def test_the_bench_measures_recall_on_a_repository_history(history: GitRepo):
    commits = bench.sample_commits(history.path, 5)
    assert [c.changed for c in commits] == [("pkg/signing.py",)]
    assert commits[0].ticket == "Signed timestamps use a monotonic clock"
    tally = bench.measure(history.path, commits[0], 60_000)
    assert (tally.commits, tally.changed, tally.view_whole, tally.view_excerpt) == (1, 1, 1, 0)
    assert tally.bm25_whole == 0  # plain BM25 neither splits `sign_timestamp` nor stems "signed"
    tiny = bench.measure(history.path, commits[0], 3_000)  # no room for the file whole
    assert (tiny.view_whole, tiny.view_excerpt, tiny.bm25_whole) == (0, 1, 0)


def test_the_bench_prints_a_table_and_skips_without_a_repository(
    history: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    assert bench.main([str(history.path), "--commits", "3"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("all ") and " 100.0% " in line for line in out.splitlines())
    monkeypatch.delenv(bench.ENV_REPOS, raising=False)
    assert bench.main([]) == 0
    assert "skipped" in capsys.readouterr().out
