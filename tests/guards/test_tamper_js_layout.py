"""`test-tamper` and how JavaScript tests are laid out and named: a test call split after its
`(` (Prettier's layout of a long call), a name with an escaped quote (`'don\\'t ...'`, read
whole, as Ruby's are), a test function under an alias of the file's own that
skips only off Linux (`testOrSkipOnWindows`), and a test file renamed between `.js`, `.cjs` and
`.mjs`. None of them removes a test; each of the real removals and skips next to them is still
reported."""

from __future__ import annotations

import pytest

from app.guards.tamper.lang import reader_for
from tests.guards.conftest import GitRepo, by_rule, diff_result, tamper, tampered


def messages(found: list[tuple[str | None, int | None, str]]) -> list[str]:
    return [message for _, _, message in found]


SIGNALS = "['SIGINT', 'SIGHUP', 'SIGTERM']"
ONE_LINE = (
    "const childProcess = require('child_process');\n\n"
    f"test.each({SIGNALS})('when program sent %s then subcommand sent signal too', (signal) => {{\n"
    "  const proc = childProcess.spawn('pm', ['listen']);\n"
    "  proc.kill(signal);\n"
    "  expect(proc.killed).toBe(true);\n"
    "});\n\n"
    "test('when subcommand exits then program exits', () => {\n"
    "  expect(childProcess.spawnSync('pm').status).toBe(0);\n"
    "});\n"
)
# The same file as Prettier lays it out: the call too long for one line, split after `(`.
SPLIT = (
    "const childProcess = require('child_process');\n\n"
    f"test.each({SIGNALS})(\n"
    "  'when program sent %s then subcommand sent signal too',\n"
    "  (signal) => {\n"
    "    const proc = childProcess.spawn('pm', ['listen']);\n"
    "    proc.kill(signal);\n"
    "    expect(proc.killed).toBe(true);\n"
    "  },\n"
    ");\n\n"
    "test('when subcommand exits then program exits', () => {\n"
    "  expect(childProcess.spawnSync('pm').status).toBe(0);\n"
    "});\n"
)
PATH = "tests/signals.test.js"


# -- a call split after its `(` --------------------------------------------------------------


def test_a_test_call_split_after_its_parenthesis_is_the_same_test(repo: GitRepo):
    assert tampered(repo, {PATH: ONE_LINE}, lambda r: r.write(PATH, SPLIT)) == []


def test_a_split_test_call_removed_is_still_removal(repo: GitRepo):
    without = SPLIT[: SPLIT.index("test.each")] + SPLIT[SPLIT.index("test('when subcommand") :]
    found = tampered(repo, {PATH: SPLIT}, lambda r: r.write(PATH, without))
    assert messages(found) == [
        "test 'when program sent %s then subcommand sent signal too' removed"
    ]


def test_a_skip_added_to_a_split_test_call_is_still_reported(repo: GitRepo):
    skipped = SPLIT.replace("test('when subcommand exits", "test.skip(\n  'when subcommand exits")
    skipped = skipped.replace(
        "exits then program exits', () => {", "exits then program exits',\n  () => {"
    )
    found = tampered(repo, {PATH: ONE_LINE}, lambda r: r.write(PATH, skipped))
    assert messages(found) == ["skip marker added to a test"]


def test_a_new_skipped_split_test_call_in_an_old_file_passes(repo: GitRepo):
    new = "\ntest.skip(\n  'when subcommand hangs then program times out',\n  () => {\n"
    new += "    expect(1).toBe(1);\n  },\n);\n"
    assert tampered(repo, {PATH: SPLIT}, lambda r: r.write(PATH, SPLIT + new)) == []


# -- names with escaped quotes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("test('don\\'t replace blue', t => {", "don't replace blue"),
        ("xit('don\\'t replace', () => {", "don't replace"),
        ('it("says \\"hi\\" twice", () => {', 'says "hi" twice'),
        ("test('ends in a backslash \\\\', () => {", "ends in a backslash \\"),
        ("  it 'doesn\\'t parse' do", "doesn't parse"),
        # The lines after the closing quote decide where a Ruby name ends.
        (
            '  it "respects priority #{global ? "globally" : "via config"}" do',
            'respects priority #{global ? "globally" : "via config"}',
        ),
    ],
)
def test_a_quoted_name_runs_to_the_first_quote_no_backslash_escapes(header: str, name: str):
    path = "spec/a_spec.rb" if header.rstrip().endswith(" do") else "test/a.test.js"
    assert reader_for(path).test_name(header) == name


