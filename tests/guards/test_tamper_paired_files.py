"""`test-tamper` with the whole trees: a deleted test file paired with a source file of the same
stem that the change deletes wholly (`jwt_test.go` with `jwt.go`, `ordered_hash_spec.rb` or
`spec_logger.rb` with `logger.rb`, `test_lru.py` with `lru.py`, `test/wrap.js` with
`lib/wrap.js`) goes with that file's code, when the source file is named after a definition of
its own that is gone from the head. Its tests that use a name the deleted file defined go with
it, whatever else they call. The code re-added elsewhere under the same names, renamed with its
callers, the source file renamed, a helper file deleted beside tests of code that stays, or the
test file deleted alone, are still reported. Every case runs the real rule over real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

# -- Go: echo's JWT middleware removed ------------------------------------------------------

ECHO_GO = """\
package echo

type Context struct{ names []string }

func NewContext() *Context { return &Context{} }

func (c *Context) SetParamNames(names ...string) { c.names = names }

func NewHTTPError(code int, message string) error { return nil }
"""
JWT_GO = """\
package middleware

import "example.com/echo"

// JWTConfig defines the config for JWT middleware.
type JWTConfig struct {
	SigningKey  []byte
	TokenLookup string
}

var ErrJWTMissing = echo.NewHTTPError(400, "missing or malformed jwt")

// JWT returns a JWT auth middleware.
func JWT(key []byte) func(*echo.Context) error {
	config := JWTConfig{SigningKey: key, TokenLookup: "header:Authorization"}
	return JWTWithConfig(config)
}

// JWTWithConfig returns a JWT auth middleware with config.
func JWTWithConfig(config JWTConfig) func(*echo.Context) error {
	return func(c *echo.Context) error {
		if len(config.SigningKey) == 0 {
			return ErrJWTMissing
		}
		return nil
	}
}
"""
JWT_TEST_GO = """\
package middleware

import (
	"testing"

	"example.com/echo"
)

func TestJWT(t *testing.T) {
	c := echo.NewContext()
	if err := JWT([]byte("secret"))(c); err != nil {
		t.Fatal(err)
	}
}

func TestJWTWithConfig(t *testing.T) {
	c := echo.NewContext()
	c.SetParamNames("id")
	h := JWTWithConfig(JWTConfig{TokenLookup: "header:x"})
	if err := h(c); err != ErrJWTMissing {
		t.Fatal(err)
	}
}
"""
EXTRACTOR_GO = """\
package middleware

// valuesFromHeader reads a header: backwards compatibility for JWT and KeyAuth.
func valuesFromHeader(name string) []string {
	return []string{name}
}
"""
ECHO = {
    "go.mod": "module example.com/echo\n",
    "echo.go": ECHO_GO,
    "middleware/jwt.go": JWT_GO,
    "middleware/jwt_test.go": JWT_TEST_GO,
    "middleware/extractor.go": EXTRACTOR_GO,
}
JWT_DELETED = "middleware/jwt_test.go:None test file deleted"


def _drop_jwt(r: GitRepo) -> None:
    r.remove("middleware/jwt.go")
    r.remove("middleware/jwt_test.go")


def test_a_middleware_deleted_with_its_test_file_passes(repo: GitRepo):
    """`JWT` is too short to be distinctive, and the tests also call
    `NewContext` and `SetParamNames`, which stay; `jwt.go` is gone and so is every name it
    defined (a comment in `extractor.go` still says "JWT", which provides nothing)."""
    assert tamper(repo, ECHO, _drop_jwt) == []


def test_only_the_test_file_deleted_is_still_reported(repo: GitRepo):
    assert tamper(repo, ECHO, lambda r: r.remove("middleware/jwt_test.go")) == [JWT_DELETED]


def test_the_source_file_renamed_is_still_reported(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.move("middleware/jwt.go", "middleware/auth.go")
        r.remove("middleware/jwt_test.go")

    assert tamper(repo, ECHO, change) == [JWT_DELETED]


def test_the_source_lines_added_back_elsewhere_are_still_reported(repo: GitRepo):
    """The file's code pasted into another file, its names changed: a move, not a removal."""

    def change(r: GitRepo) -> None:
        _drop_jwt(r)
        r.write("middleware/auth.go", JWT_GO.replace("JWT", "Token") + "\nvar unused = 1\n")

    assert tamper(repo, ECHO, change) == [JWT_DELETED]


