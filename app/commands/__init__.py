"""Slash commands: finding `/ourobot <verb>` lines (`slash`), who may run each verb (`slash`'s
per-verb permissions, `authz` for what GitHub says a person may do), what ourobot answers
(`replies`), bot text found by hidden markers and edited in place (`status_comment`), and
`/ourobot panic` / `resume`, handled inline by the receiver before any queue (`panic`)."""
