"""The status page: off unless a token is configured, refused without it, escaped throughout,
and looked at by a real headless Chromium against a real `ourobot serve` on a seeded store."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from app.controls.ledger_query import LedgerFilter, search
from app.controls.overview import DaySpend, read_overview
from app.controls.patterns import read_register
from app.errors import ConfigError
from app.settings import Settings, load_settings
from app.statuspage.access import Access, cookie_value, decide
from app.statuspage.chart import spend_chart
from app.statuspage.page import PageData, render_page, web_url_of
from app.store import Store
from tests.plugins.ledger_seed import HOSTILE_REPO, REPO, seed_ledger
from tests.webhooks.serve_process import ServeProcess, serve_env

TOKEN = "status-token-" + "x" * 24
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


# ---- who may read it --------------------------------------------------------------------------


def test_the_token_is_required_and_compared_exactly():
    def access(**given):
        return decide(TOKEN, **{"authorization": None, "query": None, "cookie": None, **given})

    assert access() is Access.DENIED
    assert access(authorization=f"Bearer {TOKEN}") is Access.GRANTED
    assert access(authorization=f"bearer {TOKEN}") is Access.GRANTED
    assert access(authorization=f"Bearer {TOKEN[:-1]}") is Access.DENIED
    assert access(authorization=f"Basic {TOKEN}") is Access.DENIED
    assert access(query=TOKEN) is Access.FROM_QUERY
    assert access(query=TOKEN + "x") is Access.DENIED
    assert access(cookie=cookie_value(TOKEN)) is Access.GRANTED
    assert access(cookie=TOKEN) is Access.DENIED  # the cookie holds an HMAC, never the token
    assert access(authorization="Bearer wrong", cookie=cookie_value(TOKEN)) is Access.GRANTED


def test_a_short_token_is_refused_at_startup():
    with pytest.raises(ConfigError, match=r"OUROBOT_STATUS_TOKEN: .*at least 16 characters"):
        load_settings(env={"OUROBOT_STATUS_TOKEN": "short"})


# ---- what it shows ----------------------------------------------------------------------------


def page_for(store: Store, settings: Settings) -> str:
    data = PageData(
        overview=read_overview(settings, store, now=NOW),
        entries=list(reversed(search(store, LedgerFilter(limit=50)))),
        patterns=read_register(store),
        web_url=web_url_of(settings.github_api_url),
    )
    return render_page(data)


def test_the_page_escapes_every_untrusted_text_and_links_pull_requests(sqlite_store):
    seed_ledger(sqlite_store, NOW)
    html = page_for(sqlite_store, Settings(cap_usd_per_day=1.0))
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "evil/&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html
    assert f'<a href="https://github.com/{REPO}/pull/2">{REPO}#2</a>' in html
    assert f'<a href="https://github.com/{REPO}/issues/5">{REPO}#5</a>' in html
    assert f'href="https://github.com/{HOSTILE_REPO}' not in html  # a bad name gets no link
    assert len(re.findall(r'<tr class="entry">', html)) == 9
    assert '<table id="patterns">' in html and "refusal:deletions" in html


def test_web_addresses_for_github_enterprise_and_the_sandbox():
    assert web_url_of("https://api.github.com") == "https://github.com"
    assert web_url_of("https://ghe.example.com/api/v3") == "https://ghe.example.com"
    assert web_url_of("http://127.0.0.1:5000") == "http://127.0.0.1:5000"


def test_the_chart_has_a_bar_per_day_and_marks_days_over_the_cap():
    days = [DaySpend(f"2026-11-{n:02d}", micro) for n, micro in ((28, 0), (29, 2_500_000),
                                                                 (30, 900_000))]  # fmt: skip
    svg = spend_chart(days, cap_usd_per_day=2.0)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count("<rect") == 3
    assert svg.count('class="over"') == 1 and "2026-11-29: $2.5000" in svg
    assert 'class="cap"' in svg
    assert 'class="cap"' not in spend_chart(days, cap_usd_per_day=None)


# ---- the real server --------------------------------------------------------------------------


@pytest.fixture
def seeded_dir(tmp_path):
    data_dir = tmp_path / "data"
    store = Store.open(Settings(data_dir=data_dir, database_url=None))
    store.migrate()
    seed_ledger(store, datetime.now(UTC) - timedelta(minutes=1))
    store.close()
    return data_dir


@pytest.fixture
def server(seeded_dir, tmp_path):
    env = serve_env(
        seeded_dir,
        OUROBOT_WEBHOOK_SECRET="hook-secret",
        OUROBOT_STATUS_TOKEN=TOKEN,
        OUROBOT_CAP_USD_PER_DAY="1",
    )
    running = ServeProcess(env, tmp_path / "serve.log").start()
    yield running
    running.stop()


def test_the_page_is_absent_unless_a_token_is_configured(tmp_path):
    env = serve_env(tmp_path / "data", OUROBOT_WEBHOOK_SECRET="hook-secret")
    running = ServeProcess(env, tmp_path / "serve.log").start()
    try:
        assert httpx.get(running.url + "/status").status_code == 404
        headers = {"Authorization": f"Bearer {TOKEN}"}
        assert httpx.get(running.url + "/status", headers=headers).status_code == 404
    finally:
        running.stop()


def test_the_server_refuses_without_the_token_and_with_a_wrong_one(server):
    url = server.url + "/status"
    for attempt in (
        httpx.get(url),
        httpx.get(url, headers={"Authorization": "Bearer not-the-token-at-all"}),
        httpx.get(url, params={"token": TOKEN[:-1]}),
        httpx.get(url, cookies={"ourobot_status": TOKEN}),
    ):
        assert attempt.status_code == 401
        assert "octo/demo" not in attempt.text
        assert attempt.headers["www-authenticate"] == "Bearer"
    assert httpx.post(url, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 405


def test_the_server_shows_the_seeded_ledger_with_the_token(server):
    url = server.url + "/status"
    shown = httpx.get(url, headers={"Authorization": f"Bearer {TOKEN}"})
    assert shown.status_code == 200
    assert shown.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in shown.headers["content-security-policy"]
    assert shown.headers["cache-control"] == "no-store"
    assert f"{REPO}#5" in shown.text and "merge:head-moved" in shown.text
    assert "<svg" in shown.text
    # A browser's way in: ?token= once, then a cookie; the token leaves the address bar.
    with httpx.Client() as browser:
        first = browser.get(url, params={"token": TOKEN})
        assert first.status_code == 303 and first.headers["location"] == "/status"
        assert TOKEN not in first.headers["set-cookie"]
        assert "HttpOnly" in first.headers["set-cookie"]
        assert "samesite=strict" in first.headers["set-cookie"].lower()
        again = browser.get(url)
        assert again.status_code == 200 and f"{REPO}#5" in again.text


def _chromium(*args: str, profile) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium refuses root otherwise
    return subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", *sandbox, f"--user-data-dir={profile}",
         "--window-size=1280,2000", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_a_headless_browser_renders_the_page_and_a_screenshot_is_taken(server, tmp_path):
    url = f"{server.url}/status?token={TOKEN}"
    dom = _chromium("--dump-dom", url, profile=tmp_path / "profile-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    # What the browser built after following the redirect with its cookie.
    assert "<h1>ourobot status</h1>" in dom.stdout
    assert f"{REPO}#5" in dom.stdout and 'id="spend-chart"' in dom.stdout
    assert "<script" not in dom.stdout
    refused = _chromium("--dump-dom", f"{server.url}/status", profile=tmp_path / "profile-no")
    assert "needs its token" in refused.stdout and "octo/demo" not in refused.stdout
    shot = tmp_path / "status.png"
    taken = _chromium(f"--screenshot={shot}", url, profile=tmp_path / "profile-shot")
    assert taken.returncode == 0, taken.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert (width, height) == (1280, 2000)
    assert len(data) > 20_000  # a page with tables and a chart, not a blank canvas
