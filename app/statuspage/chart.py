"""Spend per day against the daily cap, as a small inline SVG bar chart (no script, no fonts
to fetch). Every label is escaped even though ourobot writes them all: the page escapes by rule."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from app.controls.overview import DaySpend
from app.controls.pricing import usd

WIDTH, HEIGHT = 560, 170
LEFT, RIGHT, TOP, BOTTOM = 56, 8, 12, 28
MICRO = 1_000_000


def spend_chart(days: Sequence[DaySpend], cap_usd_per_day: float | None) -> str:
    cap = None if cap_usd_per_day is None else round(cap_usd_per_day * MICRO)
    top = max([day.micro_usd for day in days] + [cap or 0, 1])
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(len(days), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" aria-label="model spend per day (UTC)">',
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_h}" '
        'stroke="#888"/>',
        f'<text x="{LEFT - 4}" y="{TOP + 8}" text-anchor="end" font-size="10">'
        f"{escape(usd(top))}</text>",
        f'<text x="{LEFT - 4}" y="{TOP + plot_h}" text-anchor="end" font-size="10">$0</text>',
    ]
    for n, day in enumerate(days):
        height = plot_h * day.micro_usd / top
        over = cap is not None and day.micro_usd > cap
        x = LEFT + n * slot + slot * 0.15
        parts.append(
            f'<rect class="{"over" if over else "bar"}" x="{x:.1f}" y="{TOP + plot_h - height:.1f}"'
            f' width="{slot * 0.7:.1f}" height="{height:.1f}" '
            f'fill="{"#c0392b" if over else "#2f6f9f"}">'
            f"<title>{escape(day.day)}: {escape(usd(day.micro_usd))}</title></rect>"
        )
    if days:
        parts.append(
            f'<text x="{LEFT}" y="{HEIGHT - 8}" font-size="10">{escape(days[0].day)}</text>'
            f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end" font-size="10">'
            f"{escape(days[-1].day)}</text>"
        )
    if cap is not None:
        y = TOP + plot_h - plot_h * cap / top
        parts.append(
            f'<line class="cap" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" '
            f'stroke="#c0392b" stroke-dasharray="4 3"><title>daily cap per installation: '
            f"{escape(usd(cap))}</title></line>"
        )
    parts.append("</svg>")
    return "".join(parts)
