"""`test-tamper` on Ruby: what a Ruby test's names are (parameters are locals, symbols are
values), minitest's `def test_...` methods, and a test removed with a class whose namespaces
(`module Rack`) the deleted file opened. Every case but the readers' runs the real rule over a
real git repository."""

from __future__ import annotations

from app.guards.tamper.code_names import references
from tests.guards.conftest import GitRepo, tamper

# -- what a Ruby test's names are --------------------------------------------------------


def test_a_ruby_parameter_is_a_local_unless_called_with_parentheses():
    found = references(
        [
            "def creole_app(&block)",
            "  mock_app do",
            "    get('/', &block)",
            "  end",
            "  [1].each { |item, (left, right); scratch| item.render_with(scratch) }",
            "end",
        ],
        "test/creole_test.rb",
    )
    assert {"block", "item", "left", "right", "scratch"}.isdisjoint(found.exercised)
    assert {"mock_app", "render_with"} <= found.exercised
    # `block(1)` calls a method even where a local of that name exists.
    called = references(["def helper(block)", "  block(1)", "end"], "test/a_test.rb")
    assert "block" in called.exercised


def test_a_ruby_symbol_names_a_value_and_runs_nothing():
    found = references(
        [
            "it 'renders with file layouts' do",
            "  creole 'Hello', :layout => :layout2, layout_engine: :erb",
            "  assert_equal Rack::Protection::Encryptor, Sinatra::Base.render_layout",
            "  value = enabled ? fallback_value : other_value",
            "end",
        ],
        "test/creole_test.rb",
    )
    assert {"layout", "layout2", "layout_engine"} <= found.named
    assert {"layout", "layout2", "layout_engine"}.isdisjoint(found.exercised)
    # `::` is a scope, and a ternary's `:` no symbol.
    assert {"Rack", "Protection", "Encryptor", "render_layout", "fallback_value"} <= (
        found.exercised
    )
    assert {"other_value", "creole"} <= found.exercised


# -- a template engine removed with its tests ---------------------------------------------

BASE_RB = """\
module Sinatra
  module Templates
    def erb(template)
      render :erb, template
    end

    def creole(template, options = {})
      render :creole, template, options
    end

    def render_layout(name)
      render :layout, name
    end
  end

  class Base
    def views
      settings.views
    end

    def block
      @block
    end
  end
end
"""
HELPER_RB = """\
class Minitest::Test
  def mock_app(&block)
    @app = Sinatra.new(&block)
  end
end
"""
CREOLE_TEST = """\
require File.expand_path('helper', __dir__)

class CreoleTest < Minitest::Test
  def creole_app(&block)
    mock_app do
      set :views, __dir__ + '/views'
      get('/', &block)
    end
    get '/'
  end

  it 'renders inline creole strings' do
    creole_app { creole '= Hiya' }
    assert_body "<h1>Hiya</h1>"
  end

  it 'renders .creole files in views path' do
    creole_app { creole :hello, :views => :elsewhere }
    assert_body "<h1>Hello From Creole</h1>"
  end
end
"""
ENGINE_FILES = {
    "lib/sinatra/base.rb": BASE_RB,
    "test/helper.rb": HELPER_RB,
    "test/erb_test.rb": "class ErbTest < Minitest::Test\n  it 'renders' do\n"
    "    assert_equal 'x', erb('x')\n  end\nend\n",
}


# A test file not named after the engine: its tests are judged one by one (a file named
# after a subject that is gone goes with it whole, see test_tamper_file_subjects), and none
# of them, nor its class, is named after the engine either (a test named after a gone
# subject goes with it: test_tamper_named_tests).
MARKUP_TEST = "test/markup_test.rb"


def _unnamed(test: str) -> str:
    return (
        test.replace("CreoleTest", "MarkupTest")
        .replace("inline creole strings", "inline strings")
        .replace(".creole files", "files")
    )


