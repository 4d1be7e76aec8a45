"""What the GitHub sandbox saw during the tests whose traffic is checked against GitHub's own
description: every HTTP exchange (request and answer) and every webhook delivery, written as
JSONL lines, one file per pytest process, in one directory per run.

The tests covered are those where ourobot itself talks to GitHub: the job, command and gate
tests (`COVERED`), and the demo, whose sandbox runs in its own process and hands its record
over with `TrafficLog.include_record`. The sandbox's own tests are not: they send GitHub what
GitHub would refuse on purpose, to see it refused.

The run's directory is made by the controlling pytest process and handed to xdist workers.
When its session ends, each process checks its own file against GitHub's description
(`github_conformance`: the second CPU does half the work) and hands the figures to the
controller, which reports them as one test, `CHECK_ID`: passed, failed with every problem
named by its operation and rule, or skipped with one line where the description cannot be
had (no npm, no network). A run of no covered test reports nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.plugins import github_conformance, github_description

COVERED = ("tests/jobs/", "tests/commands/", "tests/gate/", "tests/cli/test_demo.py")
WORKER_KEY = "ourobot_traffic_dir"
OUTPUT_KEY = "ourobot_github_conformance"
CHECK_FILE = "tests/plugins/github_conformance.py"
CHECK_NAME = "the covered tests' GitHub traffic against GitHub's OpenAPI description"
CHECK_ID = f"{CHECK_FILE}::{CHECK_NAME}"
SHOWN_PROBLEMS = 40


class TrafficLog:
    """Appends entries to this process's file while a covered test runs."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.path = directory / f"{name}.jsonl"
        self.test: str | None = None  # the covered test running now, else None
        self._lock = threading.Lock()

    def _write(self, kind: str, entry: dict[str, Any], test: str | None) -> None:
        if test is None:
            return
        line = json.dumps({"kind": kind, "test": test, **entry}, sort_keys=True)
        with self._lock, self.path.open("a") as out:
            out.write(line + "\n")

    def request(self, entry: dict[str, Any]) -> None:
        """A `request_sink` for the sandbox: one exchange."""
        self._write("http", entry, self.test)

    def delivery(self, entry: dict[str, Any]) -> None:
        """A `delivery_sink` for the sandbox: one webhook attempt."""
        self._write("webhook", entry, self.test)

    def include_record(self, record: Path, test: str) -> None:
        """An `ourobot demo --record` directory: its sandbox exchanges and webhooks."""
        for name, kind in (("sandbox.jsonl", "http"), ("webhooks.jsonl", "webhook")):
            path = record / name
            lines = path.read_text().splitlines() if path.is_file() else []
            for line in lines:
                self._write(kind, json.loads(line), test)


def covered(nodeid: str) -> bool:
    return nodeid.startswith(COVERED)


def run_directory(config: pytest.Config) -> Path:
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        return Path(worker[WORKER_KEY])
    return Path(config.stash[_DIRECTORY])


_DIRECTORY = pytest.StashKey[str]()
_LOG = pytest.StashKey[TrafficLog]()
_SUMMARIES = pytest.StashKey[list[dict[str, Any]]]()


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config, "workerinput", None) is None:
        # `-p no:cacheprovider` leaves no `config.cache`: a folder of pytest's own tmp then.
        cache = getattr(config, "cache", None)
        base = (
            cache.mkdir("github-traffic")
            if cache
            else Path(tempfile.gettempdir()) / "ourobot-github-traffic"
        )
        directory = base / f"run-{os.getpid()}"
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.jsonl"):
            stale.unlink()
        config.stash[_DIRECTORY] = str(directory)
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    config.stash[_LOG] = TrafficLog(run_directory(config), name)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker writes into the controller's run directory."""
    node.workerinput[WORKER_KEY] = node.config.stash[_DIRECTORY]


def traffic_log(config: pytest.Config) -> TrafficLog:
    return config.stash[_LOG]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # A covered test's webhooks may arrive after it ends: they count as its own until the
    # next test starts (the next one's sandbox reset drops what was still queued).
    traffic_log(item.config).test = item.nodeid if covered(item.nodeid) else None
    return (yield)


@pytest.fixture(scope="session")
def github_traffic(pytestconfig: pytest.Config) -> TrafficLog:
    return traffic_log(pytestconfig)


