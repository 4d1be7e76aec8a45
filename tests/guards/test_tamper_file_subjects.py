"""`test-tamper` with the whole trees: a deleted test file named after its subject
(`creole_test.rb`, `test_legacy_parse_dates.py`, `encrypted_cookie_spec.rb`) goes with that
subject when the change deletes it from the code and it is gone from the whole head tree, even
though its tests also call code that stays (an app built by a helper, a layout, the function
the legacy one is compared with). Deleting the file while its subject stays, or deleting some
other name its tests use, is still reported. Every case runs the real rule over real git."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, tamper

BASE_RB = """\
module Tiny
  class Base
    def layout(name = :layout, &block)
      @layout = block
    end

    def erb(template)
      render :erb, template
    end

    def creole(template)
      render :creole, template
    end
  end
end
"""
WITHOUT_CREOLE = BASE_RB.replace(
    "\n    def creole(template)\n      render :creole, template\n    end\n", ""
)
CREOLE_TEST = """\
require_relative 'helper'

class CreoleTest < Minitest::Test
  it 'renders inline creole strings' do
    mock_app { get('/') { creole '= Hiya' } }
    get '/'
    assert_body '<h1>Hiya</h1>'
  end

  it 'renders with inline layouts' do
    mock_app do
      layout { 'THIS. IS. #{yield.upcase}!' }
      get('/') { creole 'Sparta', layout_engine: :str }
    end
    get '/'
    assert_like 'THIS. IS. <P>SPARTA</P>!', body
  end
end
"""
HELPER = "def mock_app(&block)\n  @app = Tiny::Base.new(&block)\nend\n"
RUBY = {"lib/tiny/base.rb": BASE_RB, "test/creole_test.rb": CREOLE_TEST, "test/helper.rb": HELPER}


def test_a_template_engine_deleted_with_its_test_file_passes(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("lib/tiny/base.rb", WITHOUT_CREOLE)
        r.remove("test/creole_test.rb")

    assert tamper(repo, RUBY, change) == []


def test_the_test_file_deleted_while_its_subject_stays_is_tampering(repo: GitRepo):
    assert tamper(repo, RUBY, lambda r: r.remove("test/creole_test.rb")) == [
        "test/creole_test.rb:None test file deleted"
    ]


def test_a_subject_still_used_elsewhere_keeps_its_test_file(repo: GitRepo):
    """`creole` lives on in another file's code: not gone."""

    def change(r: GitRepo) -> None:
        r.write("lib/tiny/base.rb", WITHOUT_CREOLE)
        r.write("lib/tiny/wiki.rb", "module Tiny\n  def self.wiki(t) = creole(t)\nend\n")
        r.remove("test/creole_test.rb")

    assert tamper(repo, RUBY, change) == ["test/creole_test.rb:None test file deleted"]


DATES = """\
def parse_dates(text):
    return text.split(",")


def legacy_parse_dates(text):
    return text.split(";")


def make_sample():
    return "a,b"
"""
LEGACY_TESTS = """\
from pkg.dates import legacy_parse_dates, make_sample, parse_dates


def test_legacy_agrees_with_current():
    assert legacy_parse_dates("a;b") == parse_dates(make_sample())
"""
PYTHON = {"pkg/__init__.py": "", "pkg/dates.py": DATES}


def test_a_legacy_function_deleted_with_the_file_named_after_it_passes(repo: GitRepo):
    """The test also calls `parse_dates`, which stays: a test-by-test reading keeps it, the
    file's name says what it is about."""
    files = {**PYTHON, "tests/test_legacy_parse_dates.py": LEGACY_TESTS}

    def change(r: GitRepo) -> None:
        r.write(
            "pkg/dates.py",
            DATES.replace('\n\ndef legacy_parse_dates(text):\n    return text.split(";")\n', ""),
        )
        r.write("tests/test_other.py", "def test_other():\n    assert True\n")
        r.remove("tests/test_legacy_parse_dates.py")

    assert tamper(repo, files, change) == []


def test_deleting_a_helper_does_not_free_a_file_named_after_code_that_stays(repo: GitRepo):
    """`test_parse_dates.py` is about `parse_dates`; deleting `make_sample`, which its test
    also calls, frees nothing."""
    tests = (
        LEGACY_TESTS.replace("legacy_parse_dates, ", "")
        .replace('legacy_parse_dates("a;b")', '["a", "b"]')
        .replace("test_legacy_agrees_with_current", "test_parse_dates")
    )
    files = {**PYTHON, "tests/test_parse_dates.py": tests}

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", DATES.split("\n\n\ndef make_sample")[0] + "\n")
        r.remove("tests/test_parse_dates.py")

    assert tamper(repo, files, change) == ["tests/test_parse_dates.py:None test file deleted"]


COOKIE = """\
module Rack
  module Protection
    class EncryptedCookie
      def initialize(app)
        @app = app
      end
    end

    class Session
      def call(env)
        @app.call(env)
      end
    end
  end
end
"""
COOKIE_SPEC = """\
describe Rack::Protection::EncryptedCookie do
  it 'wraps the app' do
    cookie = Rack::Protection::EncryptedCookie.new(app)
    expect(Rack::Protection::Session.new.call(cookie)).to eq(200)
  end
end
"""


def test_a_class_deleted_with_its_snake_case_spec_file_passes(repo: GitRepo):
    files = {"lib/rack/protection.rb": COOKIE, "spec/encrypted_cookie_spec.rb": COOKIE_SPEC}

    def change(r: GitRepo) -> None:
        r.write(
            "lib/rack/protection.rb",
            COOKIE.replace(
                "    class EncryptedCookie\n      def initialize(app)\n        @app = app\n"
                "      end\n    end\n\n",
                "",
            ),
        )
        r.remove("spec/encrypted_cookie_spec.rb")

    assert tamper(repo, files, change) == []


def test_a_test_in_the_file_that_does_not_use_the_subject_is_still_reported(repo: GitRepo):
    """Red-team: `markdown` deleted with `test_markdown.py`, whose other test checks `render`,
    which stays. Only the tests that use `markdown` go with it."""
    code = (
        "def markdown(text):\n    return '<p>' + text + '</p>'\n\n\n"
        "def render(page):\n    return page.upper()\n"
    )
    tests = (
        "from site import markdown, render\n\n\n"
        "def test_markdown():\n    assert markdown('a') == '<p>a</p>'\n\n\n"
        "def test_render():\n    assert render('a') == 'A'\n"
    )
    files = {"site/__init__.py": code, "tests/test_markdown.py": tests}

    def change(r: GitRepo) -> None:
        r.write("site/__init__.py", "def render(page):\n    return page.upper()\n")
        r.remove("tests/test_markdown.py")

    assert tamper(repo, files, change) == ["tests/test_markdown.py:None test file deleted"]
