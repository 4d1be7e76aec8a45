"""Bare repository mirrors fetched over git smart HTTP from the sandbox with a real git."""

from __future__ import annotations

import base64
import subprocess
import threading
from pathlib import Path

import pytest

from app.workspace.mirror import MirrorError, RepoMirror
from tests.jobs.guards_check.conftest import GuardsWorld, WorldFactory


def files_mention(root: Path, secret: str) -> list[Path]:
    needles = [secret.encode(), base64.b64encode(f"x-access-token:{secret}".encode())]
    return [
        path
        for path in root.rglob("*")
        if path.is_file() and any(needle in path.read_bytes() for needle in needles)
    ]


def mirror_of(world: GuardsWorld) -> RepoMirror:
    return RepoMirror(world.settings.data_dir, world.repo.full_name)


def test_a_mirror_fetches_the_base_branch_and_keeps_no_token(make_world: WorldFactory) -> None:
    world = make_world()
    token = world.installation_token()
    mirror = mirror_of(world)

    sha = mirror.fetch_branch(world.repo.clone_url, "main", token=token)

    assert sha == world.repo.head_sha
    assert mirror.path == world.settings.data_dir / "mirrors" / "octo" / "demo.git"
    assert files_mention(mirror.path, token) == []
    config = (mirror.path / "config").read_text()
    assert "bare = true" in config
    assert "auto = 0" in config  # no gc may prune a head fetched by SHA


def test_a_pull_head_is_fetched_through_its_pull_ref(make_world: WorldFactory) -> None:
    world = make_world()
    payload = world.bot_pull({"notes.txt": "hello\n"})
    head = payload["pull_request"]["head"]["sha"]
    mirror = mirror_of(world)
    assert not mirror.has_commit(head)

    mirror.fetch_pull_head(world.repo.clone_url, 1, head, token=world.installation_token())

    assert mirror.has_commit(head)
    assert mirror.resolve("refs/pull/1/head") == head


def test_a_refused_token_is_a_one_line_error_without_the_token(make_world: WorldFactory) -> None:
    world = make_world()
    bad = "ghs_" + "Z" * 36
    with pytest.raises(MirrorError) as info:
        mirror_of(world).fetch_branch(world.repo.clone_url, "main", token=bad)
    message = str(info.value)
    assert message.startswith("cannot fetch octo/demo:")
    assert bad not in message and "\n" not in message


def test_a_missing_branch_or_commit_is_an_error(make_world: WorldFactory) -> None:
    world = make_world()
    token = world.installation_token()
    mirror = mirror_of(world)
    with pytest.raises(MirrorError, match="cannot fetch octo/demo"):
        mirror.fetch_branch(world.repo.clone_url, "no-such-branch", token=token)
    with pytest.raises(MirrorError):
        mirror.fetch_pull_head(world.repo.clone_url, 99, "c" * 40, token=token)


@pytest.mark.parametrize(
    ("full_name", "branch", "url", "error"),
    [
        ("../etc", "main", "http://127.0.0.1/x.git", "invalid repository name"),
        ("octo/..", "main", "http://127.0.0.1/x.git", "invalid repository name"),
        ("octo/a b", "main", "http://127.0.0.1/x.git", "invalid repository name"),
        ("octo/demo", "a..b", "http://127.0.0.1/x.git", "invalid branch name"),
        ("octo/demo", "main", "file:///tmp/x.git", "refusing to fetch"),
        ("octo/demo", "main", "ext::sh -c touch% /tmp/pwned", "refusing to fetch"),
    ],
)
def test_untrusted_names_and_urls_are_refused(
    tmp_path: Path, full_name: str, branch: str, url: str, error: str
) -> None:
    with pytest.raises(MirrorError, match=error):
        RepoMirror(tmp_path, full_name).fetch_branch(url, branch, token="t")
    assert not (tmp_path / "pwned").exists()


def test_a_malformed_head_sha_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MirrorError, match="invalid head SHA"):
        RepoMirror(tmp_path, "octo/demo").fetch_pull_head(
            "http://x/y.git", 1, "--upload-pack=x", token="t"
        )


def test_one_fetch_at_a_time_per_mirror(make_world: WorldFactory) -> None:
    world = make_world()
    token = world.installation_token()
    holder = mirror_of(world)
    with holder.locked(), pytest.raises(MirrorError, match="stayed locked"):
        mirror_of(world).fetch_branch(world.repo.clone_url, "main", token=token, lock_timeout_s=0.2)

    errors: list[BaseException] = []

    def fetch() -> None:
        try:
            mirror_of(world).fetch_branch(world.repo.clone_url, "main", token=token)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    fsck = subprocess.run(
        ["git", "--git-dir", str(holder.path), "fsck", "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stderr
