"""A test file renamed with its tests retitled, too changed for git to pair the two
(`app.guards.tamper.relocations._renamed_apart`): the new file, in the same folder, pays for the
old one's tests when it shares enough of its lines, one to one; anything else is a deletion."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

HEADER = (
    "import pytest\n\nfrom pkg.streams import open_stream, close_stream\n"
    "from pkg.streams import StreamError, read_all\n\n\n"
)
OLD_TESTS = (
    "def test_child_closes():\n    stream = open_stream('child')\n"
    "    close_stream(stream)\n    assert stream.closed\n\n\n"
    "def test_child_errors():\n    stream = open_stream('child')\n"
    "    with pytest.raises(StreamError):\n        read_all(stream, limit=-1)\n"
)
OLD = HEADER + OLD_TESTS
# The same tests, retitled "child" to "subprocess" as execa did, most lines touched: too
# much for git to call it a rename, but half of the lines that say something stay.
NEW = HEADER + (
    "# Subprocess streams.\n\n\n"
    "def test_subprocess_closes():\n    sub = open_stream('subprocess')\n"
    "    close_stream(sub)\n    assert sub.closed\n\n\n"
    "def test_subprocess_errors():\n    sub = open_stream('subprocess')\n"
    "    with pytest.raises(StreamError):\n        read_all(stream, limit=-1)\n"
)
BASE = {"tests/test_child.py": OLD, "tests/test_other.py": "def test_other():\n    assert 1\n"}
DELETED = "tests/test_child.py:None test file deleted"


def _rename(repo: GitRepo, added: dict[str, str]) -> list[str]:
    def change(r: GitRepo) -> None:
        r.remove("tests/test_child.py")
        for path, text in added.items():
            r.write(path, text)

    return tamper(repo, BASE, change)


def test_a_test_file_renamed_past_gits_pairing_loses_no_test(repo: GitRepo):
    """execa's `child.js` made `subprocess.js`: as many tests, every one retitled."""
    assert _rename(repo, {"tests/test_subprocess.py": NEW}) == []


SKIP_LINE = NEW[: NEW.index("def test_subprocess_errors")].count("\n") + 1
ONE_TEST = NEW.split("\n\n\ndef test_subprocess_errors")[0] + "\n"


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        # a test fewer
        ({"tests/test_subprocess.py": ONE_TEST}, DELETED),
        # another folder
        ({"tests/unit/test_subprocess.py": NEW}, DELETED),
        # little in common: new tests of something else
        (
            {
                "tests/test_parser.py": "from pkg.parse import parse\n\n\n"
                "def test_parses():\n    assert parse('a') == ['a']\n\n\n"
                "def test_parses_two():\n    assert parse('a b') == ['a', 'b']\n"
            },
            DELETED,
        ),
        # two files that could be it: neither is
        (
            {
                "tests/test_subprocess.py": NEW,
                "tests/test_process.py": NEW.replace("subprocess", "spawned"),
            },
            DELETED,
        ),
        # the new file's tests stand for the old ones: a skip on one hides a test that ran
        (
            {
                "tests/test_subprocess.py": NEW.replace(
                    "def test_subprocess_errors", "@pytest.mark.skip\ndef test_subprocess_errors"
                )
            },
            f"tests/test_subprocess.py:{SKIP_LINE} skip marker added to a test",
        ),
    ],
)
def test_a_test_file_deleted_beside_a_new_one_that_is_not_it_is_reported(
    repo: GitRepo, added: dict[str, str], expected: str
):
    assert expected in _rename(repo, added)
