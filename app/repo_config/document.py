"""Reading `.github/ourobot.yml` text into plain data plus the line of every key.

`yaml.safe_load` keeps the last of two duplicate keys without a word and forgets where anything
was written. A config error must name its line, and a duplicate key can hide a setting from a
reviewer of the file, so we compose the node graph with the safe loader and build the data
ourselves: duplicate keys, non-string keys, merge keys and unknown tags are refused here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.errors import ConfigError

MAX_CONFIG_BYTES = 256 * 1024
# A real config nests four levels deep (review.models[0].base_url); anything far deeper is either
# a mistake or a recursive alias.
MAX_DEPTH = 32
# Aliases let a small file expand into a huge structure ("billion laughs"); a real config has a
# few hundred nodes.
MAX_NODES = 20_000

_TAG = "tag:yaml.org,2002:"
_STR_TAG = _TAG + "str"
_MAP_TAG = _TAG + "map"
_SEQ_TAG = _TAG + "seq"
_MERGE_TAG = _TAG + "merge"

KeyPath = tuple[str | int, ...]


def dotted_key(path: KeyPath) -> str:
    """`("review", "models", 0, "id")` -> `review.models[0].id`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def config_error(source: str, line: int | None, key: str, message: str) -> ConfigError:
    """The one error line: `source:line: dotted.key: message` (parts left out when unknown)."""
    parts = [source if line is None else f"{source}:{line}"]
    if key:
        parts.append(key)
    parts.append(message)
    # Keys and values come from the file; a newline in them must not split the report.
    return ConfigError(" ".join(": ".join(parts).split()))


@dataclass(frozen=True)
class YamlDocument:
    """The parsed file: `data` is None for an empty file; `lines` maps key paths to lines."""

    data: Any
    lines: Mapping[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int | None:
        """The line of `path`, or of its nearest ancestor that was written in the file."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


def read_document(text: str, source: str) -> YamlDocument:
    """Parse one YAML document; every problem becomes a one-line `ConfigError`."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_CONFIG_BYTES:
        raise config_error(
            source, None, "", f"file too large ({size} bytes; the limit is {MAX_CONFIG_BYTES})"
        )
    try:
        return _parse(text, source)
    except yaml.MarkedYAMLError as exc:
        raise _yaml_error(exc, source) from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise config_error(
            source, line, "", f"unacceptable character #x{exc.character:04x}"
        ) from None
    except yaml.YAMLError as exc:
        raise config_error(source, None, "", f"YAML error: {exc}") from None
    except RecursionError:
        raise config_error(source, None, "", "YAML nested too deeply") from None


class _DepthLimitedLoader(yaml.SafeLoader):
    """The safe loader, refusing deep nesting before Python's recursion limit is reached."""

    def __init__(self, text: str, source: str) -> None:
        super().__init__(text)  # checks every character up front (ReaderError)
        self.source = source
        self.depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call]
                raise config_error(self.source, line, "", "YAML nested too deeply")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _parse(text: str, source: str) -> YamlDocument:
    loader = _DepthLimitedLoader(text, source)
    try:
        root = loader.get_single_node()
        if root is None:
            return YamlDocument(None)
        builder = _Builder(loader, source)
        return YamlDocument(builder.build(root, ()), builder.lines)
    finally:
        loader.dispose()


def _yaml_error(exc: yaml.MarkedYAMLError, source: str) -> ConfigError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    problem = exc.problem or exc.context or "invalid YAML"
    if exc.context and exc.problem:
        problem = f"{exc.problem} ({exc.context})"
    kind = "YAML" if isinstance(exc, yaml.constructor.ConstructorError) else "YAML syntax error"
    return config_error(source, line, "", f"{kind}: {problem}")


class _Builder:
    """Walks composed nodes into dicts, lists and scalars, recording each key's line."""

    def __init__(self, loader: yaml.SafeLoader, source: str) -> None:
        self.loader = loader
        self.source = source
        self.lines: dict[KeyPath, int] = {}
        self.visited = 0

    def build(self, node: Node, path: KeyPath) -> Any:
        line = node.start_mark.line + 1
        self.lines.setdefault(path, line)
        self.visited += 1
        if self.visited > MAX_NODES:
            raise self._error(path, line, f"more than {MAX_NODES} values (aliases expanded)")
        if len(path) > MAX_DEPTH:
            raise self._error(path[:MAX_DEPTH], line, "nested too deeply (recursive alias?)")
        if isinstance(node, MappingNode):
            return self._mapping(node, path)
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ_TAG:
                raise self._error(path, line, f"unsupported YAML tag {node.tag!r} on a list")
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        return self.loader.construct_object(node)

    def _mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        if node.tag != _MAP_TAG:
            raise self._error(path, node.start_mark.line + 1, f"unsupported YAML tag {node.tag!r}")
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node, path)
            key_path = (*path, key)
            line = key_node.start_mark.line + 1
            if key in result:
                first = self.lines[key_path]
                raise self._error(
                    key_path,
                    line,
                    f"duplicate key (first set on line {first}); YAML would silently keep "
                    "only the last value",
                )
            self.lines[key_path] = line
            result[key] = self.build(value_node, key_path)
        return result

    def _key(self, node: Node, path: KeyPath) -> str:
        line = node.start_mark.line + 1
        if node.tag == _MERGE_TAG:
            raise self._error(path, line, "YAML merge keys (<<) are not supported; write keys out")
        if not isinstance(node, ScalarNode):
            raise self._error(path, line, "a key must be a plain string, not a list or mapping")
        if node.tag != _STR_TAG:
            raise self._error(
                path, line, f"key {node.value!r} is not read as a string by YAML; quote it"
            )
        return str(node.value)

    def _error(self, path: KeyPath, line: int, message: str) -> ConfigError:
        return config_error(self.source, line, dotted_key(path), message)
