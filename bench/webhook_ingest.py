"""Webhook ingest benchmark: `ourobot serve` against a bare FastAPI endpoint, in the same run.

    .venv/bin/python bench/webhook_ingest.py [--requests 1000] [--rounds 3] [--check]

Starts, on 127.0.0.1 only: a bare FastAPI app that answers 202 without doing anything (the
ceiling: same uvicorn settings as `ourobot serve`), `ourobot serve` in embedded mode (SQLite
inbox in a temporary data directory), and `ourobot serve` in Redis mode when a Redis answers
(OUROBOT_REDIS_URL, else 127.0.0.1:6379; an empty database number is picked and flushed after).
A fourth server, "receiver only", is serve's receiver with nothing processing the rows: embedded
mode runs the jobs in the same interpreter, and this row separates ingest from processing.
Each gets the same signed deliveries with fresh delivery ids over `--concurrency` (16)
keep-alive connections, in `--rounds` interleaved rounds. Prints throughput, p50/p99 latency
and the ratio ours/bare, and checks that each inbox holds exactly one row per delivery.
`--check` exits 1 unless every mode reaches half the bare throughput with p99 under 50 ms
(the issue's bar). Loopback only: GitHub's API URL points at a closed local port, and model
keys are removed from the servers' environment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.settings import Settings  # noqa: E402
from app.store import Store  # noqa: E402
from app.webhooks.receiver import WEBHOOK_PATH  # noqa: E402
from app.webhooks.signature import sign  # noqa: E402

# A fresh secret per run: nothing to leak, nothing to reuse.
SECRET = secrets.token_hex(16)
EXAMPLE = REPO.parent / "shared/github-webhook-examples/issue_comment/created.payload.json"
MIN_RATIO = 0.5
MAX_P99_MS = 50.0
STARTUP_TIMEOUT_S = 30.0
REDIS_BENCH_DBS = range(15, 9, -1)
UNREACHABLE_GITHUB = "http://127.0.0.1:9"


@dataclass(frozen=True)
class Target:
    name: str
    url: str
    data_dir: Path | None  # where its inbox is, for the row-count check


@dataclass(frozen=True)
class Result:
    name: str
    sent: int
    failed: int
    seconds: float
    latencies_ms: list[float]

    @classmethod
    def pooled(cls, rounds: list[Result]) -> Result:
        """All rounds of one target as one run: total sent over total time, all latencies."""
        if all(isinstance(result, WrkResult) for result in rounds):
            return WrkResult.pooled_wrk(rounds)  # type: ignore[arg-type]
        return cls(
            rounds[0].name,
            sum(result.sent for result in rounds),
            sum(result.failed for result in rounds),
            sum(result.seconds for result in rounds),
            [latency for result in rounds for latency in result.latencies_ms],
        )

    @property
    def throughput(self) -> float:
        return self.sent / self.seconds

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@dataclass(frozen=True)
class WrkResult(Result):
    """A wrk round: wrk reports percentiles, not each latency."""

    p50_ms: float = 0.0
    p99_ms: float = 0.0

    @classmethod
    def pooled_wrk(cls, rounds: list[WrkResult]) -> WrkResult:
        # Conservative: the median round's p50, the worst round's p99.
        return cls(
            rounds[0].name,
            sum(result.sent for result in rounds),
            sum(result.failed for result in rounds),
            sum(result.seconds for result in rounds),
            [],
            p50_ms=statistics.median(result.p50_ms for result in rounds),
            p99_ms=max(result.p99_ms for result in rounds),
        )

    def percentile(self, share: float) -> float:
        return self.p50_ms if share <= 0.5 else self.p99_ms


def main() -> int:
    args = _parse_args()
    if args.serve_bare is not None:
        _serve_bare(args.serve_bare)
        return 0
    if args.serve_receiver is not None:
        _serve_receiver_only(args.serve_receiver)
        return 0
    body = _payload()
    with tempfile.TemporaryDirectory(prefix="ourobot-bench-") as scratch:
        results = asyncio.run(_run_all(args, body, Path(scratch)))
    return _report(results, check=args.check)


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument(
        "--requests", type=int, default=1000, help="timed deliveries per target and round"
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per target")
    parser.add_argument("--warmup", type=int, default=200, help="untimed deliveries first")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--max-seconds", type=float, default=30.0, help="time cap per target and round"
    )
    parser.add_argument(
        "--ourobot", default=str(Path(sys.executable).with_name("ourobot")), help="CLI to run"
    )
    parser.add_argument("--no-redis", action="store_true", help="skip the Redis-mode run")
    parser.add_argument(
        "--client",
        choices=("auto", "wrk", "python"),
        default="auto",
        help="load generator: wrk (C, when installed: leaves the CPU to the servers) or httpx",
    )
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="length of one timed wrk round per target"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the bar is missed")
    parser.add_argument("--serve-bare", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--serve-receiver", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.requests <= 100_000 or not 1 <= args.rounds <= 20:
        parser.error("--requests must be 1..100000 and --rounds 1..20")
    if not 1 <= args.concurrency <= 256:
        parser.error("--concurrency must be 1..256")
    return args


def _payload() -> bytes:
    """A realistic delivery body: GitHub's issue_comment example, or a synthetic one."""
    if EXAMPLE.is_file():
        return EXAMPLE.read_bytes()
    filler = "x" * 6000
    return json.dumps(
        {"action": "created", "installation": {"id": 1}, "comment": {"body": filler}}
    ).encode()


