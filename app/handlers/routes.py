"""The production routing table: every pure handler module registers its own small handlers."""

from __future__ import annotations

from app.handlers import (
    actions_reports,
    commands,
    fix_triggers,
    gate_triggers,
    pulls,
    review_triggers,
    tickets,
)
from app.handlers.router import Router
from app.settings import Settings


def build_router(settings: Settings) -> Router:
    """The production routing table. Each module registers its own small handlers."""
    router = Router()
    commands.register(router, settings)
    tickets.register(router, settings)
    pulls.register(router, settings)
    review_triggers.register(router, settings)
    gate_triggers.register(router, settings)
    fix_triggers.register(router, settings)
    actions_reports.register(router, settings)
    return router