def test_a_removed_test_whose_name_escapes_a_quote_is_reported_by_its_whole_name(repo: GitRepo):
    # The name was cut at the escaped quote, `don\`.
    kept = "test('detect a simple term', t => {\n\tt.is(blue('foo'), 'x');\n});\n"
    gone = "\ntest('don\\'t replace blue in xterm', t => {\n\tt.is(blue('foo'), 'y');\n});\n"
    found = tampered(
        repo, {"test/windows.js": kept + gone}, lambda r: r.write("test/windows.js", kept)
    )
    assert messages(found) == ['test "don\'t replace blue in xterm" removed']


# -- an alias that skips only off Linux ----------------------------------------------------------


def mock_tests(opener: str, *, split: bool = False) -> str:
    """Two tests defined with `opener`; `split` lays their calls out as Prettier does a long
    one (commander's `testOrSkipOnWindows(` then the name on the next line)."""
    body = (
        "  const program = new commander.Command();\n"
        "  program.command('executable', 'executable description');\n"
        "  expect(() => program.parse(['executable'], { from: 'user' })).toThrow('{code}');\n"
    )
    tests = []
    for code in ("ENOENT", "EACCES"):
        name = f"'when subcommand executable fails ({code}) then throw'"
        inner = body.replace("{code}", code)
        if split:
            inner = "".join(f"  {line}\n" for line in inner.splitlines())
            tests.append(f"\n{opener}(\n  {name},\n  () => {{\n{inner}  }},\n);\n")
        else:
            tests.append(f"\n{opener}({name}, () => {{\n{inner}}});\n")
    return "".join(tests)


HEAD = "const commander = require('../');\n"
PLAIN = HEAD + mock_tests("test")
MOCK = "tests/mock.test.js"


def aliased(condition: str, branches: str = "test.skip : test", *, split: bool = False) -> str:
    declaration = f"\nconst testOrSkip = {condition} ? {branches};\n"
    return HEAD + declaration + mock_tests("testOrSkip", split=split)


def test_tests_moved_under_an_alias_that_skips_only_on_windows_pass(repo: GitRepo):
    after = aliased("process.platform === 'win32'")
    assert tampered(repo, {MOCK: PLAIN}, lambda r: r.write(MOCK, after)) == []


def test_tests_moved_under_a_windows_alias_and_split_by_prettier_pass(repo: GitRepo):
    # Both at once.
    after = aliased("process.platform === 'win32'", split=True)
    assert tampered(repo, {MOCK: PLAIN}, lambda r: r.write(MOCK, after)) == []


def test_an_alias_that_runs_only_off_windows_reads_the_same(repo: GitRepo):
    after = aliased("(process.platform !== 'win32')", branches="test : test.skip")
    assert tampered(repo, {MOCK: PLAIN}, lambda r: r.write(MOCK, after)) == []


def test_an_alias_declared_in_an_unchanged_line_is_read_from_the_whole_file(repo: GitRepo):
    before = aliased("process.platform === 'win32'") + "\n// more to come\n"
    after = before.replace("(ENOENT) then throw'", "(ENOENT) then throw a custom error'")
    assert tampered(repo, {MOCK: before}, lambda r: r.write(MOCK, after)) == []


def test_a_test_removed_from_under_a_windows_alias_is_still_removal(repo: GitRepo):
    before = aliased("process.platform === 'win32'")
    after = before[: before.index("\ntestOrSkip(")]
    found = tamper(repo, {MOCK: before}, lambda r: r.write(MOCK, after))
    assert sorted(f.split(" ", 1)[1] for f in found) == [
        "test 'when subcommand executable fails (EACCES) then throw' removed",
        "test 'when subcommand executable fails (ENOENT) then throw' removed",
    ]


