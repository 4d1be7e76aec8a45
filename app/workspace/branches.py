"""The branches ourobot works on: its own pull requests come from `ourobot/issue-N` (DESIGN §1),
which is how the guards' and the review's `apply_to: bot` tell them from a person's."""

BOT_BRANCH_PREFIX = "ourobot/"
