"""Suite-wide fixtures. Shared doubles (the GitHub sandbox, the fake model servers), the
database fixtures and private Redis servers live in `tests/plugins/` so every test file uses
the same one."""

pytest_plugins: list[str] = [
    "tests.plugins.database",
    "tests.plugins.github_traffic",
    "tests.plugins.sandbox",
    "tests.plugins.models",
    "tests.plugins.processes",
    "tests.plugins.bubblewrap",
]
