"""Jobs: the unit of background work, as a handler asks for it, and the registry of job functions.

A handler decides and asks for work as a `Job`: a registered name and plain JSON values. A job
function (`@job("name")`) does the work, `func(ctx, **job.kwargs)`, with the `JobContext` of
`app.jobs.context`. The same functions run under Celery (`tasks/`) and in embedded mode
(`app.webhooks.embedded`); nothing here imports Celery, a database or a GitHub client, so the
pure handlers that build `Job`s import only this.

Where jobs come from: `load_job_modules` imports `app.webhooks.recovery`, every module of the
`app.jobs` package and the modules named in OUROBOT_EXTRA_JOB_MODULES (comma-separated dotted
names, importable by the worker and by `ourobot serve`). That setting is how a plugin adds
jobs: decorate its functions with `@job("plugin.name")` and list its module; each becomes the
Celery task `ourobot.plugin.name` and runs in embedded mode too. An unimportable module stops
the worker at start with one line naming it.
"""

from __future__ import annotations

import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module

from app.errors import ConfigError
from app.settings import Settings

JobValue = str | int | bool | None | list[str]
JobFunc = Callable[..., None]

# Celery task names the workers use themselves; a job may not take them.
RESERVED_JOB_NAMES = frozenset({"process_delivery", "process_deliveries", "sweep", "scout_sweep"})
_JOB_NAME = re.compile(r"[a-z][a-z0-9_.-]{0,99}")

# Modules holding ourobot's own jobs: the recovery sweeper's, and every module of `app/jobs/`.
BUILTIN_JOB_MODULES = ("app.webhooks.recovery",)
JOB_PACKAGE = "app.jobs"


@dataclass(frozen=True)
class Job:
    """What a handler asks for: a registered job name and plain JSON values only.

    Pass `installation_id` among the kwargs when the job acts for an installation: the task
    layer then checks that installation's halt before the job starts.
    """

    name: str
    kwargs: Mapping[str, JobValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _JOB_NAME.fullmatch(self.name):
            raise ValueError(f"job name {self.name!r} must match {_JOB_NAME.pattern}")
        for key, value in self.kwargs.items():
            if not _is_plain(value):
                raise TypeError(
                    f"job {self.name}: argument {key!r} is {type(value).__name__}; "
                    "jobs take only str, int, bool, None or a list of str"
                )


def _is_plain(value: object) -> bool:
    if value is None or isinstance(value, str | int):  # bool is an int
        return True
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# ---- the registry -----------------------------------------------------------------------------

_REGISTRY: dict[str, JobFunc] = {}


def job(name: str) -> Callable[[JobFunc], JobFunc]:
    """Register `func` as the job `name` (a Celery task `ourobot.<name>` in worker mode)."""
    if not _JOB_NAME.fullmatch(name) or name in RESERVED_JOB_NAMES:
        raise ValueError(f"job name {name!r} is reserved or does not match {_JOB_NAME.pattern}")

    def register(func: JobFunc) -> JobFunc:
        known = _REGISTRY.get(name)
        if known is not None and _qualified(known) != _qualified(func):
            raise ValueError(f"job {name!r} is already registered by {_qualified(known)}")
        _REGISTRY[name] = func
        return func

    return register


def _qualified(func: JobFunc) -> str:
    return f"{func.__module__}.{func.__qualname__}"


def registered_jobs() -> Mapping[str, JobFunc]:
    """Every job registered so far (see `load_job_modules`), by name."""
    return dict(_REGISTRY)


def load_job_modules(settings: Settings) -> tuple[str, ...]:
    """Import the modules that register jobs: ourobot's own, then `OUROBOT_EXTRA_JOB_MODULES`.

    Workers and the embedded runner call this at start, before turning jobs into tasks.
    """
    builtin = [*BUILTIN_JOB_MODULES, *_job_package_modules()]
    for name in builtin:
        import_module(name)
    for name in settings.extra_job_modules:
        try:
            import_module(name)
        except ImportError as exc:
            raise ConfigError(f"OUROBOT_EXTRA_JOB_MODULES: cannot import {name}: {exc}") from None
    return (*builtin, *settings.extra_job_modules)


def _job_package_modules() -> list[str]:
    package = import_module(JOB_PACKAGE)
    return sorted(f"{JOB_PACKAGE}.{info.name}" for info in pkgutil.iter_modules(package.__path__))