REWRITTEN_GO = """\
package middleware

import "example.com/echo"

type JWTConfig struct {
	Key []byte
}

var ErrJWTMissing = echo.NewHTTPError(401, "no token")

func JWT(key []byte) func(*echo.Context) error { return JWTWithConfig(JWTConfig{Key: key}) }

func JWTWithConfig(cfg JWTConfig) func(*echo.Context) error {
	return func(*echo.Context) error { return ErrJWTMissing }
}
"""


def test_the_functions_rewritten_in_another_file_are_still_reported(repo: GitRepo):
    """Red-team: `jwt.go` deleted, its names defined again (rewritten) in `auth.go`."""

    def change(r: GitRepo) -> None:
        _drop_jwt(r)
        r.write("middleware/auth.go", REWRITTEN_GO)

    assert tamper(repo, ECHO, change) == [JWT_DELETED]


def test_one_function_rewritten_elsewhere_keeps_the_tests_that_use_it(repo: GitRepo):
    """Red-team: `JWTWithConfig` (with its config) lives on, rewritten; `JWT` and
    `ErrJWTMissing` are gone. `TestJWTWithConfig` uses a gone name, but also exercises code of
    the deleted file that stays, so the file is still reported."""
    rewritten = (
        'package middleware\n\nimport "example.com/echo"\n\n'
        "type JWTConfig struct {\n\tKey []byte\n}\n\n"
        "func JWTWithConfig(cfg JWTConfig) func(*echo.Context) error {\n"
        "\treturn func(*echo.Context) error { return nil }\n}\n"
    )

    def change(r: GitRepo) -> None:
        _drop_jwt(r)
        r.write("middleware/auth.go", rewritten)

    assert tamper(repo, ECHO, change) == [JWT_DELETED]


def test_a_one_line_definition_renamed_elsewhere_keeps_its_tests(repo: GitRepo):
    """Red-team: `ErrJWTMissing` has no body to compare; its line comes back in another file
    under another name, so it lives on, and the test that uses it stays reported."""
    line = 'var ErrTokenMissing = echo.NewHTTPError(400, "missing or malformed jwt")\n'

    def change(r: GitRepo) -> None:
        _drop_jwt(r)
        r.write(
            "middleware/errors.go", 'package middleware\n\nimport "example.com/echo"\n\n' + line
        )

    assert tamper(repo, ECHO, change) == [JWT_DELETED]


def test_a_use_left_in_code_keeps_the_name(repo: GitRepo):
    """A comment provides nothing; a call still in the code does (something must define it)."""

    def change(r: GitRepo) -> None:
        _drop_jwt(r)
        r.write("middleware/server.go", 'package middleware\n\nvar mw = JWT([]byte("k"))\n')

    files = {**ECHO, "middleware/server.go": "package middleware\n"}
    assert tamper(repo, files, change) == [JWT_DELETED]


def test_the_subject_renamed_with_its_callers_is_still_reported(repo: GitRepo):
    """Red-team: `JWT` rewritten as `Token` in another file, and its caller retargeted."""
    caller = 'package middleware\n\nfunc defaults() {\n\t_ = JWT([]byte("secret-key"))\n}\n'

    def change(r: GitRepo) -> None:
        _drop_jwt(r)
        r.write("middleware/defaults.go", caller.replace("JWT(", "Token("))
        r.write(
            "middleware/token.go",
            "package middleware\n\nfunc Token(k []byte) func(*echo.Context) error { return nil }\n",
        )

    files = {**ECHO, "middleware/defaults.go": caller}
    assert tamper(repo, files, change) == [JWT_DELETED]


STRINGS_GO = "package middleware\n\nfunc Reverse(s string) string {\n\treturn s\n}\n"
UTIL_GO = (
    "package middleware\n\nfunc padLeft(s string, width int) string {\n"
    '\tfor len(s) < width {\n\t\ts = " " + s\n\t}\n\treturn s\n}\n'
)
UTIL_TEST_GO = """\
package middleware

import "testing"

func TestReverse(t *testing.T) {
	if Reverse("ab") != "ba" {
		t.Fatal(REPLACE)
	}
}
"""


def _drop_util(r: GitRepo) -> None:
    r.remove("middleware/util.go")
    r.remove("middleware/util_test.go")


