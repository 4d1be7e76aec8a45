"""The local GitHub sandbox: a test and demo double for GitHub at the HTTP boundary.

It speaks the REST subset ourobot uses, serves git smart HTTP, signs and delivers webhooks,
injects faults and counts requests. It imports nothing of ourobot's own code, and product code
never imports it. Entry points: `app.sandbox.server.SandboxServer` (run it) and
`app.sandbox.control.SandboxControl` (set it up); see docs/sandbox.md.
"""
