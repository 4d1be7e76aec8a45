"""The status page as one server-rendered HTML document, from plain data. No I/O.

Everything shown that did not come from this module (repository names, reasons, model text,
logins, keys) is untrusted and goes through `html.escape`; links are built from parts that are
escaped, and a repository name that is not `owner/name` of safe characters gets no link at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from app.controls.ledger import Entry
from app.controls.overview import Overview
from app.controls.patterns import Example, Pattern
from app.controls.pricing import usd
from app.statuspage.chart import spend_chart

MICRO = 1_000_000
_SAFE_REPO = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")
PULL_KINDS = frozenset({"review", "scope-review", "merge", "override"})
STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1b1b;background:#fafafa}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px}
table{border-collapse:collapse;background:#fff} td,th{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top} th{background:#f0f0f0} .muted{color:#666}
.halt{background:#fde2e1;border:1px solid #c0392b;padding:8px 12px;margin:12px 0}
.ok{color:#1e7b34} .bad{color:#b03a2e} code{font-size:12px}
"""


@dataclass(frozen=True)
class PageData:
    overview: Overview
    entries: Sequence[Entry]  # recent rows, newest first
    patterns: Sequence[Pattern]
    web_url: str  # where repositories are shown (https://github.com for github.com)


def web_url_of(api_url: str) -> str:
    """GitHub's web address for its API address (github.com, GHES /api/v3, or the sandbox)."""
    if api_url.rstrip("/") == "https://api.github.com":
        return "https://github.com"
    return re.sub(r"/api/v3/?$", "", api_url.rstrip("/"))


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _money(micro: int) -> str:
    return _e(usd(micro))


def _link(web_url: str, repo: str | None, number: int | None, kind: str) -> str:
    if repo is None:
        return "-"
    label = _e(repo) + (f"#{number}" if number is not None else "")
    if number is None or not _SAFE_REPO.match(repo):
        return label
    path = "pull" if kind in PULL_KINDS else "issues"
    href = f"{web_url}/{quote(repo)}/{path}/{number}"
    return f'<a href="{_e(href)}">{label}</a>'


def render_page(data: PageData) -> str:
    view = data.overview
    sections = [
        _header(view),
        _queues(view),
        _spend(view),
        _cycles(data),
        _recent(data),
        _patterns(data),
    ]
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>ourobot status</title><style>{STYLE}</style></head><body>"
        + "".join(sections)
        + "</body></html>"
    )


def _header(view: Overview) -> str:
    html = (
        f"<h1>ourobot status</h1><p class=muted>as of {_e(f'{view.at:%Y-%m-%d %H:%M:%S}')} UTC"
        f" &middot; {_e(view.mode)} mode &middot; read-only</p>"
    )
    for halt in view.halts:
        html += (
            f'<div class="halt" id="halt"><strong>Halted</strong> ({_e(halt.scope)}) by '
            f"{_e(halt.set_by)} at {_e(f'{halt.set_at:%Y-%m-%d %H:%M:%S}')} UTC: "
            f"{_e(halt.reason)}</div>"
        )
    if not view.halts:
        html += '<p class=ok id="halt">No halt is in force.</p>'
    html += "".join(f"<p class=bad>{_e(note)}</p>" for note in view.notes)
    return html


def _queues(view: Overview) -> str:
    cells = "".join(f"<td>{_e(state)}: {count}</td>" for state, count in view.inbox.items())
    oldest = (
        f"oldest pending since {_e(f'{view.oldest_pending:%Y-%m-%d %H:%M:%S}')} UTC"
        if view.oldest_pending
        else "nothing pending"
    )
    broker = (
        f"<tr><th>broker queue</th><td colspan=4>{view.broker_queue}</td></tr>"
        if view.broker_queue is not None
        else ""
    )
    leases = "".join(
        f"<tr><td>{_e(lease.kind)}</td><td><code>{_e(lease.key)}</code></td><td>"
        + (_e(f"{lease.until:%H:%M:%S} UTC") if lease.until else "")
        + (f"{lease.seconds_left}s left" if lease.seconds_left is not None else "")
        + "</td></tr>"
        for lease in view.leases
    )
    return (
        f'<h2>Queues</h2><table id="queues"><tr><th>inbox</th>{cells}</tr>{broker}</table>'
        f"<p class=muted>{oldest}</p>"
        f"<h2>Leases ({len(view.leases)})</h2>"
        + (
            f'<table id="leases"><tr><th>kind</th><th>key</th><th>held</th></tr>{leases}</table>'
            if view.leases
            else "<p class=muted>none held</p>"
        )
    )


