"""Reading a change from a local git repository: the diff, import lines, files at the base.

git runs as a subprocess with argv lists, isolated from the host's configuration (no system or
global config, no pager, no external diff or textconv drivers), and revisions are passed after
`--end-of-options`, so a revision can never be read as an option. Repository policy files
(config, constitution, prompt overrides) are read at the **base**: a change cannot rewrite the
rules it is judged by.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.errors import UserError
from app.workspace import git as workspace_git
from app.workspace.git import isolated_env
from reviewers.connectivity import IMPORT_PATTERN, SOURCE_GLOBS, ImportGraph, build_graph
from reviewers.diff import FileDiff, parse_diff

GIT_TIMEOUT_S = 120.0
CONSTITUTION_PATH = ".github/ourobot/CONSTITUTION.md"
CONFIG_PATH = ".github/ourobot.yml"
PROMPT_OVERRIDE_DIR = ".github/ourobot/prompts"
MAX_POLICY_FILE_BYTES = 256 * 1024
# Import lines beyond this are not read: the graph is a heuristic for ordering, not a gate.
MAX_IMPORT_LINES = 200_000


class GitReadError(UserError):
    """git refused (unknown revision, not a repository): one line, exit code 2."""


@dataclass(frozen=True)
class Change:
    base_sha: str
    head_sha: str
    merge_base: str
    files: list[FileDiff]
    graph: ImportGraph


def _env() -> dict[str, str]:
    return isolated_env({"GIT_PAGER": "cat"})


def run_git(repo: Path, args: Sequence[str], *, ok: tuple[int, ...] = (0,)) -> tuple[int, str]:
    """(exit code, stdout decoded as UTF-8 with replacement); GitReadError outside `ok`."""
    try:
        proc = workspace_git.run_git(args, env=_env(), cwd=repo, timeout_s=GIT_TIMEOUT_S)
    except workspace_git.GitError as exc:
        raise GitReadError(str(exc)) from None
    if proc.returncode not in ok:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), None)
        reason = reason or (lines[-1] if lines else f"exit code {proc.returncode}")
        raise GitReadError(f"git {args[0]}: {reason}")
    return proc.returncode, proc.stdout.decode("utf-8", "replace")


def check_repository(repo: Path) -> None:
    if not repo.is_dir():
        raise UserError(f"--repo {repo}: not a directory")
    code, _ = run_git(repo, ["rev-parse", "--git-dir"], ok=(0, 128))
    if code != 0:
        raise UserError(f"--repo {repo}: not a git repository")


def resolve_commit(repo: Path, rev: str, flag: str) -> str:
    code, out = run_git(
        repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        ok=(0, 1, 128),
    )  # fmt: skip
    if code != 0 or not out.strip():
        raise UserError(f"{flag} {rev!r}: unknown revision (not a commit in {repo})")
    return out.strip()


def read_change(repo: Path, base: str, head: str) -> Change:
    """The change from the merge base of `base` and `head` to `head`, as a PR shows it."""
    check_repository(repo)
    base_sha = resolve_commit(repo, base, "--base")
    head_sha = resolve_commit(repo, head, "--head")
    code, out = run_git(repo, ["merge-base", "--end-of-options", base_sha, head_sha], ok=(0, 1))
    if code != 0:
        raise UserError(f"--base {base!r} and --head {head!r} have no common history")
    merge_base = out.strip()
    diff_args = ["--no-color", "--no-ext-diff", "--no-textconv", "-M", "--end-of-options",
                 merge_base, head_sha]  # fmt: skip
    _, names = run_git(repo, ["diff", "--name-status", "-z", *diff_args])
    _, patch = run_git(
        repo, ["-c", "core.quotePath=false", "diff", "--unified=3", "--src-prefix=a/",
               "--dst-prefix=b/", *diff_args],
    )  # fmt: skip
    files = parse_diff(names, patch)
    graph = _import_graph(repo, head_sha, files)
    return Change(base_sha, head_sha, merge_base, files, graph)


def _import_graph(repo: Path, head_sha: str, files: Sequence[FileDiff]) -> ImportGraph:
    _, listing = run_git(repo, ["ls-tree", "-r", "-z", "--name-only", "--end-of-options", head_sha])
    paths = [path for path in listing.split("\0") if path]
    deleted = [diff.path for diff in files if diff.file.status == "deleted"]
    lines = _import_lines(repo, head_sha)
    return build_graph(lines, [*paths, *deleted])


def _import_lines(repo: Path, head_sha: str) -> dict[str, list[str]]:
    """Each source file's import lines at `head_sha` (one `git grep`, no checkout)."""
    code, out = run_git(
        repo,
        ["grep", "-z", "-I", "--full-name", "-E", "-e", IMPORT_PATTERN,
         head_sha, "--", *SOURCE_GLOBS],
        ok=(0, 1),
    )  # fmt: skip
    found: dict[str, list[str]] = defaultdict(list)
    if code == 1:
        return found
    prefix = f"{head_sha}:"
    for count, record in enumerate(out.split("\n")):
        if count >= MAX_IMPORT_LINES:
            break
        name, sep, text = record.partition("\0")
        if sep and name.startswith(prefix):
            found[name[len(prefix) :]].append(text)
    return found


def read_file_at(repo: Path, rev: str, path: str, *, what: str) -> str | None:
    """A policy file's text at `rev`, or None when it is not there. A symlink, a directory or
    a file over the size limit is refused: a policy file is a plain, bounded file or nothing."""
    _, entry = run_git(repo, ["ls-tree", "-z", "--end-of-options", rev, "--", path])
    if not entry:
        return None
    meta, _, _ = entry.partition("\t")
    mode, kind, blob = meta.split(" ")
    if kind != "blob" or mode == "120000":
        raise UserError(f"{what} {path} at {rev[:12]} is not a regular file")
    _, size = run_git(repo, ["cat-file", "-s", blob])
    if int(size.strip()) > MAX_POLICY_FILE_BYTES:
        raise UserError(
            f"{what} {path} at {rev[:12]} is larger than {MAX_POLICY_FILE_BYTES} bytes; "
            "it is always used whole, so it must be shorter"
        )
    _, text = run_git(repo, ["cat-file", "blob", blob])
    return text
