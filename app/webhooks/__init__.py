"""GitHub webhooks in, up to the router: everything a delivery passes through before a handler.

`receiver` (the ASGI app `ourobot serve` runs: `signature`, `body` cap, `delivery` parsing),
`recorder` / `inbox_process` (group commit into the durable `inbox`, stored with
`body_encoding`, parsed with `json_body`), `handoff` (the inline hook, then the `dispatch`er),
`processing` (claim a row, route it, enqueue its jobs), the `embedded` runner that does that
in-process without Redis, and `recovery` (the sweeper and GitHub redelivery).

The package itself imports nothing, so a worker that needs the inbox does not load the ASGI app.
"""