def test_a_small_file_deleted_beside_tests_of_code_that_stays_is_reported(repo: GitRepo):
    """Red-team: `util.go` deleted with `util_test.go`, whose test checks `Reverse`, which
    stays; the test uses nothing `util.go` defined."""
    files = {
        "middleware/strings.go": STRINGS_GO,
        "middleware/util.go": UTIL_GO,
        "middleware/util_test.go": UTIL_TEST_GO.replace("REPLACE", '"reversed"'),
    }
    found = tamper(repo, files, _drop_util)
    assert found == ["middleware/util_test.go:None test file deleted"]


def test_a_helper_file_deleted_beside_tests_that_call_it_is_reported(repo: GitRepo):
    """Red-team: the test of `Reverse` also calls `padLeft`, from the deleted `util.go`; but
    `util.go` is not named after anything it defines (a file of helpers, not of a subject),
    so the pairing frees nothing."""
    files = {
        "middleware/strings.go": STRINGS_GO,
        "middleware/util.go": UTIL_GO,
        "middleware/util_test.go": UTIL_TEST_GO.replace("REPLACE", 'padLeft("x", 3)'),
    }
    found = tamper(repo, files, _drop_util)
    assert found == ["middleware/util_test.go:None test file deleted"]


PAD_GO = """\
package middleware

// Pad pads strings to a width.
type Pad struct{ Width int }

func (p Pad) Left(s string) string {
	for len(s) < p.Width {
		s = " " + s
	}
	return s
}
"""
PAD_TEST_GO = """\
package middleware

import "testing"

func TestReverse(t *testing.T) {
	if Reverse(Pad{Width: 2}.Left("ab")) != "ba" {
		t.Fatal("reversed")
	}
}
"""


def test_a_test_of_other_code_that_builds_a_gone_helper_is_reported(repo: GitRepo):
    """Red-team: `pad.go` (named after its `Pad`) deleted with `pad_test.go`, whose test checks
    `Reverse`, which stays, and only builds a `Pad` on the way. The test is not named after
    the file, so it is not the file's test: the file's going does not take it along."""
    files = {
        "middleware/strings.go": STRINGS_GO,
        "middleware/pad.go": PAD_GO,
        "middleware/pad_test.go": PAD_TEST_GO,
    }

    def change(r: GitRepo) -> None:
        r.remove("middleware/pad.go")
        r.remove("middleware/pad_test.go")

    assert tamper(repo, files, change) == ["middleware/pad_test.go:None test file deleted"]


# -- Ruby: thor's OrderedHash, replaced by the built-in Hash --------------------------------

ORDERED_HASH_RB = """\
class Thor
  module CoreExt
    class OrderedHash < ::Hash
      if RUBY_VERSION < "1.9"
        def initialize(*args, &block)
          super
          @keys = []
        end

        def keys
          @keys.dup
        end

        def shift_pair
          k = @keys.first
          [k, delete(k)]
        end
      end
    end
  end
end
"""
ARGUMENTS_RB = """\
class Thor
  class Arguments
    def shift_pair
      @pile.shift(2)
    end
  end
end
"""
BASE_RB = """\
require "thor/core_ext/ordered_hash"

class Thor
  module Base
    # Returns the commands for this Thor class.
    #
    # OrderedHash:: An ordered hash with commands names as keys
    #
    def commands
      @commands ||= Thor::CoreExt::OrderedHash.new
    end
  end
end
"""
ORDERED_HASH_SPEC = """\
require "helper"

describe Thor::CoreExt::OrderedHash do
  subject { Thor::CoreExt::OrderedHash.new }

  describe "#initialize" do
    it "is empty" do
      expect(subject).to be_empty
    end
  end

  describe "#keys" do
    it "returns the keys in order of insertion" do
      subject[:foo] = "Foo!"
      expect(subject.keys).to eq [:foo]
    end
  end

  describe "#shift_pair" do
    it "pops the first key/value" do
      subject[:foo] = "Foo!"
      expect(subject.shift_pair).to eq [:foo, "Foo!"]
    end
  end
end
"""
THOR = {
    "lib/thor.rb": "class Thor\n  def self.start(argv)\n    argv\n  end\nend\n",
    "lib/thor/base.rb": BASE_RB,
    "lib/thor/parser/arguments.rb": ARGUMENTS_RB,
    "lib/thor/core_ext/ordered_hash.rb": ORDERED_HASH_RB,
    "spec/core_ext/ordered_hash_spec.rb": ORDERED_HASH_SPEC,
}


