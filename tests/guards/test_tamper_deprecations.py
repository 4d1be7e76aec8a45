"""`test-tamper` with the whole trees: a removed Python test that checked only a deprecation
warning goes with it when the change deletes the whole block that raised the warning (attrs'
`if hash is not None: warnings.warn(...)`, starlette's module `__getattr__` shim). Only the
warning call deleted, a check outside the expected warning, the warning still raised from
elsewhere, or no word linking the test to the deleted warning, and the test is reported.
Real rule, real git."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, diff_tamper_messages, tamper, tamper_messages

MAKE = '''\
import warnings


def attrs(maybe_cls=None, hash=None, unsafe_hash=None):
    """Decorate a class."""
    if hash is not None:
        warnings.warn(
            DeprecationWarning(
                "The `hash` argument is deprecated in favor of `unsafe_hash`."
            ),
            stacklevel=2,
        )
    return maybe_cls


def old_api():
    warnings.warn("old_api is deprecated", DeprecationWarning, stacklevel=2)
    return 1
'''
BLOCK = MAKE.split("    if hash is not None:\n")[1].split("    return maybe_cls\n")[0]
WITHOUT_BLOCK = MAKE.replace("    if hash is not None:\n" + BLOCK, "")
TESTS = """\
import pytest

from pkg.make import attrs, old_api


def test_attrs():
    assert attrs(1) == 1


def test_hash_is_deprecated():
    with pytest.deprecated_call():
        attrs(1, hash=True)
"""
KEPT = TESTS.split("\n\n\ndef test_hash_is_deprecated")[0] + "\n"
FILES = {"pkg/__init__.py": "", "pkg/make.py": MAKE, "tests/test_make.py": TESTS}
REMOVED = "test 'test_hash_is_deprecated' removed"


def _remove(make: str = WITHOUT_BLOCK, tests: str = KEPT):
    def change(r: GitRepo) -> None:
        r.write("pkg/make.py", make)
        r.write("tests/test_make.py", tests)

    return change


def test_a_warning_test_removed_with_the_block_that_warned_passes(repo: GitRepo):
    """The test checked only that `hash=` warns, and the warning went."""
    assert tamper(repo, FILES, _remove()) == []


def test_a_docstring_saying_it_is_deprecated_warns_no_one(repo: GitRepo):
    make = WITHOUT_BLOCK.replace('"""Decorate a class."""', '"""*hash* is deprecated."""')
    assert tamper(repo, FILES, _remove(make=make)) == []


def test_the_test_removed_while_the_warning_stays_is_tampering(repo: GitRepo):
    assert tamper_messages(repo, FILES, _remove(make=MAKE)) == [REMOVED]


def test_only_the_warning_call_deleted_keeps_the_test(repo: GitRepo):
    """The `if` stays with another line in it: the deprecated path is still there."""
    make = MAKE.replace(
        "    if hash is not None:\n" + BLOCK,
        "    if hash is not None:\n        unsafe_hash = hash\n",
    )
    assert tamper_messages(repo, FILES, _remove(make=make)) == [REMOVED]


def test_a_check_outside_the_expected_warning_keeps_the_test(repo: GitRepo):
    tests = TESTS.replace(
        "        attrs(1, hash=True)\n", "        attrs(1, hash=True)\n    assert attrs(2) == 2\n"
    )
    files = {**FILES, "tests/test_make.py": tests}
    assert tamper_messages(repo, files, _remove()) == [REMOVED]


def test_the_warning_raised_from_elsewhere_keeps_the_test(repo: GitRepo):
    """The same warning moved into a helper the decorator calls: not gone."""
    make = WITHOUT_BLOCK + (
        "\n\ndef _check(hash):\n    if hash is not None:\n"
        '        warnings.warn("The `hash` argument is deprecated",\n'
        "                      DeprecationWarning)\n"
    )
    assert tamper_messages(repo, FILES, _remove(make=make)) == [REMOVED]


def test_a_deleted_warning_about_something_else_frees_nothing(repo: GitRepo):
    """Red-team: the test of `old_api`'s deprecation removed with the `hash` block: no word
    links them (`old_api` still warns at the head)."""
    tests = TESTS.replace("attrs(1, hash=True)", "old_api()")
    files = {**FILES, "tests/test_make.py": tests}
    assert tamper_messages(repo, files, _remove()) == ["test 'test_hash_is_deprecated' removed"]


SHIM = """\
import typing
import warnings

from pkg.middleware import ExceptionMiddleware as _Middleware


class HTTPException(Exception):
    pass


def __getattr__(name: str) -> typing.Any:
    if name == "ExceptionMiddleware":
        warnings.warn(
            f"{name} is deprecated on `pkg.exceptions`.",
            category=DeprecationWarning,
        )
        return _Middleware
    raise AttributeError(name)
"""
SHIM_TESTS = """\
import pytest


def test_http_exception():
    from pkg.exceptions import HTTPException

    assert HTTPException()


def test_exception_middleware_deprecation():
    with pytest.warns(DeprecationWarning):
        from pkg.exceptions import ExceptionMiddleware  # noqa: F401
"""


def test_a_module_shim_deleted_with_its_warning_test_passes(repo: GitRepo):
    """The `__getattr__` shim deleted whole; `ExceptionMiddleware` stays
    in `pkg.middleware`."""
    files = {
        "pkg/__init__.py": "",
        "pkg/middleware.py": "class ExceptionMiddleware:\n    pass\n",
        "pkg/exceptions.py": SHIM,
        "tests/test_exceptions.py": SHIM_TESTS,
    }

    def change(r: GitRepo) -> None:
        r.write(
            "pkg/exceptions.py",
            "class HTTPException(Exception):\n    pass\n",
        )
        r.write(
            "tests/test_exceptions.py",
            SHIM_TESTS.split("\n\n\ndef test_exception_middleware")[0] + "\n",
        )

    assert tamper(repo, files, change) == []


def test_a_bare_diff_gets_no_deprecation_exemption(repo: GitRepo):
    assert diff_tamper_messages(repo, FILES, _remove()) == [REMOVED]