# ---- the servers ----


def _serve_bare(port: int) -> None:
    """The ceiling: FastAPI run by the same code as `ourobot serve`, answering 202, no more."""
    from fastapi import FastAPI, Request, Response

    from app.webhooks import server

    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    async def accept(_: Request) -> Response:
        return Response(status_code=202)

    async def healthz(_: Request) -> Response:
        return Response(status_code=200)

    # Plain routes, as the receiver registers its own.
    app.add_route(WEBHOOK_PATH, accept, methods=["POST"])
    app.add_route("/healthz", healthz, methods=["GET"])
    server.run(app, server.listen("127.0.0.1", port))


def _serve_receiver_only(port: int) -> None:
    """`ourobot serve`'s receiver with nothing processing the rows: the ingest path alone.

    Embedded mode runs the jobs behind the inbox, so its figure mixes ingest with processing;
    this one isolates what receiving, verifying and recording cost (the same two processes
    as `ourobot serve`, with a dispatcher that submits nothing).
    """
    import logging

    from app.settings import load_settings
    from app.webhooks import server
    from app.webhooks.inbox import Inbox
    from app.webhooks.inbox_process import InboxProcess
    from app.webhooks.receiver import create_receiver_app

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = load_settings()
    store = Store.open(settings)
    store.migrate()
    recorder = InboxProcess(settings, _receiver_only_components)
    recorder.start()
    app = create_receiver_app(settings, inbox=Inbox(store), recorder=recorder)
    server.run(app, server.listen("127.0.0.1", port))
    recorder.close()
    store.close()


