"""Celery wiring: the app factory and thin, idempotent task wrappers around `app/`
and `reviewers/`."""
