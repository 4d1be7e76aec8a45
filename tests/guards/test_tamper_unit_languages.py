"""The languages `test-tamper` claims, read as their runners read them (issue 15): Rust unit
tests in a source file's `#[cfg(test)] mod tests`, JUnit 4/5 `@Test` methods and their
conditions, RSpec's skipped groups and examples. Each bypass is reported with the whole trees
and from a bare diff; each near miss passes."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from app.guards.tamper.lang.jvm import JAVA
from app.guards.tamper.lang.rust import RUST, cfg_holds
from tests.guards.conftest import GitRepo, by_rule, diff_result, tamper_messages

LIB = "src/lib.rs"
RUST_SOURCE = """pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 3);
    }

    #[test]
    fn adds_negative() {
        assert_eq!(add(-1, -2), -3);
    }
}
"""
NEGATIVE = "    #[test]\n    fn adds_negative() {\n        assert_eq!(add(-1, -2), -3);\n    }\n"
ADDS = "    #[test]\n    fn adds()"

TEST = "src/test/java/p/CalcTest.java"
JAVA_SOURCE = """package p;

import org.junit.jupiter.api.Test;

class CalcTest {
    @Test
    void adds() {
        assertEquals(3, Calc.add(1, 2));
    }

    @Test
    void addsNegative() {
        assertEquals(-3, Calc.add(-1, -2));
    }
}
"""
JADDS = "    @Test\n    void adds()"

SPEC = "spec/calc_spec.rb"
RSPEC = """describe Calc do
  it "adds" do
    expect(Calc.add(1, 2)).to eq(3)
  end

  it "adds negative" do
    expect(Calc.add(-1, -2)).to eq(-3)
  end
