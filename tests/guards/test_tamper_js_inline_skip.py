"""`test-tamper` and a JavaScript test whose function is chosen in place between the test
function and its `.skip` (koa's `(/^v18\\./.test(process.version) ? it.skip : it)('should handle
socket errors', ...)`), and vitest's `it.skipIf(cond)(...)` / `it.runIf(cond)(...)`, which is
how the rule spells such a choice.

A choice that picks the plain function on Linux is that function (as a declared alias is); any
other is a skip whose condition may hold where the suite runs: reported as a skip marker added
when it is put on a test that existed, never as the test removed. Such a test runs wherever the
condition does not hold, so deleting it is still a removal (before, a test so defined was no
test at all, and deleting it was not reported)."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tampered

PATH = "__tests__/application/index.test.js"
HEAD = "const Koa = require('../..')\n\ndescribe('app', () => {\n"
SOCKET = (
    "{opener}('should handle socket errors', (t, done) => {{\n"
    "    const app = new Koa()\n"
    "    app.on('error', err => {{\n"
    "      assert.strictEqual(err.message, 'boom')\n"
    "      done()\n"
    "    }})\n"
    "  }})\n"
)
ENV = (
    "  it('should set development env when NODE_ENV missing', () => {\n"
    "    assert.strictEqual(new Koa().env, 'development')\n"
    "  })\n"
)


def suite(opener: str, *, socket: bool = True) -> str:
    tests = "  " + SOCKET.format(opener=opener) + "\n" if socket else ""
    return HEAD + tests + ENV + "})\n"


def messages(found: list[tuple[str | None, int | None, str]]) -> list[str]:
    return [message for _, _, message in found]


NODE18 = "/^v18\\./.test(process.version)"
WINDOWS = "process.platform === 'win32'"


# -- the fixes ---------------------------------------------------------------------------------


def test_a_node_version_skip_written_in_place_is_a_skip_not_a_removal(repo: GitRepo):
    # Reported before as "test 'should handle socket errors' removed". Node 18 is a
    # version koa supported then, so the skip may hold where the suite runs: still reported.
    after = suite(f"({NODE18} ? it.skip : it)")
    found = tampered(repo, {PATH: suite("it")}, lambda r: r.write(PATH, after))
    assert messages(found) == ["skip marker added to a test"]


@pytest.mark.parametrize(
    "opener",
    [
        f"({WINDOWS} ? it.skip : it)",
        "(process.platform !== 'win32' ? it : it.skip)",
        f"it.skipIf({WINDOWS})",
        "it.runIf(process.platform !== 'darwin')",
    ],
)
def test_a_skip_only_off_linux_written_in_place_passes(repo: GitRepo, opener: str):
    found = tampered(repo, {PATH: suite("it")}, lambda r: r.write(PATH, suite(opener)))
    assert found == []


def test_a_test_edited_under_an_unchanged_inline_skip_passes(repo: GitRepo):
    # The header's callback rewritten under the same choice.
    before = suite(f"({NODE18} ? it.skip : it)").replace("(t, done)", "done")
    after = suite(f"({NODE18} ? it.skip : it)")
    assert tampered(repo, {PATH: before}, lambda r: r.write(PATH, after)) == []


def test_a_new_test_skipped_in_place_passes(repo: GitRepo):
    before = suite("it", socket=False)
    after = suite(f"({NODE18} ? it.skip : it)")
    assert tampered(repo, {PATH: before}, lambda r: r.write(PATH, after)) == []


# -- the tampering variants, still reported ----------------------------------------------------


@pytest.mark.parametrize(
    "opener",
    [
        f"({NODE18} ? it.skip : it)",
        f"({WINDOWS} ? it.skip : it)",
        f"it.skipIf({NODE18})",
        "it.runIf(process.env.CI)",
    ],
)
def test_deleting_a_test_defined_with_a_skip_choice_is_a_removal(repo: GitRepo, opener: str):
    before = suite(opener)
    after = suite(opener, socket=False)
    found = tampered(repo, {PATH: before}, lambda r: r.write(PATH, after))
    assert messages(found) == ["test 'should handle socket errors' removed"]


@pytest.mark.parametrize(
    "opener",
    [
        "(process.env.CI ? it.skip : it)",
        "(process.platform === 'linux' ? it.skip : it)",
        "(true ? it.skip : it)",
        "(process.platform === 'win32' ? it : it.skip)",
        "it.skipIf(process.platform !== 'win32')",
        "it.runIf(process.env.SLOW)",
    ],
)
def test_a_skip_that_may_hold_on_linux_written_in_place_is_reported(repo: GitRepo, opener: str):
    found = tampered(repo, {PATH: suite("it")}, lambda r: r.write(PATH, suite(opener)))
    assert messages(found) == ["skip marker added to a test"]


def test_a_suite_skipped_in_place_around_existing_tests_is_reported(repo: GitRepo):
    before = suite("it")
    after = before.replace("describe('app',", f"({NODE18} ? describe.skip : describe)('app',")
    found = tampered(repo, {PATH: before}, lambda r: r.write(PATH, after))
    assert messages(found) == ["skip marker added to a test"]


def test_an_unconditional_skip_replacing_an_inline_one_is_reported(repo: GitRepo):
    before = suite(f"({WINDOWS} ? it.skip : it)")
    found = tampered(repo, {PATH: before}, lambda r: r.write(PATH, suite("it.skip")))
    assert messages(found) == ["skip marker added to a test"]


def test_a_choice_with_another_function_is_left_as_it_is(repo: GitRepo):
    # `it.only` focuses the run; a choice between it and `it` is no skip we can read.
    after = suite(f"({NODE18} ? it.only : it)")
    found = tampered(repo, {PATH: suite("it")}, lambda r: r.write(PATH, after))
    assert "test 'should handle socket errors' removed" in messages(found)


def test_a_test_moved_to_another_file_under_an_inline_skip_is_reported(repo: GitRepo):
    other = "__tests__/application/socket.test.js"

    def change(r: GitRepo) -> None:
        r.write(PATH, suite("it", socket=False))
        r.write(other, suite(f"({NODE18} ? it.skip : it)").replace(ENV, ""))

    found = tampered(repo, {PATH: suite("it")}, change)
    assert messages(found) == ["skip marker added to a test"]


# -- red-team: a choice or an alias that is not what it looks like ------------------------


@pytest.mark.parametrize(
    ("prelude", "opener"),
    [
        # `process` is the file's own object, not Node's: its platform says what the file wants.
        ("const process = { platform: 'win32' }\n", f"({WINDOWS} ? it.skip : it)"),
        ("const process = { platform: 'win32' }\n", "skipOnWindows"),
        # The alias is reassigned by destructuring after its declaration.
        (";[skipOnWindows] = [it.skip]\n", "skipOnWindows"),
    ],
)
def test_a_choice_that_is_not_platform_only_is_reported(repo: GitRepo, prelude: str, opener: str):
    alias = f"let skipOnWindows = {WINDOWS} ? it.skip : it\n"
    after = alias + prelude + suite(opener)
    found = tampered(repo, {PATH: alias + suite("it")}, lambda r: r.write(PATH, after))
    assert found, after


def test_an_alias_shadowed_by_a_parameter_is_not_trusted(repo: GitRepo):
    alias = f"const skipOnWindows = {WINDOWS} ? it.skip : it\n"
    after = alias + suite("it", socket=False).replace(
        "describe('app', () => {\n",
        "describe('app', () => {\n  ;[it.skip].forEach((skipOnWindows) => {\n  "
        + SOCKET.format(opener="skipOnWindows")
        + "  })\n",
    )
    found = tampered(repo, {PATH: alias + suite("it")}, lambda r: r.write(PATH, after))
    assert found