def _spend(view: Overview) -> str:
    total = sum(view.spend_today.values())
    cap = (
        "no daily cap"
        if view.cap_usd_per_day is None
        else f"daily cap {_money(round(view.cap_usd_per_day * MICRO))} per installation"
    )
    rows = "".join(
        f"<tr><td>{'the Action / CLI' if owner == 'none' else 'installation ' + _e(owner)}</td>"
        f"<td>{_money(micro)}</td></tr>"
        for owner, micro in sorted(view.spend_today.items())
    )
    table = (
        f'<table id="spend-today"><tr><th>who</th><th>today (UTC)</th></tr>{rows}</table>'
        if rows
        else ""
    )
    return (
        f"<h2>Spend</h2><p>today: <strong>{_money(total)}</strong> ({cap}); per ticket cap "
        f"{_money(round(view.cap_usd_per_ticket * MICRO))}</p>{table}"
        f'<figure id="spend-chart">{spend_chart(view.days, view.cap_usd_per_day)}'
        f"<figcaption class=muted>model spend per day, last {len(view.days)} days, all "
        "installations</figcaption></figure>"
    )


def _cycles(data: PageData) -> str:
    cycles = data.overview.open_cycles
    if not cycles:
        return "<h2>Open cycles (0)</h2><p class=muted>no pull request of ourobot's is waiting</p>"
    rows = "".join(
        f"<tr><td>{_e(c.ticket)}</td><td>{_link(data.web_url, c.repo, c.pr, 'review')}</td>"
        f"<td>{_e(c.outcome)}</td><td>{_e(f'{c.at:%Y-%m-%d %H:%M}')}</td></tr>"
        for c in cycles
    )
    return (
        f'<h2>Open cycles ({len(cycles)})</h2><table id="open-cycles"><tr><th>ticket</th>'
        f"<th>pull request</th><th>state</th><th>since (UTC)</th></tr>{rows}</table>"
    )


def _recent(data: PageData) -> str:
    if not data.entries:
        return "<h2>Recent cycles, reviews and merges</h2><p class=muted>the ledger is empty</p>"
    rows = []
    for entry in data.entries:
        o = entry.outcome
        pr = entry.detail.get("pr")
        link = _link(data.web_url, entry.repo, entry.number, entry.kind)
        if entry.kind == "cycle" and isinstance(pr, int):
            link += " &rarr; " + _link(data.web_url, entry.repo, pr, "review")
        said = entry.detail.get("outcome") or entry.detail.get("status") or ""
        rows.append(
            f'<tr class="entry"><td>{_e(f"{entry.at:%m-%d %H:%M}")}</td><td>{_e(entry.kind)}</td>'
            f"<td>{link}</td><td>{_e(said)}</td><td>{_e(o.execution)}</td><td>{_e(o.objective)}"
            f"</td><td>{_e(o.review)}</td><td>{_e(o.artifact)}</td>"
            f"<td>{_e(entry.error_class or '')}</td></tr>"
        )
    return (
        '<h2>Recent cycles, reviews and merges</h2><table id="recent"><tr><th>when (UTC)</th>'
        "<th>what</th><th>where</th><th>said</th><th>execution</th><th>objective</th>"
        f"<th>review</th><th>artifact</th><th>class</th></tr>{''.join(rows)}</table>"
    )


def _patterns(data: PageData) -> str:
    if not data.patterns:
        return "<h2>Pattern register</h2><p class=muted>no failure classes recorded</p>"
    rows = "".join(
        f"<tr><td><code>{_e(p.error_class)}</code></td><td>{p.count}</td><td>{_e(p.status)}</td>"
        f"<td>{_example(data, p.first)}</td><td>{_example(data, p.last)}</td></tr>"
        for p in data.patterns
    )
    return (
        '<h2>Pattern register</h2><table id="patterns"><tr><th>class</th><th>count</th>'
        f"<th>status</th><th>first</th><th>last</th></tr>{rows}</table>"
    )


def _example(data: PageData, example: Example) -> str:
    return (
        f"{_e(f'{example.at:%Y-%m-%d %H:%M}')} "
        f"{_link(data.web_url, example.repo, example.number, 'cycle')}<br>"
        f"<span class=muted>{_e(example.text)}</span>"
    )