def _receiver_only_components(settings: Settings, store: Store):  # type: ignore[no-untyped-def]
    from app.webhooks.dispatch import InboxOnlyDispatcher

    return InboxOnlyDispatcher(), None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def _process(command: list[str], env: dict[str, str], log_path: Path) -> Iterator[None]:
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def _wait_healthy(url: str, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            try:
                if (await client.get(url + "/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    tail = log_path.read_text(errors="replace")[-2000:]
    raise SystemExit(f"bench: {url} did not become healthy:\n{tail}")


def _clean_env() -> dict[str, str]:
    """The environment minus ourobot's settings and model keys: nothing reaches a real service."""
    dropped = ("OUROBOT_", "ANTHROPIC_", "OPENAI_")
    return {k: v for k, v in os.environ.items() if not k.startswith(dropped)}


def _serve_env(data_dir: Path, redis_url: str | None) -> dict[str, str]:
    env = _clean_env()
    env.update(
        OUROBOT_DATA_DIR=str(data_dir),
        OUROBOT_WEBHOOK_SECRET=SECRET,
        # Loopback only: any GitHub call the embedded runner makes fails fast, locally.
        OUROBOT_GITHUB_API_URL=UNREACHABLE_GITHUB,
    )
    if redis_url:
        env["OUROBOT_REDIS_URL"] = redis_url
    return env


# ---- Redis (optional) ----


def _redis_url() -> str | None:
    """A Redis URL on an empty database number of the local Redis, or None if none answers."""
    import redis

    base = os.environ.get("OUROBOT_REDIS_URL") or "redis://127.0.0.1:6379/0"
    for number in REDIS_BENCH_DBS:
        try:
            client = redis.Redis.from_url(base, db=number, socket_timeout=2)
            if client.dbsize() == 0:
                pool = client.connection_pool.connection_kwargs
                return f"redis://{pool.get('host', '127.0.0.1')}:{pool.get('port', 6379)}/{number}"
        except redis.RedisError:
            return None
    return None


def _flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url, socket_timeout=2).flushdb()


# ---- the load ----


async def _run_all(args: argparse.Namespace, body: bytes, scratch: Path) -> list[Result]:
    """Start every server, then run the rounds, interleaving the targets within each round.

    Interleaving spreads whatever else the machine is doing over all targets alike, so the
    ratio compares like with like even when the absolute figures wander.
    """
    modes: list[tuple[str, str | None]] = [("ourobot embedded", None)]
    redis_url = None if args.no_redis else _redis_url()
    if redis_url:
        modes.append(("ourobot redis", redis_url))
    else:
        print("bench: Redis mode skipped (no Redis answering, or --no-redis)")
    with ExitStack() as servers:
        targets = [
            await _start_bare(servers, scratch),
            await _start_receiver_only(servers, scratch),
        ]
        for name, url in modes:
            if url:
                servers.callback(_flush_redis, url)
            targets.append(await _start_ours(servers, name, url, args, scratch))
        wrk = _wrk(args)
        load = _load if wrk is None else _wrk_loader(wrk, scratch)
        print(f"bench: load generator {'httpx (Python)' if wrk is None else wrk}")
        warmups = {target.name: await load(target, args, body, args.warmup) for target in targets}
        rounds: dict[str, list[Result]] = {target.name: [] for target in targets}
        for _ in range(args.rounds):
            for target in targets:
                # Embedded mode works off its backlog after a round; that work must not run
                # during the next target's round.
                await _wait_quiet()
                rounds[target.name].append(await load(target, args, body, args.requests))
    for target in targets:
        if target.data_dir is not None:
            runs = [warmups[target.name], *rounds[target.name]]
            # wrk stops mid-flight at the end of a round: up to one request per connection may
            # be recorded without its answer being counted.
            slack = 0 if wrk is None else args.concurrency * len(runs)
            _check_inbox(target.data_dir, sum(run.sent - run.failed for run in runs), slack)
    return [Result.pooled(results) for results in rounds.values()]


QUIET_BUSY_SHARE = 0.15
QUIET_TIMEOUT_S = 120.0


async def _wait_quiet() -> None:
    """Wait (bounded) until the machine's CPUs are mostly idle; Linux only, else at once."""
    deadline = time.monotonic() + QUIET_TIMEOUT_S
    before = _cpu_times()
    while before is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        after = _cpu_times()
        if after is None:
            return
        busy, total = after[0] - before[0], after[1] - before[1]
        if total > 0 and busy / total < QUIET_BUSY_SHARE:
            return
        before = after
    if before is not None:
        print(f"bench: the machine stayed busy for {QUIET_TIMEOUT_S:.0f} s; measuring anyway")


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies over all CPUs since boot, from /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    values = [int(field) for field in fields]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return sum(values) - idle, sum(values)


def _wrk(args: argparse.Namespace) -> str | None:
    import shutil

    found = shutil.which("wrk")
    if args.client == "wrk" and found is None:
        raise SystemExit("bench: --client wrk, but wrk is not installed (apt-get install wrk)")
    return None if args.client == "python" else found


WRK_SCRIPT = """
local body_file = io.open(os.getenv("BENCH_BODY"), "rb")
wrk.method = "POST"
wrk.body = body_file:read("*a")
body_file:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-GitHub-Event"] = "issue_comment"
wrk.headers["X-Hub-Signature-256"] = os.getenv("BENCH_SIGNATURE")
local run = os.getenv("BENCH_RUN")
local threads = {}
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
local counter = 0
function request()
  counter = counter + 1
  -- the signature covers the body only, so a fresh delivery id per request keeps it valid
  wrk.headers["X-GitHub-Delivery"] = run .. "-" .. tid .. "-" .. counter
  return wrk.format(nil, os.getenv("BENCH_PATH"))
end
function done(summary, latency, requests)
  io.write(string.format(
    'BENCH {"requests": %d, "status_errors": %d, "other_errors": %d, '
    .. '"seconds": %f, "p50_us": %d, "p99_us": %d, "mean_us": %f}\\n',
    summary.requests, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration / 1e6, latency:percentile(50), latency:percentile(99), latency.mean))
end
"""


def _wrk_loader(wrk: str, scratch: Path):  # type: ignore[no-untyped-def]
    script = scratch / "bench.lua"
    script.write_text(WRK_SCRIPT)

    async def load(target: Target, args: argparse.Namespace, body: bytes, count: int) -> Result:
        body_path = scratch / "body.json"
        body_path.write_bytes(body)
        seconds = args.seconds if count > args.warmup else max(1.0, args.seconds / 5)
        env = {
            **os.environ,
            "BENCH_BODY": str(body_path),
            "BENCH_SIGNATURE": sign(SECRET, body),
            "BENCH_RUN": uuid.uuid4().hex,
            "BENCH_PATH": WEBHOOK_PATH,
        }
        command = [
            wrk, "-t1", f"-c{args.concurrency}", f"-d{seconds:.0f}s", "--timeout", "10s",
            "-s", str(script), target.url,
        ]  # fmt: skip
        proc = await asyncio.create_subprocess_exec(
            *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await proc.communicate()
        line = next((ln for ln in out.decode().splitlines() if ln.startswith("BENCH ")), None)
        if line is None:
            raise SystemExit(f"bench: wrk gave no summary: {err.decode()[-300:]}")
        summary = json.loads(line[len("BENCH ") :])
        sent = int(summary["requests"])
        failed = int(summary["status_errors"]) + int(summary["other_errors"])
        # wrk reports percentiles, not every latency: represent the round by them.
        return WrkResult(
            target.name,
            sent,
            failed,
            float(summary["seconds"]),
            [],
            p50_ms=summary["p50_us"] / 1000,
            p99_ms=summary["p99_us"] / 1000,
        )

    return load


async def _start_bare(servers: ExitStack, scratch: Path) -> Target:
    port = _free_port()
    log_path = scratch / "bare.log"
    command = [sys.executable, __file__, "--serve-bare", str(port)]
    servers.enter_context(_process(command, _clean_env(), log_path))
    target = Target("bare FastAPI", f"http://127.0.0.1:{port}", None)
    await _wait_healthy(target.url, log_path)
    return target


async def _start_receiver_only(servers: ExitStack, scratch: Path) -> Target:
    port = _free_port()
    data_dir = scratch / "receiver-only"
    log_path = scratch / "receiver-only.log"
    command = [sys.executable, __file__, "--serve-receiver", str(port)]
    servers.enter_context(_process(command, _serve_env(data_dir, None), log_path))
    target = Target("receiver only", f"http://127.0.0.1:{port}", data_dir)
    await _wait_healthy(target.url, log_path)
    return target


async def _start_ours(
    servers: ExitStack, name: str, redis_url: str | None, args: argparse.Namespace, scratch: Path
) -> Target:
    port = _free_port()
    data_dir = scratch / name.replace(" ", "-")
    log_path = scratch / f"{data_dir.name}.log"
    command = [args.ourobot, "serve", "--host", "127.0.0.1", "--port", str(port)]
    servers.enter_context(_process(command, _serve_env(data_dir, redis_url), log_path))
    target = Target(name, f"http://127.0.0.1:{port}", data_dir)
    await _wait_healthy(target.url, log_path)
    return target


async def _load(target: Target, args: argparse.Namespace, body: bytes, count: int) -> Result:
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "issue_comment",
        "X-Hub-Signature-256": sign(SECRET, body),
    }
    # One client per connection: httpx's shared pool spends more CPU than the servers under
    # test once 16 requests queue on it, which would measure the client, not the server.
    clients = [
        httpx.AsyncClient(base_url=target.url, limits=httpx.Limits(max_connections=1), timeout=30)
        for _ in range(args.concurrency)
    ]
    try:
        started = time.perf_counter()
        latencies, failed = await _burst(
            clients, headers, body, count, deadline=started + args.max_seconds
        )
        seconds = time.perf_counter() - started
    finally:
        for client in clients:
            await client.aclose()
    return Result(target.name, len(latencies), failed, seconds, latencies)


async def _burst(
    clients: list[httpx.AsyncClient],
    headers: dict[str, str],
    body: bytes,
    count: int,
    deadline: float,
) -> tuple[list[float], int]:
    """Send `count` deliveries over the clients' connections; latencies in ms, failures."""
    remaining = iter(range(count))
    latencies: list[float] = []
    failures = [0]

    async def connection(client: httpx.AsyncClient) -> None:
        for _ in remaining:
            if time.perf_counter() > deadline:
                return
            fresh = {**headers, "X-GitHub-Delivery": str(uuid.uuid4())}
            began = time.perf_counter()
            response = await client.post(WEBHOOK_PATH, content=body, headers=fresh)
            latencies.append((time.perf_counter() - began) * 1000)
            if response.status_code != 202:
                failures[0] += 1

    await asyncio.gather(*(connection(client) for client in clients))
    return latencies, failures[0]


def _check_inbox(data_dir: Path, expected: int, slack: int = 0) -> None:
    store = Store.open(Settings(data_dir=data_dir, database_url=None))
    try:
        with store.engine.connect() as connection:
            rows = connection.exec_driver_sql("SELECT count(*) FROM webhook_inbox").scalar_one()
    finally:
        store.close()
    if not expected <= rows <= expected + slack:
        raise SystemExit(f"bench: inbox in {data_dir} has {rows} rows, expected {expected}")


# ---- the report ----


def _report(results: list[Result], *, check: bool) -> int:
    bare = results[0]
    columns = ("sent", "fail", "req/s", "p50 ms", "p99 ms", "ratio")
    widths = (6, 5, 8, 7, 7, 6)
    print(f"{'target':<18}", *(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True)))
    ok = True
    for result in results:
        ratio = result.throughput / bare.throughput
        print(
            f"{result.name:<18} {result.sent:>6} {result.failed:>5} {result.throughput:>8.0f} "
            f"{result.percentile(0.5):>7.1f} {result.percentile(0.99):>7.1f} {ratio:>6.2f}"
        )
        if result.name.startswith("ourobot"):
            ok &= ratio >= MIN_RATIO and result.percentile(0.99) < MAX_P99_MS and not result.failed
    print(
        f"bar: ratio >= {MIN_RATIO} and p99 < {MAX_P99_MS:.0f} ms for every ourobot mode: "
        f"{'met' if ok else 'MISSED'} (median of all bare latencies "
        f"{bare.percentile(0.5):.1f} ms)"
    )
    return 1 if check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
