"""BareRepo against real git: seeding, diffs as GitHub reports them, trees, server-side merges."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.sandbox.gitops import (
    ZERO_SHA,
    BareRepo,
    FileChange,
    MergeConflict,
    NoCommonAncestor,
    RefConflict,
    UnknownRevision,
    isolated_env,
)


class Work:
    """A non-bare clone of a sandbox repo, for making commits the way a user would."""

    def __init__(self, repo: BareRepo, path: Path) -> None:
        self.repo, self.path = repo, path
        self.git("clone", "-q", str(repo.path), str(path), cwd=path.parent)

    def git(self, *args: str, cwd: Path | None = None) -> str:
        env = isolated_env({"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.invalid"})
        proc = subprocess.run(
            ["git", *args], cwd=cwd or self.path, env=env, capture_output=True, check=True
        )
        return proc.stdout.decode().strip()

    def write(self, rel: str, data: str | bytes, *, executable: bool = False) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode() if isinstance(data, str) else data)
        if executable:
            target.chmod(0o755)

    def commit(self, message: str, branch: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        self.git("push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str, start: str = "origin/main") -> None:
        self.git("fetch", "-q", "origin")
        self.git("checkout", "-q", "-B", name, start)


SEED = {
    "README.md": "# demo\n",
    "app.py": "".join(f"line {i}\n" for i in range(1, 21)),
    "docs/guide.md": "".join(f"guide {i}\n" for i in range(1, 31)),
    "old.txt": "to be removed\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> BareRepo:
    seed = tmp_path / "seed"
    for rel, text in SEED.items():
        (seed / rel).parent.mkdir(parents=True, exist_ok=True)
        (seed / rel).write_text(text)
    return BareRepo.create(tmp_path / "r.git", seed)


@pytest.fixture
def work(repo: BareRepo, tmp_path: Path) -> Work:
    return Work(repo, tmp_path / "work")


def by_name(changes: list[FileChange]) -> dict[str, FileChange]:
    return {c.filename: c for c in changes}


# --- create ------------------------------------------------------------------------------------


def test_create_from_seed_keeps_dotfiles_modes_and_links_but_not_git_dirs(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    (seed / ".github/workflows").mkdir(parents=True)
    (seed / ".github/workflows/ci.yml").write_text("on: push\n")
    (seed / ".gitignore").write_text("*.log\n")
    (seed / "kept.log").write_text("ignored by .gitignore, still seeded\n")
    (seed / ".env.example").write_text("A=1\n")
    (seed / "vendor/.git").mkdir(parents=True)
    (seed / "vendor/.git/config").write_text("[core]\n")
    (seed / "vendor/lib.py").write_text("x = 1\n")
    (seed / "run.sh").write_text("#!/bin/sh\n")
    (seed / "run.sh").chmod(0o755)
    (seed / "link").symlink_to("run.sh")

    repo = BareRepo.create(
        tmp_path / "r.git", seed, default_branch="trunk", author=("Ann", "ann@x.invalid")
    )

    head = repo.resolve("trunk")
    assert head is not None
    assert repo.refs() == {"refs/heads/trunk": head}
    assert repo.resolve("HEAD") == head
    names = {e.path for e in repo.list_tree("trunk") or []}
    assert names == {
        ".github",
        ".gitignore",
        "kept.log",
        ".env.example",
        "vendor",
        "run.sh",
        "link",
    }
    assert [e.path for e in repo.list_tree("trunk", "vendor") or []] == ["vendor/lib.py"]
    assert repo.read_blob("trunk", ".github/workflows/ci.yml") == b"on: push\n"
    run, link = repo.entry_at("trunk", "run.sh"), repo.entry_at("trunk", "link")
    assert run is not None and run.mode == "100755" and run.type == "file"
    assert link is not None and link.mode == "120000" and link.type == "symlink"
    assert repo.read_blob("trunk", "link") == b"run.sh"
    info = repo.commit_info(head)
    assert (info.author_name, info.author_email, info.message) == (
        "Ann",
        "ann@x.invalid",
        "Initial commit",
    )
    assert info.parents == ()
    assert info.author_date.endswith("Z")
    config = (tmp_path / "r.git/config").read_text()
    assert "receivepack = true" in config


def test_create_without_seed_is_an_empty_repo(tmp_path: Path) -> None:
    repo = BareRepo.create(tmp_path / "e.git")
    assert repo.refs() == {}
    assert repo.resolve("main") is None
    assert repo.list_tree("main") is None
    with pytest.raises(ValueError, match="already in use"):
        BareRepo.create(tmp_path / "e.git")


def test_create_ignores_host_git_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = hostbranch\n[user]\n\tname = Host\n"
    )
    monkeypatch.setenv("HOME", str(home))
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "a").write_text("a\n")
    repo = BareRepo.create(tmp_path / "r.git", seed)
    assert list(repo.refs()) == ["refs/heads/main"]


# --- revisions and history -------------------------------------------------------------------


def test_resolve_never_raises(repo: BareRepo) -> None:
    main = repo.resolve("main")
    assert main is not None and len(main) == 40
    assert repo.resolve("refs/heads/main") == main
    assert repo.resolve(main[:10]) == main
    for bad in ("nope", "--all", "", "main\n", "main:README.md"):
        assert repo.resolve(bad) is None


def test_commits_between_and_merge_base(repo: BareRepo, work: Work) -> None:
    main = repo.resolve("main")
    work.branch("feature")
    shas = []
    for i in range(3):
        work.write(f"f{i}.txt", f"{i}\n")
        shas.append(work.commit(f"step {i}\n\nbody {i}", "feature"))
    commits = repo.commits_between("main", "feature")
    assert [c.sha for c in commits] == shas
    assert commits[0].message == "step 0\n\nbody 0"
    assert commits[0].author_name == "Dev"
    assert commits[1].parents == (shas[0],)
    assert repo.merge_base("main", "feature") == main
    assert repo.commits_between("feature", "main") == []
    with pytest.raises(UnknownRevision):
        repo.commits_between("main", "missing")


# --- compare / diff_text ---------------------------------------------------------------------


def test_compare_reports_each_kind_of_change(repo: BareRepo, work: Work) -> None:
    work.branch("feature")
    work.write("new.txt", "one\ntwo\n")
    work.write("app.py", SEED["app.py"].replace("line 5\n", "line five\n") + "line 21\n")
    (work.path / "old.txt").unlink()
    guide = SEED["docs/guide.md"].replace("guide 30\n", "guide thirty\n")
    (work.path / "docs/guide.md").unlink()
    work.write("docs/manual.md", guide)
    work.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    (work.path / "current").symlink_to("README.md")
    work.commit("many changes", "feature")

    changes = by_name(repo.compare("main", "feature"))

    assert set(changes) == {"new.txt", "app.py", "old.txt", "docs/manual.md", "logo.png", "current"}
    new = changes["new.txt"]
    assert (new.status, new.additions, new.deletions) == ("added", 2, 0)
    assert new.patch == "@@ -0,0 +1,2 @@\n+one\n+two"
    assert new.blob_sha == repo.entry_at("feature", "new.txt").sha  # type: ignore[union-attr]
    app = changes["app.py"]
    assert (app.status, app.additions, app.deletions, app.binary) == ("modified", 2, 1, False)
    assert (
        app.patch is not None and app.patch.startswith("@@ ") and "-line 5\n+line five" in app.patch
    )
    old = changes["old.txt"]
    assert (old.status, old.deletions, old.blob_sha) == ("removed", 1, None)
    moved = changes["docs/manual.md"]
    assert (moved.status, moved.previous_filename) == ("renamed", "docs/guide.md")
    assert (moved.additions, moved.deletions) == (1, 1)
    logo = changes["logo.png"]
    assert (logo.status, logo.binary, logo.patch, logo.additions) == ("added", True, None, 0)
    link = changes["current"]
    assert (
        link.status == "added"
        and link.patch == "@@ -0,0 +1 @@\n+README.md\n\\ No newline at end of file"
    )
    assert repo.entry_at("feature", "current").mode == "120000"  # type: ignore[union-attr]


def test_compare_type_change_keeps_following_files_aligned(repo: BareRepo, work: Work) -> None:
    work.branch("feature")
    (work.path / "README.md").unlink()
    (work.path / "README.md").symlink_to("docs/guide.md")
    work.write("zzz.txt", "last\n")
    work.commit("readme becomes a link", "feature")

    changes = by_name(repo.compare("main", "feature"))

    readme = changes["README.md"]
    assert (readme.status, readme.additions, readme.deletions) == ("changed", 1, 1)
    assert (
        readme.patch is not None and "-# demo" in readme.patch and "+docs/guide.md" in readme.patch
    )
    assert changes["zzz.txt"].patch == "@@ -0,0 +1 @@\n+last"


def test_gitattributes_cannot_hide_a_diff(repo: BareRepo, work: Work) -> None:
    work.branch("base-attrs")
    work.write(".gitattributes", "* -diff\n")
    work.commit("mark everything binary", "main")
    work.branch("feature")
    work.write("app.py", "rm -rf /\n")
    work.commit("gut app.py", "feature")

    # In a checkout the committed attributes do apply: the fixture really hides the diff there.
    work.git("fetch", "-q", "origin")
    assert work.git("diff", "--numstat", "origin/main", "origin/feature") == "-\t-\tapp.py"

    changes = by_name(repo.compare("main", "feature"))

    app = changes["app.py"]
    assert (app.binary, app.additions, app.deletions) == (False, 1, 20)
    assert app.patch is not None and "+rm -rf /" in app.patch
    text = repo.diff_text("main", "feature")
    assert "Binary files" not in text and "-line 20" in text


def test_compare_is_three_dot(repo: BareRepo, work: Work) -> None:
    work.branch("feature")
    work.write("feature.txt", "f\n")
    work.commit("feature work", "feature")
    work.branch("main")
    work.write("README.md", "# changed on main meanwhile\n")
    work.commit("main moves on", "main")

    assert [c.filename for c in repo.compare("main", "feature")] == ["feature.txt"]
    text = repo.diff_text("main", "feature")
    assert text.startswith("diff --git a/feature.txt b/feature.txt\n")
    assert "README" not in text


def test_compare_unknown_or_unrelated(repo: BareRepo, tmp_path: Path) -> None:
    with pytest.raises(UnknownRevision):
        repo.compare("main", "nope")
    other = tmp_path / "other"
    other.mkdir()
    (other / "x").write_text("x\n")
    foreign = BareRepo.create(tmp_path / "o.git", other)
    sha = foreign.resolve("main")
    assert sha is not None
    repo._git("fetch", "-q", str(foreign.path), "main:refs/heads/foreign")
    with pytest.raises(NoCommonAncestor):
        repo.compare("main", "foreign")
    assert repo.mergeable("main", "foreign") is False


# --- trees and blobs ---------------------------------------------------------------------------


def test_tree_reads(repo: BareRepo) -> None:
    docs = repo.entry_at("main", "docs")
    assert docs is not None and (docs.type, docs.mode, docs.size) == ("dir", "040000", 0)
    guide = repo.entry_at("main", "docs/guide.md")
    assert guide is not None
    assert (guide.path, guide.name, guide.type) == ("docs/guide.md", "guide.md", "file")
    assert guide.size == len(SEED["docs/guide.md"])
    assert [e.path for e in repo.list_tree("main", "docs/") or []] == ["docs/guide.md"]
    assert repo.read_blob("main", "docs/guide.md") == SEED["docs/guide.md"].encode()
    assert repo.read_blob("main", "/docs/guide.md") == SEED["docs/guide.md"].encode()
    for absent in ("docs/nope.md", "nope/x", "docs", "docs/../README.md", "./README.md"):
        assert repo.read_blob("main", absent) is None, absent
    assert repo.list_tree("main", "README.md") is None
    assert repo.list_tree("nope") is None
    assert repo.entry_at("nope", "README.md") is None
    root = [e.name for e in repo.list_tree("main") or []]
    assert root == ["README.md", "app.py", "docs", "old.txt"]


def test_export_tree(repo: BareRepo, work: Work, tmp_path: Path) -> None:
    work.branch("feature")
    work.write("bin/run", "#!/bin/sh\necho hi\n", executable=True)
    work.write(".env.example", "A=1\n")
    work.write(".gitattributes", "* export-ignore\n")
    (work.path / "here").symlink_to("bin/run")
    sha = work.commit("tools", "feature")

    dest = tmp_path / "export"
    repo.export_tree(sha, dest)

    assert (dest / "README.md").read_text() == SEED["README.md"]
    assert (dest / ".env.example").read_text() == "A=1\n"
    assert os.access(dest / "bin/run", os.X_OK)
    assert os.readlink(dest / "here") == "bin/run"
    assert not (dest / ".git").exists()
    with pytest.raises(ValueError, match="not empty"):
        repo.export_tree(sha, dest)
    with pytest.raises(UnknownRevision):
        repo.export_tree("nope", tmp_path / "other")


# --- ref writes ---------------------------------------------------------------------------------


def test_update_and_delete_ref(repo: BareRepo, work: Work) -> None:
    main = repo.resolve("main")
    assert main is not None
    repo.update_ref("refs/heads/copy", main, ZERO_SHA)
    assert repo.refs()["refs/heads/copy"] == main
    with pytest.raises(RefConflict):
        repo.update_ref("refs/heads/copy", main, ZERO_SHA)
    work.branch("feature")
    work.write("x", "x\n")
    newer = work.commit("x", "feature")
    with pytest.raises(RefConflict):
        repo.update_ref("refs/heads/copy", newer, "1" * 40)
    assert repo.refs()["refs/heads/copy"] == main
    repo.update_ref("refs/heads/copy", newer, main)
    assert repo.refs()["refs/heads/copy"] == newer
    repo.delete_ref("refs/heads/copy")
    assert "refs/heads/copy" not in repo.refs()
    with pytest.raises(UnknownRevision):
        repo.delete_ref("refs/heads/copy")
    for bad in ("main", "refs/heads/a..b", "refs/heads/-x", "HEAD"):
        with pytest.raises(ValueError):
            repo.update_ref(bad, main)
    with pytest.raises(UnknownRevision):
        repo.update_ref("refs/heads/ghost", "2" * 40)


# --- merges ------------------------------------------------------------------------------------


@pytest.fixture
def diverged(repo: BareRepo, work: Work) -> tuple[str, str, list[str]]:
    """main gained a README change after `feature` branched and added two commits."""
    work.branch("feature")
    work.write("feature.txt", "one\n")
    first = work.commit("feature one", "feature")
    work.write("app.py", SEED["app.py"] + "line 21\n")
    second = work.commit("feature two", "feature")
    work.branch("main")
    work.write("README.md", "# demo, updated\n")
    base = work.commit("main moves", "main")
    return base, second, [first, second]


def expect_tree(repo: BareRepo, sha: str) -> None:
    assert repo.read_blob(sha, "README.md") == b"# demo, updated\n"
    assert repo.read_blob(sha, "feature.txt") == b"one\n"
    assert repo.read_blob(sha, "app.py") == (SEED["app.py"] + "line 21\n").encode()


def test_merge_commit(repo: BareRepo, diverged: tuple[str, str, list[str]]) -> None:
    base, head, _ = diverged
    assert repo.mergeable("main", head)
    new = repo.merge(
        "refs/heads/main",
        head,
        "merge",
        title="Merge pull request #1",
        message="Feature",
        author=("Ann", "ann@x.invalid"),
        expected_base=base,
    )
    info = repo.commit_info(new)
    assert info.parents == (base, head)
    assert info.message == "Merge pull request #1\n\nFeature"
    assert (info.author_name, info.committer_name) == ("Ann", "GitHub")
    assert repo.resolve("main") == new
    expect_tree(repo, new)


def test_squash(repo: BareRepo, diverged: tuple[str, str, list[str]]) -> None:
    base, head, _ = diverged
    new = repo.merge("main", head, "squash", title="Feature (#1)", message="", author=("A", "a@x"))
    info = repo.commit_info(new)
    assert info.parents == (base,)
    assert info.message == "Feature (#1)"
    assert repo.resolve("main") == new
    expect_tree(repo, new)


def test_rebase_replays_each_commit(repo: BareRepo, diverged: tuple[str, str, list[str]]) -> None:
    base, head, originals = diverged
    new = repo.merge("main", head, "rebase", title="ignored", message="", author=("A", "a@x"))
    replayed = repo.commits_between(base, new)
    assert [c.message for c in replayed] == ["feature one", "feature two"]
    assert replayed[0].parents == (base,)
    assert replayed[1].parents == (replayed[0].sha,)
    assert {c.sha for c in replayed}.isdisjoint(originals)
    assert all(c.author_name == "Dev" and c.committer_name == "GitHub" for c in replayed)
    first = repo.commit_info(originals[0])
    assert replayed[0].author_date == first.author_date
    assert repo.read_blob(replayed[0].sha, "app.py") == SEED["app.py"].encode()
    assert repo.resolve("main") == new
    expect_tree(repo, new)


@pytest.mark.parametrize("method", ["merge", "squash", "rebase"])
def test_conflicting_change_raises_and_leaves_ref(repo: BareRepo, work: Work, method: str) -> None:
    work.branch("feature")
    work.write("README.md", "# feature version\n")
    head = work.commit("feature readme", "feature")
    work.branch("main")
    work.write("README.md", "# main version\n")
    base = work.commit("main readme", "main")

    assert repo.mergeable("main", head) is False
    with pytest.raises(MergeConflict):
        repo.merge("main", head, method, title="t", message="", author=("A", "a@x"))
    assert repo.resolve("main") == base


def test_stale_expected_base_raises_and_leaves_ref(
    repo: BareRepo, diverged: tuple[str, str, list[str]]
) -> None:
    base, head, originals = diverged
    with pytest.raises(MergeConflict, match="expected"):
        repo.merge(
            "main",
            head,
            "squash",
            title="t",
            message="",
            author=("A", "a@x"),
            expected_base=originals[0],
        )
    assert repo.resolve("main") == base


def test_nothing_to_merge(repo: BareRepo) -> None:
    main = repo.resolve("main")
    assert main is not None
    with pytest.raises(MergeConflict, match="nothing to merge"):
        repo.merge("main", main, "merge", title="t", message="", author=("A", "a@x"))
    with pytest.raises(ValueError):
        repo.merge("main", main, "octopus", title="t", message="", author=("A", "a@x"))
