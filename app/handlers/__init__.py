"""Webhook handlers (one module per concern, pure: payload in, `Job`s out) and the job
functions they name (`*_jobs.py`: the part that authenticates and talks to GitHub)."""
