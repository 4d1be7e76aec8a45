"""`test-tamper` and Ruby tests defined through a wrapper of the suite's own: rack's
`deprecated "title" do`, whose helper runs the block inside `it(*args)` with warnings off. A
test moved under such a wrapper still runs; a wrapper
that drops the block, rescues its failure, runs it under a condition or is defined twice is
no test function, and a test moved under it is reported as removed. Real rule, real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, edited, tamper

WRAPPER = """\
class Minitest::Spec
  def self.deprecated(*args, &block)
    it(*args) do
      begin
        verbose, $VERBOSE = $VERBOSE, nil
        instance_exec(&block)
      ensure
        $VERBOSE = verbose
      end
    end
  end
end
"""
SPEC = """\
require_relative 'helper'

describe Rack::Request do
  it "parses the query" do
    req = make_request("/?foo=bar")
    req.GET.must_equal "foo" => "bar"
  end

  it "invalidates the cache" do
    req = make_request("/?foo=quux")
    req.GET.must_equal "foo" => "quux"
  end
end
"""
DEPRECATED = SPEC.replace('  it "invalidates', '  deprecated "invalidates')
FILES = {"lib/rack/request.rb": "module Rack\nend\n", "test/spec_request.rb": SPEC}
REMOVED = "test/spec_request.rb:9 test 'invalidates the cache' removed"


def test_a_test_moved_under_a_wrapper_that_runs_it_is_no_removal(repo: GitRepo):
    files = {**FILES, "test/helper.rb": WRAPPER}
    assert tamper(repo, files, edited("test/spec_request.rb", SPEC, DEPRECATED)) == []


def test_the_wrapper_may_come_with_the_change(repo: GitRepo):
    """The change adds the helper in the same change."""

    def change(r: GitRepo) -> None:
        r.write("test/helper.rb", WRAPPER)
        r.write("test/spec_request.rb", DEPRECATED)

    assert tamper(repo, FILES, change) == []


@pytest.mark.parametrize(
    "wrapper",
    [
        WRAPPER.replace("        instance_exec(&block)\n", "        nil\n"),
        WRAPPER.replace("      ensure\n", "      rescue Exception\n        nil\n      ensure\n"),
        WRAPPER.replace("instance_exec(&block)", "instance_exec(&block) if ENV['CI']"),
        WRAPPER.replace(
            "        instance_exec(&block)\n", "        skip\n        instance_exec(&block)\n"
        ),
        WRAPPER.replace(
            "        instance_exec(&block)\n", "        return\n        instance_exec(&block)\n"
        ),
        WRAPPER.replace("    it(*args) do", "    it(*args.first) do"),
        WRAPPER + "\nclass Other\n  def self.deprecated(*args, &block)\n  end\nend\n",
    ],
    ids=["drops-block", "rescues", "condition", "skips", "returns", "other-call", "twice"],
)
def test_a_wrapper_not_proven_to_run_the_block_is_no_test_function(repo: GitRepo, wrapper: str):
    files = {**FILES, "test/helper.rb": wrapper}
    assert tamper(repo, files, edited("test/spec_request.rb", SPEC, DEPRECATED)) == [REMOVED]


def test_a_wrapper_in_the_projects_own_code_is_no_test_function(repo: GitRepo):
    """Defined in `lib/`, not among the tests: not the suite's helper."""
    files = {**FILES, "lib/rack/deprecation.rb": WRAPPER}
    assert tamper(repo, files, edited("test/spec_request.rb", SPEC, DEPRECATED)) == [REMOVED]


def test_a_test_deleted_from_under_the_wrapper_is_a_removal(repo: GitRepo):
    """Once read as a test, a wrapped test deleted is a test removed."""
    files = {**FILES, "test/helper.rb": WRAPPER, "test/spec_request.rb": DEPRECATED}
    kept = DEPRECATED.split('\n  deprecated "invalidates')[0] + "\nend\n"
    assert tamper(repo, files, edited("test/spec_request.rb", DEPRECATED, kept)) == [
        "test/spec_request.rb:9 test 'invalidates the cache' removed"
    ]