@pytest.mark.parametrize(
    "condition", ["process.env.CI", "process.platform === 'linux'", "!hasColors()", "true"]
)
def test_tests_moved_under_an_alias_that_may_skip_on_linux_are_reported(
    repo: GitRepo, condition: str
):
    after = aliased(condition)
    found = tampered(repo, {MOCK: PLAIN}, lambda r: r.write(MOCK, after))
    assert [m.split(" (")[0] for m in messages(found)] == [
        "test 'when subcommand executable fails"
    ] * 2


def test_an_alias_assigned_again_is_not_trusted(repo: GitRepo):
    after = aliased("process.platform === 'win32'")
    after = after.replace("const testOrSkip", "let testOrSkip")
    after = after.replace("\ntestOrSkip(", "\ntestOrSkip = test.skip;\ntestOrSkip(", 1)
    found = tampered(repo, {MOCK: PLAIN}, lambda r: r.write(MOCK, after))
    assert len(found) == 2


def test_an_alias_declared_twice_is_not_trusted(repo: GitRepo):
    after = aliased("process.platform === 'win32'")
    after = after.replace(
        "\nconst testOrSkip", "\nif (x) {\n  var testOrSkip = test.skip;\n}\nvar testOrSkip", 1
    )
    assert "var testOrSkip =" in after
    after = after.replace("var testOrSkip = test.skip", "var testOrSkip = x ? test.skip : test")
    found = tampered(repo, {MOCK: PLAIN}, lambda r: r.write(MOCK, after))
    assert len(found) == 2


def test_a_diff_alone_reads_an_alias_from_the_lines_it_shows(repo: GitRepo):
    repo.write(MOCK, PLAIN)
    base = repo.commit("base")
    repo.write(MOCK, aliased("process.platform === 'win32'"))
    head = repo.commit("change")
    diff = repo.git("diff", base, head) + "\n"
    assert by_rule(diff_result(diff), "test-tamper") == []


# -- `.js` to `.cjs` ---------------------------------------------------------------------------


@pytest.mark.parametrize("new", ["tests/signals.test.cjs", "tests/signals.test.mjs"])
def test_renaming_a_test_file_to_cjs_or_mjs_passes(repo: GitRepo, new: str):
    assert tampered(repo, {PATH: ONE_LINE}, lambda r: r.move(PATH, new)) == []


@pytest.mark.parametrize(
    "new", ["tests/signals.test.js.bak", "tests/signals.test.json", "tests/signals.test.ts"]
)
def test_renaming_a_test_file_to_another_language_or_a_backup_is_still_reported(
    repo: GitRepo, new: str
):
    found = tampered(repo, {PATH: ONE_LINE}, lambda r: r.move(PATH, new))
    assert found == [(new, None, "test file moved out of the test paths")]


# -- AVA's and jest's modifiers: `test.serial(`, `test.concurrent(`, `test.failing(` ----------

AVA = (
    "import test from 'ava';\n\n"
    "test('all shows stdout and stderr, sync', t => {\n"
    "  t.is(run(), '123');\n"
    "});\n\n"
    "test('all is defined', t => {\n"
    "  t.truthy(run());\n"
    "});\n"
)


def test_a_test_made_serial_is_not_removed(repo: GitRepo):
    """`test(` became `test.serial(` under the same name."""
    serial = AVA.replace("test('all shows", "test.serial('all shows")
    assert tamper(repo, {"test/all.js": AVA}, lambda r: r.write("test/all.js", serial)) == []


@pytest.mark.parametrize(
    ("modifier", "message"),
    [
        ("test.serial.skip", "skip marker added to a test"),
        ("test.failing", "skip marker added to a test"),
        ("test.serial.only", "focused test added (skips others)"),
    ],
)
def test_a_modifier_that_skips_or_focuses_is_reported(repo: GitRepo, modifier: str, message: str):
    changed = AVA.replace("test('all shows", f"{modifier}('all shows")
    found = tamper(repo, {"test/all.js": AVA}, lambda r: r.write("test/all.js", changed))
    assert f"test/all.js:3 {message}" in found
