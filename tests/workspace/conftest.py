"""The mirror tests fetch from the guards-check world: a sandbox repository with the App
installed, a base branch and pull request heads (its `make_world` fixture)."""

from tests.jobs.guards_check.conftest import make_world

__all__ = ["make_world"]