def _drop_ordered_hash(r: GitRepo) -> None:
    r.remove("lib/thor/core_ext/ordered_hash.rb")
    r.remove("spec/core_ext/ordered_hash_spec.rb")
    r.write(
        "lib/thor/base.rb",
        BASE_RB.replace('require "thor/core_ext/ordered_hash"\n\n', "")
        .replace("# OrderedHash::", "# Hash::")
        .replace("Thor::CoreExt::OrderedHash.new", "Hash.new"),
    )


def test_a_class_replaced_by_a_builtin_goes_with_its_spec(repo: GitRepo):
    """`OrderedHash` gives way to Ruby's own `Hash` (a doc comment says
    `Hash::` where it said `OrderedHash::`, which is no rename to project code). The specs
    reach it through the `describe` around them; `Thor` and `CoreExt`, which the deleted file
    only opened, live on, and so does another class's `shift_pair`, which is not its code."""
    assert tamper(repo, THOR, _drop_ordered_hash) == []


@pytest.mark.parametrize(
    "definition",
    ["def shift_pair\n      [1, 2]\n    end", "define_method(:shift_pair) { [1, 2] }"],
)
def test_a_method_of_the_class_defined_anew_keeps_its_spec(repo: GitRepo, definition: str):
    """Red-team: `OrderedHash` goes, but the change writes its `shift_pair` again in a class
    of its own (or defines it by name): the code the spec tested lives on there."""

    def change(r: GitRepo) -> None:
        _drop_ordered_hash(r)
        r.write("lib/thor/pairs.rb", f"class Thor\n  class Pairs\n    {definition}\n  end\nend\n")

    found = tamper(repo, THOR, change)
    assert found == ["spec/core_ext/ordered_hash_spec.rb:None test file deleted"]


def test_a_class_replaced_by_a_project_class_keeps_its_spec(repo: GitRepo):
    """Red-team: the same, but `OrderedHash` gives way to `InsertionHash`, project code the
    change adds: the behaviour lives on under that name."""
    added = (
        "class Thor\n  class InsertionHash < ::Hash\n    def order\n      keys\n"
        "    end\n  end\nend\n"
    )

    def change(r: GitRepo) -> None:
        r.remove("lib/thor/core_ext/ordered_hash.rb")
        r.remove("spec/core_ext/ordered_hash_spec.rb")
        r.write("lib/thor/insertion_hash.rb", added)
        r.write(
            "lib/thor/base.rb",
            BASE_RB.replace("# OrderedHash::", "# InsertionHash::").replace(
                "Thor::CoreExt::OrderedHash.new", "InsertionHash.new"
            ),
        )

    found = tamper(repo, THOR, change)
    assert found == ["spec/core_ext/ordered_hash_spec.rb:None test file deleted"]


# -- Ruby: rack's Rack::Logger, its autoload left behind ------------------------------------

RACK_RB = """\
module Rack
  autoload :CommonLogger, "rack/common_logger"
  autoload :Lint, "rack/lint"
  autoload :Logger, "rack/logger"
end
"""
LOGGER_RB = """\
require 'logger'

module Rack
  # Sets up rack.logger to write to rack.errors stream
  class Logger
    def initialize(app, level = ::Logger::INFO)
      @app, @level = app, level
    end

    def call(env)
      logger = ::Logger.new(env['rack.errors'])
      logger.level = @level
      env['rack.logger'] = logger
      @app.call(env)
    end
  end
end
"""
COMMON_LOGGER_RB = """\
module Rack
  class CommonLogger
    # +logger+ can be any object that supports the +write+ or +<<+ methods,
    # which includes the standard library Logger.
    def initialize(app, logger = nil)
      @app, @logger = app, logger
    end
  end
end
"""
SPEC_LOGGER = """\
require_relative 'helper'

describe Rack::Logger do
  it "conform to Rack::Lint" do
    errors = StringIO.new
    a = Rack::Lint.new(Rack::Logger.new(app))
    Rack::MockRequest.new(a).get('/', 'rack.errors' => errors)
    errors.string.must_match(/INFO -- : Program started/)
  end
end
"""
RACK = {
    "lib/rack.rb": RACK_RB,
    "lib/rack/logger.rb": LOGGER_RB,
    "lib/rack/common_logger.rb": COMMON_LOGGER_RB,
    "lib/rack/lint.rb": "module Rack\n  class Lint\n    def initialize(app)\n      @app = app\n"
    "    end\n  end\nend\n",
    "test/spec_logger.rb": SPEC_LOGGER,
}
LOGGER_DELETED = "test/spec_logger.rb:None test file deleted"


