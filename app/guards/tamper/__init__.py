"""The `test-tamper` rule: a red suite made green by removing or silencing tests while the
code those tests exercise stays. `rule.find_tampering` is its entry point (called by
`app.guards.rules`); `lang/` reads each language's test files, `conditions/` whether a skip can
apply where the suite runs, `runners/` how the suite is collected and run, `exemptions/` the
removals and skips that are not tampering. The layers import downwards only (see
docs/guards.md, "Layout of app/guards")."""
