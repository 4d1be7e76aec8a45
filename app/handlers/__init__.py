"""Webhook handlers: the router (`router`), the routing table (`routes`) and the pure handlers,
one module per concern: payload in, `Job`s out, no I/O. What a job does with GitHub is
`app/jobs/`."""