def _drop_creole(r: GitRepo, test: str = "test/creole_test.rb") -> None:
    r.write(
        "lib/sinatra/base.rb",
        BASE_RB.replace(
            "    def creole(template, options = {})\n"
            "      render :creole, template, options\n    end\n\n",
            "",
        ),
    )
    r.remove(test)


def test_a_template_engine_removed_with_its_test_file_passes(repo: GitRepo):
    """`block` is the helper's parameter and `:views` a symbol: neither is the project's
    `Base#block` or `Base#views`, which stay."""
    files = {**ENGINE_FILES, "test/creole_test.rb": CREOLE_TEST}
    assert tamper(repo, files, _drop_creole) == []


def test_an_engine_test_that_also_exercises_code_that_stays_is_still_reported(repo: GitRepo):
    """The other definitions a removed test exercises still hold it: `render_layout` stays."""
    test = CREOLE_TEST.replace(
        '    assert_body "<h1>Hiya</h1>"\n',
        '    assert_body "<h1>Hiya</h1>"\n    assert render_layout(:main)\n',
    )
    files = {**ENGINE_FILES, MARKUP_TEST: _unnamed(test)}
    found = tamper(repo, files, lambda r: _drop_creole(r, MARKUP_TEST))
    assert found == [f"{MARKUP_TEST}:None test file deleted"]


def test_a_parameter_does_not_hide_the_same_name_called_with_parentheses(repo: GitRepo):
    test = CREOLE_TEST.replace(
        "      get('/', &block)\n", "      get('/', &block)\n      block()\n"
    )
    files = {**ENGINE_FILES, MARKUP_TEST: _unnamed(test)}
    found = tamper(repo, files, lambda r: _drop_creole(r, MARKUP_TEST))
    assert found == [f"{MARKUP_TEST}:None test file deleted"]


# -- minitest's `def test_...` ------------------------------------------------------------

START_TEST = """\
class IntegrationStartTest < Minitest::Test
  def test_classic_app_start
    assert wait_for_output(start_app, /has taken the stage/)
  end
end
"""