# ---- the check, when the session ends --------------------------------------------------------
def _check(log: TrafficLog) -> dict[str, Any] | None:
    """This process's traffic checked: the figures and problems, as plain data."""
    if not log.path.is_file():
        return None
    started = time.monotonic()
    try:
        checker = github_conformance.checker()
    except github_description.Unavailable as exc:
        log.path.unlink()
        return {"unavailable": str(exc)}
    report = github_conformance.check_file(log.path, checker)
    if not report.problems:
        log.path.unlink()  # large, and of no further use
    return {
        "problems": [str(p) for p in report.problems],
        "operations": dict(report.operations),
        "requests": report.requests,
        "responses": report.responses,
        "webhooks": report.webhooks,
        "not_checked": dict(report.not_checked),
        "seconds": time.monotonic() - started,
    }


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist: a worker's figures, for the controller's report."""
    summary = getattr(node, "workeroutput", {}).get(OUTPUT_KEY)
    if summary is not None:
        node.config.stash.setdefault(_SUMMARIES, []).append(summary)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    summary = _check(traffic_log(config))
    worker_output = getattr(config, "workeroutput", None)
    if worker_output is not None:
        worker_output[OUTPUT_KEY] = summary
        return
    summaries = [*config.stash.get(_SUMMARIES, []), *([summary] if summary else [])]
    if summaries:
        _report(session, summaries)


def _merged(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {"problems": [], "requests": 0, "responses": 0, "webhooks": 0,
                              "seconds": 0.0}  # fmt: skip
    operations: Counter[str] = Counter()
    not_checked: Counter[str] = Counter()
    for one in summaries:
        merged["problems"] += one.get("problems", [])
        for key in ("requests", "responses", "webhooks", "seconds"):
            merged[key] += one.get(key, 0)
        operations.update(one.get("operations", {}))
        not_checked.update(one.get("not_checked", {}))
    merged["operations"], merged["not_checked"] = operations, not_checked
    return merged


def _report(session: pytest.Session, summaries: list[dict[str, Any]]) -> None:
    config = session.config
    unavailable = [s["unavailable"] for s in summaries if "unavailable" in s]
    if len(unavailable) == len(summaries):
        reason = f"Skipped: GitHub's description is not available here: {unavailable[0]}"
        _log_report(config, "skipped", (CHECK_FILE, 0, reason), 0.0)
        return
    merged = _merged(summaries)
    config.stash[_FIGURES] = merged
    if not merged["problems"]:
        _log_report(config, "passed", None, merged["seconds"])
        return
    counted = Counter(merged["problems"])
    lines = [f"{n} x {problem}" if n > 1 else problem for problem, n in counted.most_common()]
    if len(lines) > SHOWN_PROBLEMS:
        lines = [*lines[:SHOWN_PROBLEMS], f"... and {len(lines) - SHOWN_PROBLEMS} more"]
    text = "GitHub's description rejects what the sandbox saw:\n" + "\n".join(lines)
    _log_report(config, "failed", text, merged["seconds"])
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_FIGURES = pytest.StashKey[dict[str, Any]]()


def _log_report(config: pytest.Config, outcome: str, longrepr: Any, seconds: float) -> None:
    report = pytest.TestReport(
        nodeid=CHECK_ID,
        location=(CHECK_FILE, 0, CHECK_NAME),
        keywords={},
        outcome=outcome,  # type: ignore[arg-type]
        longrepr=longrepr,
        when="call",
        duration=seconds,
    )
    config.hook.pytest_runtest_logreport(report=report)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    figures = config.stash.get(_FIGURES, None)
    if figures is None:
        return
    operations = figures["operations"]
    rest = sum(1 for name in operations if not name.startswith("webhook "))
    terminalreporter.write_line(
        f"GitHub conformance ({github_description.PACKAGE}@{github_description.VERSION}): "
        f"{rest} REST operations by version and {len(operations) - rest} webhooks; "
        f"{figures['requests']} requests, {figures['responses']} responses and "
        f"{figures['webhooks']} webhook payloads validated in {figures['seconds']:.1f}s; "
        f"{len(figures['problems'])} problems"
    )
    by_version: dict[str, list[str]] = {}
    for name in sorted(operations):
        version, operation = name.split(" ", 1)
        by_version.setdefault(version, []).append(operation)
    for version, names in sorted(by_version.items()):
        terminalreporter.write_line(f"  {version} ({len(names)}): {', '.join(names)}")
    for reason, count in sorted(figures["not_checked"].items()):
        terminalreporter.write_line(f"  not checked: {count} x {reason}")
