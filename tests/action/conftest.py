"""The gate's sandbox world (`gate`) for the Action's gate tests."""

from tests.jobs.gate_check.conftest import gate, make_world  # noqa: F401  (fixtures)