def test_a_new_minitest_method_that_skips_is_no_skip_added_to_a_test(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write(
            "test/integration_start_test.rb",
            START_TEST.replace(
                "  def test_classic_app_start\n",
                "  def test_app_start_without_rackup\n"
                "    skip 'So much work to run with rack head' if ENV['rack'] == 'head'\n\n"
                "    assert wait_for_output(start_app, /could not start/)\n  end\n\n"
                "  def test_classic_app_start\n",
            ),
        )

    assert tamper(repo, {"test/integration_start_test.rb": START_TEST}, change) == []


def test_a_skip_added_to_an_existing_minitest_method_is_reported(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write(
            "test/integration_start_test.rb",
            START_TEST.replace(
                "  def test_classic_app_start\n",
                "  def test_classic_app_start\n    skip 'flaky' if ENV['CI']\n",
            ),
        )

    found = tamper(repo, {"test/integration_start_test.rb": START_TEST}, change)
    assert found == ["test/integration_start_test.rb:3 skip marker added inside a test"]


def test_a_removed_minitest_method_is_a_removed_test(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write(
            "test/integration_start_test.rb",
            "class IntegrationStartTest < Minitest::Test\nend\n",
        )

    found = tamper(repo, {"test/integration_start_test.rb": START_TEST}, change)
    assert found == ["test/integration_start_test.rb:2 test 'test_classic_app_start' removed"]


# -- a class removed from the namespaces its file opened -----------------------------------

PROTECTION_RB = """\
module Rack
  module Protection
    autoload :AuthenticityToken, 'rack/protection/authenticity_token'
    autoload :EncryptedCookie, 'rack/protection/encrypted_cookie'
  end
end
"""
TOKEN_RB = """\
require 'base64'

module Rack
  module Protection
    class AuthenticityToken
      def encode_token(token)
        Base64.urlsafe_encode64(token)
      end
    end
  end
end
"""
COOKIE_RB = """\
require 'base64'

module Rack
  module Protection
    class EncryptedCookie
      class Base64
        def encode_cookie(value)
          ::Base64.strict_encode64(value)
        end
      end

      def load_session(request)
        request.cookies.fetch('rack.session', nil)
      end
    end
  end
end
"""
COOKIE_SPEC = """\
RSpec.describe Rack::Protection::EncryptedCookie do
  it 'encodes cookies' do
    coder = Rack::Protection::EncryptedCookie::Base64::JSON.new
    expect(coder.encode_cookie('x')).to eq('eA==')
  end
end
"""
COOKIE_FILES = {
    "lib/rack/protection.rb": PROTECTION_RB,
    "lib/rack/protection/authenticity_token.rb": TOKEN_RB,
    "lib/rack/protection/encrypted_cookie.rb": COOKIE_RB,
    "spec/lib/rack/protection/authenticity_token_spec.rb": (
        "RSpec.describe Rack::Protection::AuthenticityToken do\n"
        "  it 'encodes' do\n"
        "    expect(Rack::Protection::AuthenticityToken.new.encode_token('x')).to eq('eA==')\n"
        "  end\nend\n"
    ),
}


# Likewise a spec not named after the class it tests, nor described by it.
CODER_SPEC = "spec/lib/rack/protection/cookie_coder_spec.rb"
UNNAMED_SPEC = COOKIE_SPEC.replace("Rack::Protection::EncryptedCookie do", "'cookie coding' do")


def _drop_cookie(
    r: GitRepo, spec: str = "spec/lib/rack/protection/encrypted_cookie_spec.rb"
) -> None:
    r.remove("lib/rack/protection/encrypted_cookie.rb")
    r.remove(spec)
    r.write(
        "lib/rack/protection.rb",
        PROTECTION_RB.replace(
            "    autoload :EncryptedCookie, 'rack/protection/encrypted_cookie'\n", ""
        ),
    )


def test_a_class_removed_with_its_spec_passes_though_its_namespaces_stay(repo: GitRepo):
    """The deleted file opened `module Rack` and `module Protection`, which live on: they
    are the namespaces the gone `EncryptedCookie` was in, and its nested `Base64` went with
    it, whatever else (the standard library's `Base64`) the project uses by that name."""
    files = {**COOKIE_FILES, "spec/lib/rack/protection/encrypted_cookie_spec.rb": COOKIE_SPEC}
    assert tamper(repo, files, _drop_cookie) == []


def test_a_spec_that_also_exercises_a_class_that_stays_is_still_reported(repo: GitRepo):
    spec = UNNAMED_SPEC.replace(
        "    expect(coder.encode_cookie('x')).to eq('eA==')\n",
        "    expect(coder.encode_cookie('x')).to eq(AuthenticityToken.new.encode_token('x'))\n",
    )
    files = {**COOKIE_FILES, CODER_SPEC: spec}
    found = tamper(repo, files, lambda r: _drop_cookie(r, CODER_SPEC))
    assert found == [f"{CODER_SPEC}:None test file deleted"]


def test_a_class_deleted_beside_the_subject_that_lives_on_still_holds_the_test(repo: GitRepo):
    """`Session`, deleted from the same file but not around the gone class, is defined
    elsewhere and stays: a test that exercises it is not set aside."""
    cookie = COOKIE_RB.replace(
        "module Rack\n", "class Session\n  def restore\n    nil\n  end\nend\n\nmodule Rack\n"
    )
    spec = COOKIE_SPEC.replace("    expect(coder", "    Session.new.restore\n    expect(coder")
    files = {
        **COOKIE_FILES,
        "lib/rack/protection/encrypted_cookie.rb": cookie,
        "lib/rack/session.rb": "class Session\n  def restore\n    :restored\n  end\nend\n",
        CODER_SPEC: spec,
    }
    found = tamper(repo, files, lambda r: _drop_cookie(r, CODER_SPEC))
    assert found == [f"{CODER_SPEC}:None test file deleted"]
