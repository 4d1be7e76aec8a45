"""`test-tamper` with the whole trees: a removed test that calls a definition the change
deletes whole and expects, word for word, that definition's own message (rack's test of
`Request#values_at`, which expected its deprecation text, while `Headers#values_at` stays)
goes with it. The message still said at the head, the definition kept, or a test that does
not call it, and the test is reported. Real rule, real git."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, tamper, tamper_messages

MESSAGE = "Request#values_at is deprecated and will be removed in a future version of Rack"
REQUEST = f"""\
module Rack
  class Request
    def params
      {{}}
    end

    def values_at(*keys)
      warn("{MESSAGE}", uplevel: 1)
      keys.map {{ |key| params[key] }}
    end
  end
end
"""
WITHOUT = REQUEST.split("\n\n    def values_at")[0] + "\n  end\nend\n"
HEADERS = (
    "module Rack\n  class Headers\n    def values_at(*keys)\n      keys\n    end\n  end\nend\n"
)
SPEC = f"""\
describe Rack::Request do
  it "has params" do
    make_request.params.must_equal({{}})
  end

  it "returns values for the keys in the order given" do
    req = make_request
    capture_warnings(req) do |warnings|
      req.values_at('foo').must_equal [nil]
      warnings.pop.must_equal ["{MESSAGE}", {{ uplevel: 1 }}]
    end
  end
end
"""
KEPT = SPEC.split('\n  it "returns values')[0] + "\nend\n"
FILES = {
    "lib/rack/request.rb": REQUEST,
    "lib/rack/headers.rb": HEADERS,
    "test/spec_request.rb": SPEC,
}
REMOVED = "test 'returns values for the keys in the order given' removed"


def _remove(request: str = WITHOUT):
    def change(r: GitRepo) -> None:
        r.write("lib/rack/request.rb", request)
        r.write("test/spec_request.rb", KEPT)

    return change


def test_a_test_expecting_a_deleted_methods_own_message_goes_with_it(repo: GitRepo):
    assert tamper(repo, FILES, _remove()) == []


def test_the_method_kept_keeps_the_test(repo: GitRepo):
    assert tamper_messages(repo, FILES, _remove(request=REQUEST)) == [REMOVED]


def test_the_message_still_said_at_the_head_keeps_the_test(repo: GitRepo):
    """The warning moved to another method: the behaviour the test expected lives on."""
    headers = HEADERS.replace("      keys\n", f'      warn("{MESSAGE}")\n      keys\n')
    files = {**FILES, "lib/rack/headers.rb": HEADERS}

    def change(r: GitRepo) -> None:
        _remove()(r)
        r.write("lib/rack/headers.rb", headers)

    assert tamper_messages(repo, files, change) == [REMOVED]


def test_a_changelog_quoting_the_message_keeps_nothing(repo: GitRepo):
    def change(r: GitRepo) -> None:
        _remove()(r)
        r.write("CHANGELOG.md", f"* Removed: {MESSAGE}\n")

    assert tamper(repo, FILES, change) == []


def test_a_test_that_does_not_call_the_method_keeps_the_test(repo: GitRepo):
    """It expects the message but reaches it some other way: nothing ties it to the deleted
    method rather than to code that stays."""
    spec = SPEC.replace("req.values_at('foo').must_equal [nil]", "req.lookup('foo')")
    assert tamper_messages(repo, {**FILES, "test/spec_request.rb": spec}, _remove()) == [REMOVED]
