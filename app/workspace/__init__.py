"""The implementer's workspace: git over HTTP with a token, mirrors and disposable worktrees."""
