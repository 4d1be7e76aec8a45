"""The review panel: model providers, reviewer roles, verdict parsing, quorum and publishing."""