end
"""


def _replaced(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# (files at the base, files at the head: None deletes, the message reported)
BYPASSES = {
    "rust unit test deleted": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, NEGATIVE, "")},
        "test 'adds_negative' removed",
    ),
    "rust mod tests deleted": (
        {LIB: RUST_SOURCE},
        {LIB: RUST_SOURCE[: RUST_SOURCE.index("#[cfg(test)]")]},
        "test 'adds' removed",
    ),
    "rust #[ignore] added": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, ADDS, "    #[test]\n    #[ignore]\n    fn adds()")},
        "skip marker added to a test",
    ),
    "rust #[should_panic] added": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, ADDS, "    #[should_panic]\n" + ADDS)},
        "skip marker added to a test",
    ),
    "rust #[cfg(any())] on the test": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, ADDS, "    #[cfg(any())]\n" + ADDS)},
        "test 'adds' left out of the test build",
    ),
    "rust #[cfg(windows)] on the test": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, ADDS, "    #[cfg(all(windows, test))]\n" + ADDS)},
        "test 'adds' left out of the test build",
    ),
    "rust #[test] taken off": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, ADDS, "    fn adds()")},
        "test 'adds' is no longer a test (its header stays, what made it one is gone)",
    ),
    "rust test in a string": (
        {"tests/calc.rs": RUST_SOURCE},
        {
            "tests/calc.rs": _replaced(
                RUST_SOURCE, ADDS, '    const _OFF: &str = r#"\n' + ADDS
            ).replace(
                "    #[test]\n    fn adds_negative", '    "#;\n    #[test]\n    fn adds_negative'
            )
        },
        "test 'adds' hidden in a string or a comment",
    ),
    "junit test deleted": (
        {TEST: JAVA_SOURCE},
        {
            TEST: _replaced(
                JAVA_SOURCE,
                "    @Test\n    void addsNegative() {\n"
                "        assertEquals(-3, Calc.add(-1, -2));\n    }\n",
                "",
            )
        },
        "test 'addsNegative' removed",
    ),
    "junit @Test taken off": (
        {TEST: JAVA_SOURCE},
        {TEST: _replaced(JAVA_SOURCE, JADDS, "    void adds()")},
        "test 'adds' is no longer a test (its header stays, what made it one is gone)",
    ),
    "junit fully qualified @Disabled": (
        {TEST: JAVA_SOURCE},
        {TEST: _replaced(JAVA_SOURCE, JADDS, "    @org.junit.jupiter.api.Disabled\n" + JADDS)},
        "skip marker added to a test",
    ),
    "junit @DisabledOnOs(LINUX)": (
        {TEST: JAVA_SOURCE},
        {TEST: _replaced(JAVA_SOURCE, JADDS, "    @DisabledOnOs(OS.LINUX)\n" + JADDS)},
        "skip marker added to a test",
    ),
    "junit @EnabledOnOs(WINDOWS, MAC)": (
        {TEST: JAVA_SOURCE},
        {TEST: _replaced(JAVA_SOURCE, JADDS, "    @EnabledOnOs({OS.WINDOWS, OS.MAC})\n" + JADDS)},
        "skip marker added to a test",
    ),
    "junit @DisabledIf": (
        {TEST: JAVA_SOURCE},
        {TEST: _replaced(JAVA_SOURCE, JADDS, '    @DisabledIf("always")\n' + JADDS)},
        "skip marker added to a test",
    ),
    "junit assumeTrue(false)": (
        {TEST: JAVA_SOURCE},
        {
            TEST: _replaced(
                JAVA_SOURCE,
                "        assertEquals(3,",
                "        Assumptions.assumeTrue(false);\n        assertEquals(3,",
            )
        },
        "skip marker added inside a test",
    ),
    "junit 4 @org.junit.Ignore": (
        {TEST: JAVA_SOURCE.replace("@Test", "@org.junit.Test")},
        {
            TEST: JAVA_SOURCE.replace("@Test", "@org.junit.Test").replace(
                "    @org.junit.Test\n    void adds()",
                "    @org.junit.Ignore\n    @org.junit.Test\n    void adds()",
            )
        },
        "skip marker added to a test",
    ),
    "junit tests in a block comment": (
        {TEST: JAVA_SOURCE},
        {TEST: _replaced(JAVA_SOURCE, JADDS, "    /*\n" + JADDS).replace("\n}\n", "    */\n}\n")},
        "test 'adds' hidden in a string or a comment",
    ),
    "rspec xdescribe": (
        {SPEC: RSPEC},
        {SPEC: _replaced(RSPEC, "describe Calc do", "xdescribe Calc do")},
        "skip marker added to a test",
    ),
    'rspec xit "name" do': (
        {SPEC: RSPEC},
        {SPEC: _replaced(RSPEC, 'it "adds" do', 'xit "adds" do')},
        "skip marker added to a test",
    ),
    "rspec :skip metadata": (
        {SPEC: RSPEC},
        {SPEC: _replaced(RSPEC, 'it "adds" do', 'it "adds", :skip do')},
        "skip marker added to a test",
    ),
    "rspec examples under =begin": (
        {SPEC: RSPEC},
        {
            SPEC: _replaced(RSPEC, '  it "adds" do', '=begin\n  it "adds" do').replace(
                "\nend\n", "\n=end\nend\n"
            )
        },
        "test 'adds' hidden in a string or a comment",
    ),
}

NEAR_MISSES = {
    "rust #[cfg(test)] module moved to tests/": (
        {LIB: RUST_SOURCE},
        {
            LIB: RUST_SOURCE[: RUST_SOURCE.index("#[cfg(test)]")],
            "tests/lib.rs": "use calc::*;\n\n"
            + RUST_SOURCE[RUST_SOURCE.index("    #[test]") : RUST_SOURCE.rindex("}")].replace(
                "\n    ", "\n"
            ),
        },
    ),
    "rust ignored only on Windows": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, ADDS, "    #[cfg_attr(windows, ignore)]\n" + ADDS)},
    ),
    "rust built everywhere but Windows": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, ADDS, "    #[cfg(not(windows))]\n" + ADDS)},
    ),
    "rust a new #[should_panic] test": (
        {LIB: RUST_SOURCE},
        {
            LIB: _replaced(
                RUST_SOURCE,
                ADDS,
                "    #[test]\n    #[should_panic]\n    fn panics() {\n        panic!();\n    }\n\n"
                + ADDS,
            )
        },
    ),
    "rust source file deleted with its tests": (
        {LIB: RUST_SOURCE, "src/main.rs": "fn main() {}\n"},
        {LIB: None},
    ),
    "rust test renamed": (
        {LIB: RUST_SOURCE},
        {LIB: _replaced(RUST_SOURCE, "fn adds_negative()", "fn adds_two_negatives()")},
    ),
    "rust a string that holds a test's source": (
        {LIB: RUST_SOURCE},
        {
            LIB: _replaced(
                RUST_SOURCE,
                "    use super::*;\n",
                '    use super::*;\n\n    const SRC: &str = "\n#[test]\nfn adds() {}\n";\n',
            )
        },
    ),
    "junit @Disabled removed": (
        {TEST: _replaced(JAVA_SOURCE, JADDS, "    @Disabled\n" + JADDS)},
        {TEST: JAVA_SOURCE},
    ),
    "junit @DisabledOnOs(WINDOWS)": (
        {TEST: JAVA_SOURCE},
        {TEST: _replaced(JAVA_SOURCE, JADDS, "    @DisabledOnOs(WINDOWS)\n" + JADDS)},
    ),
    "junit @EnabledOnOs(LINUX)": (
        {TEST: JAVA_SOURCE},
        {TEST: _replaced(JAVA_SOURCE, JADDS, "    @EnabledOnOs(OS.LINUX)\n" + JADDS)},
    ),
    "junit assumption off Windows only": (
        {TEST: JAVA_SOURCE},
        {
            TEST: _replaced(
                JAVA_SOURCE,
                "        assertEquals(3,",
                "        assumeFalse(SystemUtils.IS_OS_WINDOWS);\n        assertEquals(3,",
            )
        },
    ),
    "junit a new disabled test": (
        {TEST: JAVA_SOURCE},
        {
            TEST: _replaced(
                JAVA_SOURCE,
                JADDS,
                "    @Test\n    @Disabled\n    void later() {\n"
                "        assertEquals(1, 1);\n    }\n\n" + JADDS,
            )
        },
    ),
    "junit file moved": (
        {TEST: JAVA_SOURCE},
        {
            TEST: None,
            "src/test/java/q/CalcTest.java": JAVA_SOURCE.replace("package p;", "package q;"),
        },
    ),
    "rspec a new skipped example": (
        {SPEC: RSPEC},
        {SPEC: _replaced(RSPEC, '  it "adds" do', '  xit "later" do\n  end\n\n  it "adds" do')},
    ),
    "rspec skip: false": (
        {SPEC: RSPEC},
        {SPEC: _replaced(RSPEC, 'it "adds" do', 'it "adds", skip: false do')},
    ),
}


def diff_tamper_messages(
    repo: GitRepo, files: dict[str, str], change: Callable[[GitRepo], None]
) -> list[str]:
    """`test-tamper`'s messages on the change given as a bare diff, exactly as git writes it
    (a blank context line at a hunk's end kept)."""
    for path, content in {"README.md": "x\n", **files}.items():
        repo.write(path, content)
    base = repo.commit("base")
    change(repo)
    head = repo.commit("change")
    diff = subprocess.run(
        ["git", "diff", base, head], cwd=repo.path, env=repo.env, capture_output=True, check=True
    ).stdout.decode()
    return [message for _, _, message in by_rule(diff_result(diff), "test-tamper")]


def _change(head: dict[str, str | None]):
    def change(repo: GitRepo) -> None:
        for path, text in head.items():
            if text is None:
                repo.remove(path)
            else:
                repo.write(path, text)

    return change


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_a_bypass_is_reported_with_the_trees_and_from_a_bare_diff(repo: GitRepo, name: str):
    base, head, message = BYPASSES[name]
    assert message in tamper_messages(repo, base, _change(head))


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_a_bypass_is_reported_from_a_bare_diff(repo: GitRepo, name: str):
    base, head, message = BYPASSES[name]
    found = diff_tamper_messages(repo, base, _change(head))
    if name in ("rust test in a string",):
        assert found  # the hunk shows the string open: read as a removal at least
    else:
        assert message in found


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_a_near_miss_passes(repo: GitRepo, name: str):
    base, head = NEAR_MISSES[name]
    assert tamper_messages(repo, base, _change(head)) == []


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_a_near_miss_passes_from_a_bare_diff(repo: GitRepo, name: str):
    base, head = NEAR_MISSES[name]
    assert diff_tamper_messages(repo, base, _change(head)) == []


def test_the_file_wide_cfg_leaves_every_test_of_the_file_out(repo: GitRepo):
    found = tamper_messages(
        repo, {LIB: RUST_SOURCE}, _change({LIB: "#![cfg(any())]\n" + RUST_SOURCE})
    )
    assert found == [
        "test 'adds' left out of the test build",
        "test 'adds_negative' left out of the test build",
    ]
    module = RUST_SOURCE.replace("#[cfg(test)]\nmod", "#[cfg(any())]\nmod")
    assert len(tamper_messages(repo, {LIB: RUST_SOURCE}, _change({LIB: module}))) == 2


@pytest.mark.parametrize(
    ("predicate", "holds"),
    [
        ("test", True),
        ("any()", False),
        ("all()", True),
        ("not(test)", False),
        ("windows", False),
        ('target_os = "linux"', True),
        ('target_os = "macos"', False),
        ("all(unix, not(windows))", True),
        ("any(windows, unix)", True),
        ('feature = "serde"', None),
        ("loom", None),
        ('all(test, feature = "x")', None),
        ('any(windows, feature = "x")', None),
        ("all(", None),
    ],
)
def test_a_cfg_predicate_is_read_for_cargo_test_on_linux(predicate: str, holds: bool | None):
    assert cfg_holds(predicate) is holds


def test_rust_reads_a_test_by_its_attribute_and_not_by_its_name():
    assert RUST.attributed_name("    fn adds() {", ["    #[test]"]) == "adds"
    assert RUST.attributed_name("    fn adds() {", ['    #[tokio::test(flavor = "x")]']) == "adds"
    assert RUST.attributed_name("#[test] fn adds() {", []) == "adds"
    assert RUST.attributed_name("    fn adds() {", ["    #[test]", "    #[ignore]"]) == "adds"
    assert RUST.attributed_name("    fn helper() {", ["    #[inline]"]) is None
    assert RUST.attributed_name("    fn helper() {", ["    #[test]", "    let x = 1;"]) is None


def test_junit_reads_a_test_by_its_annotation():
    assert JAVA.attributed_name("    public void adds() {", ["    @Test"]) == "adds"
    assert JAVA.attributed_name("    void adds() {", ["    @org.junit.Test"]) == "adds"
    assert (
        JAVA.attributed_name(
            "    void adds(int a) {", ["    @ParameterizedTest", "    @ValueSource(ints = {1})"]
        )
        == "adds"
    )
    assert JAVA.attributed_name("    void adds() {", ["    @TestInstance(PER_CLASS)"]) is None
    assert JAVA.elsewhere_only("@DisabledOnOs({OS.WINDOWS, OS.MAC})")
    assert not JAVA.elsewhere_only("@DisabledOnOs(OS.LINUX)")
    assert JAVA.elsewhere_only("@EnabledOnOs(LINUX)")
    assert not JAVA.elsewhere_only('@DisabledIf("check")')
    assert not JAVA.elsewhere_only("Assumptions.assumeTrue(false);")
    assert JAVA.elsewhere_only("assumeTrue(!isWindows());")


def test_a_test_module_left_out_of_the_build_is_reported_from_a_bare_diff(repo: GitRepo):
    """The hunk shows the attribute and the module's first lines, not its tests."""
    module = RUST_SOURCE.replace("#[cfg(test)]\nmod", "#[cfg(any())]\n#[cfg(test)]\nmod")
    found = diff_tamper_messages(repo, {LIB: RUST_SOURCE}, _change({LIB: module}))
    assert found == ["test module left out of the test build"]


def test_a_suite_renamed_and_skipped_at_once_skips_the_tests_it_kept(repo: GitRepo):
    head = _replaced(RSPEC, "describe Calc do", 'xcontext "calc" do')
    assert tamper_messages(repo, {SPEC: RSPEC}, _change({SPEC: head})) == [
        "skip marker added to a test"
    ]
    new_suite = RSPEC + '\nxcontext "later" do\n  it "waits" do\n  end\nend\n'
    assert tamper_messages(repo, {SPEC: RSPEC}, _change({SPEC: new_suite})) == []


def test_a_test_renamed_on_the_line_after_its_kept_header_is_a_rename(repo: GitRepo):
    path = "test/calc.test.js"
    base = "test(\n  'adds',\n  () => {\n    expect(add(1, 2)).toBe(3);\n  },\n);\n"
    head = base.replace("'adds'", "'adds two numbers'")
    assert tamper_messages(repo, {path: base}, _change({path: head})) == []
    assert diff_tamper_messages(repo, {path: base}, _change({path: head})) == []
