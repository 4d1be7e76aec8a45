"""`test-tamper` with the whole trees: a removed test that only loaded a file the change
deletes (rack-test's `require 'rack/mock_session'` test, removed with the deprecated file) is
set aside; one that also checks anything, or loads a file that stays, is reported. Real rule,
real git."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, tamper, tamper_messages

SPEC = """\
describe Rack::Test do
  it 'builds a session' do
    assert Rack::Test::Session.new(app)
  end

  it 'allows requiring rack/mock_session' do
    require 'rack/mock_session'
  end
end
"""
KEPT = SPEC.split("\n  it 'allows requiring")[0] + "\nend\n"
FILES = {
    "lib/rack/test.rb": "module Rack\n  module Test\n  end\nend\n",
    "lib/rack/mock_session.rb": 'warn("deprecated", uplevel: 1)\nrequire_relative "test"\n',
    "spec/rack/test_spec.rb": SPEC,
}
REMOVED = "test 'allows requiring rack/mock_session' removed"


def test_a_test_that_only_loaded_a_deleted_file_goes_with_it(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.remove("lib/rack/mock_session.rb")
        r.write("spec/rack/test_spec.rb", KEPT)

    assert tamper(repo, FILES, change) == []


def test_the_file_kept_keeps_the_test(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("spec/rack/test_spec.rb", KEPT)

    assert tamper_messages(repo, FILES, change) == [REMOVED]


def test_the_file_moved_where_the_same_require_finds_it_keeps_the_test(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.move("lib/rack/mock_session.rb", "vendor/rack/mock_session.rb")
        r.write("spec/rack/test_spec.rb", KEPT)

    assert tamper_messages(repo, FILES, change) == [REMOVED]


def test_a_test_that_also_checks_something_keeps_the_test(repo: GitRepo):
    spec = SPEC.replace(
        "    require 'rack/mock_session'\n",
        "    require 'rack/mock_session'\n    assert Rack::Test::Session.new(app)\n",
    )

    def change(r: GitRepo) -> None:
        r.remove("lib/rack/mock_session.rb")
        r.write("spec/rack/test_spec.rb", KEPT)

    assert tamper_messages(repo, {**FILES, "spec/rack/test_spec.rb": spec}, change) == [REMOVED]


def test_a_python_test_that_only_imported_a_deleted_module_goes_with_it(repo: GitRepo):
    tests = (
        "def test_core():\n    assert True is not False\n\n\n"
        "def test_legacy_module_imports():\n    import pkg.legacy  # noqa: F401\n"
    )
    files = {"pkg/__init__.py": "", "pkg/legacy.py": "X = 1\n", "tests/test_pkg.py": tests}

    def change(r: GitRepo) -> None:
        r.remove("pkg/legacy.py")
        r.write("tests/test_pkg.py", tests.split("\n\n\ndef test_legacy")[0] + "\n")

    assert tamper(repo, files, change) == []
