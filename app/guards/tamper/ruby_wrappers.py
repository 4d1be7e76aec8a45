"""Ruby tests defined through a wrapper of the suite's own, read as the `it` they are:
`deprecated "title" do ... end`, from a helper

    def self.deprecated(*args, &block)
      it(*args) do
        begin
          verbose, $VERBOSE = $VERBOSE, nil
          instance_exec(&block)
        ensure
          $VERBOSE = verbose
        end
      end
    end

Such a call defines a test that runs its block, exactly as `it` does; without this, turning
`it "title" do` into `deprecated "title" do` was read as the test removed, and a test deleted
from under the wrapper was not seen at all.

Only a wrapper proven to run its block, unconditionally, is read so. The tree of the side
being read (base or head) defines it once, in a Ruby file of the tests, as `def self.NAME(*args,
&block)` whose body is one `it(*args) do` (or `specify`, `test`) block, and that block runs the
given block on a line of its own (`instance_exec(&block)`, `instance_eval(&block)`,
`block.call`, `yield`) with nothing in it that could skip it or swallow its failure: no `rescue`,
`return`, `next`, `break`, `throw`, `skip`, `pending`, `if`, `unless`, `case`, `while`, `exit`,
`&&`, `||`, `and` or `or` anywhere in the wrapper. A wrapper that drops the block, rescues
its failure, runs it under a condition or skips is no test function: a test moved under it
is still reported as removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.ruby import RUBY
from app.guards.tamper.lang.text import indent
from app.guards.tamper.test_files import is_test_path
from app.guards.trees import Side, TreeView

# A call that may define a test through a wrapper: `name "title" do` or `name('title') do`.
CALL = re.compile(r"""^(?P<lead>\s*)(?P<n>[a-z_]\w*)(?P<rest>\s*\(?\s*["'].*\bdo\b.*)$""")
_KNOWN = frozenset(
    {"it", "specify", "test", "describe", "context", "feature", "scenario", "example"}
)
_DEFINITION = r"^\s*def\s+self\.{name}\s*\(\s*\*args\s*,\s*&block\s*\)\s*$"
_OPENING = re.compile(r"^\s*(?:it|specify|test)\s*\(\s*\*args\s*\)\s*do\s*$")
_RUNS = re.compile(
    r"^\s*(?:instance_exec\s*\(\s*&block\s*\)|instance_eval\s*\(\s*&block\s*\)"
    r"|block\.call(?:\s*\(\s*\))?|yield)\s*$"
)
# Anything that could leave the block unrun, or its failure unreported.
_ESCAPES = re.compile(
    r"\b(?:rescue|return|next|break|throw|catch|skip|pending|if|unless|case|while|until"
    r"|exit|exit!|abort|and|or|retry|redo|raise)\b|&&|\|\||\?"
)


def is_ruby_test(path: str | None) -> bool:
    return path is not None and reader_for(path) is RUBY and is_test_path(path)


def wrapper_calls(lines: Sequence[str]) -> set[str]:
    """The names called as a test would be defined (`deprecated "title" do`) that are no
    test function of the runner's own."""
    return {m["n"] for text in lines if (m := CALL.match(text)) and m["n"] not in _KNOWN}


def test_wrappers(trees: TreeView, side: Side, names: set[str]) -> set[str]:
    """Which of `names` the side's tree defines, once, as a wrapper that runs its block as a
    test (see the module's docstring)."""
    found: set[str] = set()
    for name in sorted(names):
        definition = re.compile(_DEFINITION.format(name=re.escape(name)))
        hits = [
            hit
            for hit in trees.search(side, [name])
            if reader_for(hit.path) is RUBY
            and re.match(rf"^\s*def\s+(?:self\.)?{name}\b", hit.text)
        ]
        if len(hits) != 1 or not is_test_path(hits[0].path):
            continue
        if not definition.match(hits[0].text):
            continue
        text = trees.text(side, hits[0].path)
        if text is not None and _runs_its_block(text.split("\n"), hits[0].number - 1):
            found.add(name)
    return found


def _runs_its_block(lines: Sequence[str], start: int) -> bool:
    """Whether the `def` at `lines[start]` is one `it(*args) do` block that runs the given
    block on a line of its own, with nothing that could skip it or swallow its failure."""
    body = _block(lines, start)
    if body is None or not body or not _OPENING.match(body[0]):
        return False
    inner = _block(lines, start + 1)
    if inner is None or len(inner) + 2 != len(body):
        return False  # more than the one `it` block in the wrapper
    code = [_strip_comment(text) for text in body[1:]]
    return any(_RUNS.match(text) for text in code) and not any(
        _ESCAPES.search(text) for text in code
    )


def _block(lines: Sequence[str], start: int) -> list[str] | None:
    """The lines after `lines[start]` down to (not including) the `end` at its indentation;
    None when that `end` is not found."""
    level = indent(lines[start])
    for number in range(start + 1, len(lines)):
        text = lines[number]
        if text.strip() and indent(text) <= level:
            return list(lines[start + 1 : number]) if text.strip() == "end" else None
    return None


def _strip_comment(text: str) -> str:
    return text.split("#", 1)[0] if "#" in text and not re.search(r"['\"]", text) else text


def rewrite(text: str, wrappers: set[str]) -> str:
    """`text` with a call of a proven wrapper at the start of the line spelled as `it`."""
    match = CALL.match(text)
    if match is None or match["n"] not in wrappers:
        return text
    return match["lead"] + "it" + match["rest"]