def _drop_logger(r: GitRepo) -> None:
    r.remove("lib/rack/logger.rb")
    r.remove("test/spec_logger.rb")
    r.write("CHANGELOG.md", "- `Rack::Logger` is removed with no replacement.\n")


def test_a_middleware_whose_autoload_is_left_behind_goes_with_its_spec(repo: GitRepo):
    """`autoload :Logger, "rack/logger"` stays, pointing at the deleted
    file (it provides nothing: using it fails to load); a comment mentions the standard
    library's Logger; the test also calls `Rack::Lint`, which stays."""
    assert tamper(repo, RACK, _drop_logger) == []


def test_an_autoload_whose_file_still_exists_keeps_the_name(repo: GitRepo):
    """Red-team: the autoload's path is found at the head under another load path root, by
    code that builds the constant in a way no line names: the autoload still provides it."""

    def change(r: GitRepo) -> None:
        _drop_logger(r)
        built = "module Rack\n  const_set(%w[Log ger].join, Class.new)\nend\n"
        r.write("ext/rack/logger.rb", built)

    assert tamper(repo, RACK, change) == [LOGGER_DELETED]


def test_an_autoload_of_another_file_keeps_the_name(repo: GitRepo):
    def change(r: GitRepo) -> None:
        _drop_logger(r)
        r.write("lib/rack.rb", RACK_RB.replace('"rack/logger"', '"rack/logging"'))

    assert tamper(repo, RACK, change) == [LOGGER_DELETED]


def test_the_class_rewritten_in_another_file_keeps_its_spec(repo: GitRepo):
    def change(r: GitRepo) -> None:
        _drop_logger(r)
        r.write(
            "lib/rack/logging.rb",
            "module Rack\n  class Logger\n    def initialize(app, level = 1)\n"
            "      @app = app\n    end\n  end\nend\n",
        )

    assert tamper(repo, RACK, change) == [LOGGER_DELETED]


# -- Python: a class too short to be distinctive ------------------------------------------

LRU_PY = """\
from collections import OrderedDict


class LRU:
    def __init__(self, size, store):
        self.size = size
        self.store = store
        self.entries = OrderedDict()
"""
TEST_LRU = """\
from pkg.lru import LRU
from pkg.store import Store


def test_lru_keeps_its_size():
    cache = LRU(2, store=Store())
    assert cache.size == 2
"""
LRU_FILES = {
    "pkg/__init__.py": "from pkg.lru import LRU\n",
    "pkg/lru.py": LRU_PY,
    "pkg/store.py": "class Store:\n    def fetch(self, key):\n        return key\n",
    "tests/test_lru.py": TEST_LRU,
}


def test_a_python_module_deleted_with_its_test_module_passes(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.remove("pkg/lru.py")
        r.remove("tests/test_lru.py")
        r.write("pkg/__init__.py", "")

    assert tamper(repo, LRU_FILES, change) == []


def test_the_name_imported_from_elsewhere_keeps_its_tests(repo: GitRepo):
    """The package still exports `LRU`, imported from a library: the name lives on."""

    def change(r: GitRepo) -> None:
        r.remove("pkg/lru.py")
        r.remove("tests/test_lru.py")
        r.write("pkg/__init__.py", "from cachetools import LRUCache as LRU\n")

    assert tamper(repo, LRU_FILES, change) == ["tests/test_lru.py:None test file deleted"]


# -- JavaScript: a script under test/ named after the module it tests ----------------------

WRAP_JS = """\
function wrap(str, width) {
  return str.split(' ').join(width === 1 ? '\\n' : ' ');
}

module.exports = wrap;
"""
WRAP_TEST_JS = """\
const assert = require('assert');
const wrap = require('../lib/wrap');
const { Help } = require('../lib/help');

describe('wrap', () => {
  it('wraps long lines', () => {
    const help = new Help();
    assert.equal(wrap(help.formatHelp(' a b '), 1), 'a\\nb');
  });
});
"""
HELP_JS = """\
class Help {
  formatHelp(text) {
    return text.trim();
  }
}

module.exports = { Help };
"""


def test_a_module_deleted_with_the_mocha_script_named_after_it_passes(repo: GitRepo):
    files = {"lib/wrap.js": WRAP_JS, "lib/help.js": HELP_JS, "test/wrap.js": WRAP_TEST_JS}

    def change(r: GitRepo) -> None:
        r.remove("lib/wrap.js")
        r.remove("test/wrap.js")

    assert tamper(repo, files, change) == []
