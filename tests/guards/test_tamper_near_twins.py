"""`test-tamper` with the whole trees: a removed test whose twin stays, the same body but for
one token the change took out of the code (sinatra's `origin_whitelist` option, deprecated for
`permitted_origins` and removed; "Remove WEBrick" and the test identical to `'includes puma'`
but for `'webrick'`), is set aside. Two differences, a token still in the code, or a twin that
is skipped or changed, and the test is reported. Real rule, real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, diff_tamper_messages, tamper, tamper_messages

ORIGIN_RB = """\
module Rack
  class HttpOrigin
    def initialize(app, options = {})
      @permitted = options[:permitted_origins] || options[:origin_whitelist]
    end
  end
end
"""
WITHOUT_OPTION = ORIGIN_RB.replace(" || options[:origin_whitelist]", "")
SPEC = """\
describe Rack::HttpOrigin do
  it "accepts requests with permitted Origin" do
    mock_app do
      use Rack::HttpOrigin, permitted_origins: ['http://www.friend.com']
    end
    expect(get('/', {}, 'HTTP_ORIGIN' => 'http://www.friend.com')).to be_ok
  end

  it "accepts requests with whitelisted Origin" do
    mock_app do
      use Rack::HttpOrigin, origin_whitelist: ['http://www.friend.com']
    end
    expect(get('/', {}, 'HTTP_ORIGIN' => 'http://www.friend.com')).to be_ok
  end
end
"""
KEPT = SPEC.split('\n  it "accepts requests with whitelisted')[0] + "\nend\n"
FILES = {"lib/rack/http_origin.rb": ORIGIN_RB, "spec/http_origin_spec.rb": SPEC}
REPORTED = ["test 'accepts requests with whitelisted Origin' removed"]


def _remove(lib: str = WITHOUT_OPTION, spec: str = KEPT):
    def change(r: GitRepo) -> None:
        r.write("lib/rack/http_origin.rb", lib)
        r.write("spec/http_origin_spec.rb", spec)

    return change


def test_a_test_removed_with_the_option_its_twin_does_not_use_passes(repo: GitRepo):
    assert tamper(repo, FILES, _remove()) == []


def test_a_changelog_naming_the_removed_option_keeps_nothing(repo: GitRepo):
    files = {**FILES, "CHANGELOG.md": "# 3.0\n\n* `origin_whitelist` is deprecated\n"}
    assert tamper(repo, files, _remove()) == []


def test_the_option_still_in_the_code_keeps_the_test(repo: GitRepo):
    """Only the test removed: the option still works and is no longer tested."""
    assert tamper_messages(repo, FILES, _remove(lib=ORIGIN_RB)) == REPORTED


def test_the_option_still_read_elsewhere_keeps_the_test(repo: GitRepo):
    files = {**FILES, "lib/rack/legacy.rb": "LEGACY = [:origin_whitelist]\n"}
    assert tamper_messages(repo, files, _remove()) == REPORTED


@pytest.mark.parametrize(
    "twin",
    [
        # Two differences: the removed test also expected another outcome.
        SPEC.replace(
            ').to be_ok\n  end\n\n  it "accepts requests with whitelisted',
            (').to be_forbidden\n  end\n\n  it "accepts requests with whitelisted'),
        ),
        # The twin is skipped.
        SPEC.replace(
            "    mock_app do\n      use Rack::HttpOrigin, permitted_origins",
            "    skip\n    mock_app do\n      use Rack::HttpOrigin, permitted_origins",
        ),
    ],
    ids=["two-differences", "twin-skipped"],
)
def test_a_twin_that_differs_more_or_does_not_run_keeps_the_test(repo: GitRepo, twin: str):
    kept = twin.split('\n  it "accepts requests with whitelisted')[0] + "\nend\n"
    files = {**FILES, "spec/http_origin_spec.rb": twin}
    assert tamper_messages(repo, files, _remove(spec=kept)) == REPORTED


def test_a_twin_the_change_edits_keeps_the_test(repo: GitRepo):
    """The twin's body made the removed test's: it no longer stands for it."""
    edited = KEPT.replace("permitted_origins:", "allowed_origins:")
    assert REPORTED[0] in tamper_messages(repo, FILES, _remove(spec=edited))


def test_a_bare_diff_gets_no_twin(repo: GitRepo):
    assert diff_tamper_messages(repo, FILES, _remove()) == REPORTED


SERVER_PY = """\
SERVERS = ["puma", "webrick"]


def detect(name):
    return name in SERVERS
"""
SERVER_TESTS = """\
from app.server import detect


def test_includes_puma():
    assert detect("puma")


def test_includes_webrick():
    assert detect("webrick")
"""


def test_a_python_test_removed_with_the_value_it_tried_passes(repo: GitRepo):
    """The Ruby case in Python: the server list loses `webrick`."""
    files = {
        "app/__init__.py": "",
        "app/server.py": SERVER_PY,
        "tests/test_server.py": SERVER_TESTS,
    }

    def change(r: GitRepo) -> None:
        r.write("app/server.py", SERVER_PY.replace(', "webrick"', ""))
        r.write(
            "tests/test_server.py", SERVER_TESTS.split("\n\n\ndef test_includes_webrick")[0] + "\n"
        )

    assert tamper(repo, files, change) == []
