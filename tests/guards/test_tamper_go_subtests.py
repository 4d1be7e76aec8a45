"""`test-tamper` and Go subtests: a Go test counts one test per `t.Run(...)` statement directly in
its body, as a parametrized Python test counts one per literal case, and a loop that runs `t.Run`
over a literal table the test declares counts its rows (one, when the table is built elsewhere, a
line of the loop may leave a row out, or the test may skip). Counted at the base and at the head
alike: three tests folded into one test with five subtests is no removal, a test with five subtests
removed needs five back, and the subtests that tests the change leaves alone gain or lose count
too."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, by_rule, diff_result, tamper

PATH = "bind_test.go"
HEAD = 'package echo\n\nimport "testing"\n'


def plain(name: str, check: str = "Bind(1) != 1") -> str:
    return f'\nfunc {name}(t *testing.T) {{\n\tif {check} {{\n\t\tt.Error("{name}")\n\t}}\n}}\n'


def subtest(name: str, check: str = "Bind(1) != 1") -> str:
    return (
        f'\tt.Run("{name}", func(t *testing.T) {{\n'
        f'\t\tif {check} {{\n\t\t\tt.Error("{name}")\n\t\t}}\n\t}})\n'
    )


def with_subtests(name: str, *subtests: str, param: str = "t") -> str:
    body = "".join(subtest(s) for s in subtests).replace("t.Run(", f"{param}.Run(")
    return f"\nfunc {name}({param} *testing.T) {{\n{body}}}\n"


def with_table(name: str, rows: int) -> str:
    table = "".join(f'\t\t{{"row {n}", {n}}},\n' for n in range(rows))
    return (
        f"\nfunc {name}(t *testing.T) {{\n"
        f"\ttests := []struct {{\n\t\tname string\n\t\tin   int\n\t}}{{\n{table}\t}}\n"
        "\tfor _, tc := range tests {\n"
        "\t\tt.Run(tc.name, func(t *testing.T) {\n"
        '\t\t\tif Bind(tc.in) != tc.in {\n\t\t\t\tt.Error("row")\n\t\t\t}\n'
        "\t\t})\n\t}\n}\n"
    )


THREE = HEAD + plain("TestBindTwoFiles") + plain("TestBindMultipleKeys") + plain("TestBindOneFile")
FIVE = ("nok, struct", "ok, single", "ok, multiple to one", "ok, slice", "ok, slice of pointers")


def removed(repo: GitRepo, before: str, after: str) -> list[str]:
    """The names `test-tamper` reports removed when `before` becomes `after`, sorted."""
    found = tamper(repo, {PATH: before}, lambda r: r.write(PATH, after))
    return sorted(finding.split(" ", 1)[1] for finding in found)


# -- not removals ------------------------------------------------------------------------------


def test_three_tests_folded_into_one_test_with_five_subtests_pass(repo: GitRepo):
    # TestFormMultipartBind{TwoFiles,MultipleKeys,OneFile} became the five
    # subtests of TestBindMultipartFormFiles.
    after = HEAD + with_subtests("TestBindMultipartFormFiles", *FIVE)
    assert removed(repo, THREE, after) == []


def test_the_same_fold_given_as_a_bare_diff_passes(repo: GitRepo):
    # Both whole functions are in the diff: their subtests are read from it.
    repo.write(PATH, THREE)
    base = repo.commit("base")
    repo.write(PATH, HEAD + with_subtests("TestBindMultipartFormFiles", *FIVE))
    head = repo.commit("fold")
    assert by_rule(diff_result(repo.git("diff", base, head) + "\n"), "test-tamper") == []


def test_subtests_are_read_under_the_name_the_test_gives_its_testing_t(repo: GitRepo):
    after = HEAD + with_subtests("TestBindMultipartFormFiles", *FIVE[:3], param="tt")
    assert removed(repo, THREE, after) == []


def test_a_test_folded_as_a_subtest_of_a_test_that_stays_passes(repo: GitRepo):
    # The parametrize analogue of a case added to a test whose header is unchanged.
    before = HEAD + with_subtests("TestBind", "a", "b") + plain("TestBindOneFile")
    after = HEAD + with_subtests("TestBind", "a", "b", "one file")
    assert removed(repo, before, after) == []


# -- still removals ----------------------------------------------------------------------------


def test_one_subtest_for_three_tests_is_a_removal(repo: GitRepo):
    after = HEAD + with_subtests("TestBindMultipartFormFiles", "ok")
    assert removed(repo, THREE, after) == [
        "test 'TestBindMultipleKeys' removed",
        "test 'TestBindTwoFiles' removed",
    ]


def test_a_test_with_five_subtests_needs_five_tests_back(repo: GitRepo):
    # Before subtests were counted, the two new tests paid for the one removed.
    before = HEAD + with_subtests("TestBindMultipartFormFiles", *FIVE)
    after = HEAD + plain("TestBindOne") + plain("TestBindTwo")
    assert removed(repo, before, after) == ["test 'TestBindMultipartFormFiles' removed"]


def test_a_loop_over_a_literal_table_counts_its_rows(repo: GitRepo):
    """TestLogger and TestLoggerIPAddress folded into table tests of 5 and
    22 rows, each row run by `t.Run`."""
    assert removed(repo, THREE, HEAD + with_table("TestBindFiles", rows=3)) == []


def test_a_table_of_fewer_rows_than_the_tests_removed_is_a_removal(repo: GitRepo):
    after = HEAD + with_table("TestBindFiles", rows=2)
    found = removed(repo, THREE, after)
    assert len(found) == 1 and found[0].startswith("test 'TestBind")


def test_a_table_with_one_row_per_line_and_a_named_type_counts_its_rows(repo: GitRepo):
    after = HEAD + with_table("TestBindFiles", rows=3).replace(
        "\ttests := []struct {\n\t\tname string\n\t\tin   int\n\t}{\n", "\ttests := []bindCase{\n"
    )
    assert removed(repo, THREE, after) == []


def test_a_loop_that_may_leave_rows_out_counts_one(repo: GitRepo):
    """A `continue` (or an `if`, a `return`) before the `t.Run` may skip rows."""
    after = HEAD + with_table("TestBindFiles", rows=5).replace(
        "\t\tt.Run(tc.name", "\t\tif tc.in > 2 {\n\t\t\tcontinue\n\t\t}\n\t\tt.Run(tc.name"
    )
    assert removed(repo, THREE, after) == [
        "test 'TestBindMultipleKeys' removed",
        "test 'TestBindTwoFiles' removed",
    ]


def test_a_table_test_that_may_skip_counts_one(repo: GitRepo):
    after = HEAD + with_table("TestBindFiles", rows=5).replace(
        '\t\t\t\tt.Error("row")', '\t\t\t\tt.Skip("row")'
    )
    assert [m for m in removed(repo, THREE, after) if m.endswith(" removed")] == [
        "test 'TestBindMultipleKeys' removed",
        "test 'TestBindTwoFiles' removed",
    ]


def test_a_loop_over_a_table_built_elsewhere_counts_one(repo: GitRepo):
    after = HEAD + with_table("TestBindFiles", rows=5).replace("range tests", "range loadCases()")
    assert removed(repo, THREE, after) == [
        "test 'TestBindMultipleKeys' removed",
        "test 'TestBindTwoFiles' removed",
    ]


def test_nested_subtests_count_as_the_one_subtest_around_them(repo: GitRepo):
    group = (
        '\nfunc TestBindFiles(t *testing.T) {\n\tt.Run("group", func(t *testing.T) {\n'
        + "".join("\t" + line + "\n" for line in "".join(subtest(s) for s in FIVE).splitlines())
        + "\t})\n}\n"
    )
    assert removed(repo, THREE, HEAD + group) == [
        "test 'TestBindMultipleKeys' removed",
        "test 'TestBindTwoFiles' removed",
    ]


def test_subtests_moved_out_of_a_test_that_stays_pay_for_nothing(repo: GitRepo):
    # The parametrize analogue of a case moved from one test to another: TestBind keeps its
    # header and loses three subtests to a new test, which then cannot pay for TestBindOneFile.
    before = HEAD + with_subtests("TestBind", "a", "b", "c", "d") + plain("TestBindOneFile")
    after = HEAD + with_subtests("TestBind", "a") + with_subtests("TestBindMoved", "b", "c", "d")
    assert removed(repo, before, after) == ["test 'TestBindOneFile' removed"]


def test_subtests_a_test_that_stays_loses_count_against_the_new_tests(repo: GitRepo):
    before = HEAD + with_subtests("TestBind", "a", "b", "c") + plain("TestBindOneFile")
    after = HEAD + with_subtests("TestBind", "a") + plain("TestBindNew")
    assert removed(repo, before, after) == ["test 'TestBindOneFile' removed"]


def test_a_subtest_added_to_a_test_that_may_skip_pays_for_nothing(repo: GitRepo):
    skipping = '\tif testing.Short() {\n\t\tt.Skip("long")\n\t}\n'
    before = HEAD + with_subtests("TestBind", "a").replace("{\n", "{\n" + skipping, 1)
    before += plain("TestBindOneFile")
    after = HEAD + with_subtests("TestBind", "a", "one file").replace("{\n", "{\n" + skipping, 1)
    assert removed(repo, before, after) == ["test 'TestBindOneFile' removed"]


def test_subtests_removed_from_a_test_that_stays_are_not_reported_alone(repo: GitRepo):
    # As cases taken from a parametrize list whose test keeps its header (a known gap of the
    # rule, docs/guards.md): counted against the file's new tests, never reported by
    # themselves, the test being still there.
    before = HEAD + with_subtests("TestBind", *FIVE)
    after = HEAD + with_subtests("TestBind", FIVE[0])
    assert removed(repo, before, after) == []


# -- benchmarks ----------------------------------------------------------------------------------


def benchmark(name: str) -> str:
    return f"\nfunc {name}(b *testing.B) {{\n\tfor i := 0; i < b.N; i++ {{\n\t\tBind(i)\n\t}}\n}}\n"


def test_a_benchmark_removed_is_no_test_removed(repo: GitRepo):
    # BenchmarkWith{,out}CallerTracing removed.
    before = THREE + benchmark("BenchmarkWithCallerTracing") + benchmark("BenchmarkWithout")
    assert removed(repo, before, THREE) == []


def test_a_test_replaced_by_a_benchmark_is_still_removed(repo: GitRepo):
    after = HEAD + plain("TestBindTwoFiles") + plain("TestBindMultipleKeys")
    after += benchmark("BenchmarkBindOneFile")
    assert removed(repo, THREE, after) == ["test 'TestBindOneFile' removed"]


def test_a_file_of_benchmarks_deleted_is_no_test_file_deleted(repo: GitRepo):
    files = {PATH: THREE, "bench_test.go": HEAD + benchmark("BenchmarkBind")}
    assert tamper(repo, files, lambda r: r.remove("bench_test.go")) == []


# A test whose body does not name it, so that it can be carried on under another name.
CHECKS = (
    '\tif Bind(2) != 2 {\n\t\tt.Error("two")\n\t}\n'
    '\tif Bind(3) != 3 {\n\t\tt.Error("three")\n\t}\n}\n'
)
KEPT = HEAD + plain("TestBindTwoFiles")
WITH_CHECKS = KEPT + "\nfunc TestBindChecks(t *testing.T) {\n" + CHECKS


def test_a_test_moved_to_another_file_as_a_benchmark_is_removed(repo: GitRepo):
    """The same body under `BenchmarkBindChecks(t *testing.B)`: `go test` never runs it, so
    it carries on no test."""
    benchmark = HEAD + "\nfunc BenchmarkBindChecks(t *testing.B) {\n" + CHECKS

    def change(r: GitRepo) -> None:
        r.write(PATH, KEPT)
        r.write("bench_test.go", benchmark)

    assert tamper(repo, {PATH: WITH_CHECKS}, change) == [
        "bind_test.go:9 test 'TestBindChecks' removed"
    ]


def test_a_test_renamed_to_a_name_go_does_not_run_is_removed(repo: GitRepo):
    """`Testbind...` (a lowercase letter after `Test`) is a plain function to `go test`."""
    after = KEPT + "\nfunc TestbindChecks(t *testing.T) {\n" + CHECKS
    assert removed(repo, WITH_CHECKS, after) == ["test 'TestBindChecks' removed"]


def test_a_test_replaced_by_an_example_that_checks_no_output_is_removed(repo: GitRepo):
    """An example without an `// Output:` comment is compiled and never run."""
    after = KEPT + "\nfunc ExampleBind() {\n\tBind(1)\n}\n"
    assert removed(repo, WITH_CHECKS, after) == ["test 'TestBindChecks' removed"]


def test_a_test_replaced_by_an_example_that_checks_its_output_passes(repo: GitRepo):
    after = KEPT + "\nfunc ExampleBind() {\n\tfmt.Println(Bind(1))\n\t// Output: 1\n}\n"
    assert removed(repo, WITH_CHECKS, after) == []
