"""The conversation an agent holds with its model, kept within the model's context.

The first message (the ticket, the plan, the first view) and the system prompt (the role and
the constitution) are never shortened. When the whole grows past its budget, the oldest
observations are shortened first (their start and end kept), then older replies; the last few
turns stay whole, since they are what the model is acting on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewers.model_client import Message

HISTORY_MAX_CHARS = 160_000
KEEP_WHOLE = 4  # the last turns (replies and observations) never shortened
SHORT_CHARS = 1_200


@dataclass
class History:
    first: str
    budget: int = HISTORY_MAX_CHARS
    turns: list[Message] = field(default_factory=list)

    def add(self, role: str, content: str) -> None:
        self.turns.append(Message("assistant" if role == "assistant" else "user",
                                  content or "(empty)"))  # fmt: skip

    def messages(self) -> list[Message]:
        self._fit()
        return [Message("user", self.first), *self.turns]

    def chars(self) -> int:
        return len(self.first) + sum(len(m.content) for m in self.turns)

    def _fit(self) -> None:
        older = max(0, len(self.turns) - KEEP_WHOLE)
        # Observations (the harness's messages) first, then the model's own replies.
        for role in ("user", "assistant"):
            for index in range(older):
                if self.chars() <= self.budget:
                    return
                message = self.turns[index]
                if message.role == role and len(message.content) > SHORT_CHARS:
                    self.turns[index] = Message(role, _shortened(message.content))


def _shortened(text: str) -> str:
    half = SHORT_CHARS // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters shortened to fit the context ...]\n{text[-half:]}"
