"""The loop: the implementer and planner roles, the edit protocol, the cycle state machine and
local mode (`ourobot cycle`).

The harness owns reality: a model only proposes text (edit blocks or tool calls); every edit is
validated before it touches the worktree, every iteration is judged by the guards before it is
committed, and the tests that decide "green" run where the model's code can reach neither the
network nor a secret, with the harness measuring that the suite can still fail.
"""
