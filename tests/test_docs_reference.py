"""The references stay true: every repo-config key (with its default), every server setting,
every CLI command and every slash verb (with its permission and whether it works today) has
its row in the docs, and the docs a newcomer starts from link only to pages that exist.

Others add keys, commands and verbs; this is what makes them add the line in the docs too.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import AliasChoices, BaseModel

from app.cli import build_parser
from app.commands.replies import AVAILABLE_VERBS
from app.commands.slash import VERB_PERMISSIONS
from app.handlers.commands import INLINE_VERBS
from app.repo_config import RepoConfig
from app.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIG_DOC = (DOCS / "configuration.md").read_text()
COMMANDS_DOC = (DOCS / "commands.md").read_text()
# Keys whose table shows a description instead of a literal default, and why.
DESCRIBED_DEFAULTS = {
    "version": "required",
    "models.planner": "the same",
    "models.scout": "the same",
    "setup.network": "the public package registries",
}


def section(doc: str, heading: str) -> str:
    """The text under `heading` up to the next heading of the same or a higher level."""
    match = re.search(rf"^(#+) {re.escape(heading)}.*$", doc, re.M)
    assert match, f"no heading {heading!r}"
    level = len(match.group(1))
    rest = doc[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


def table_rows(text: str) -> dict[str, list[str]]:
    """`| `key` | cell | ... |` rows by their first cell's code span."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        match = re.fullmatch(r"`([^`]+)`", cells[0]) if line.startswith("|") else None
        if match:
            rows[match.group(1)] = cells[1:]
    return rows


def shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value)


def config_keys() -> list[tuple[str | None, str, Any]]:
    """(section or None for the top level, key, default as a file would write it)."""
    defaults = RepoConfig().to_document()
    keys: list[tuple[str | None, str, Any]] = []
    for name, field in RepoConfig.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if name == "project":  # written as project.name / project.description at the top
                keys += [(None, f"project.{k}", v) for k, v in defaults[name].items()]
                continue
            keys += [(name, k, v) for k, v in defaults[name].items()]
        else:
            keys.append((None, name, defaults.get(name)))
    return keys


@pytest.mark.parametrize(
    ("where", "key", "default"), config_keys(), ids=lambda x: str(x) if isinstance(x, str) else ""
)
def test_every_repo_config_key_has_its_row_and_default(where, key, default):
    text = section(CONFIG_DOC, f"`{where}`" if where else "Top level")
    rows = table_rows(text)
    assert key in rows, f"{where or 'top level'}.{key} has no row in docs/configuration.md"
    documented = rows[key][0].strip("`").strip('"')
    dotted = f"{where}.{key}" if where else key
    if dotted in DESCRIBED_DEFAULTS:
        assert DESCRIBED_DEFAULTS[dotted] in rows[key][0]
    else:
        assert documented == shown(default).strip('"'), dotted


def test_the_complete_file_in_the_docs_is_the_defaults():
    import yaml

    block = section(CONFIG_DOC, "A complete file with every default").split("```yaml")[1]
    assert yaml.safe_load(block.split("```")[0]) == RepoConfig().to_document()


def setting_variables() -> list[str]:
    names = []
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            names.append(next(str(c) for c in alias.choices if str(c).isupper()))
        else:
            names.append(f"OUROBOT_{name.upper()}")
    return names


@pytest.mark.parametrize("variable", setting_variables())
def test_every_server_setting_has_its_row(variable):
    rows = table_rows(section(CONFIG_DOC, "Server settings"))
    assert variable in rows, f"{variable} has no row in docs/configuration.md"
    assert rows[variable][1], f"{variable} has no meaning"


def cli_commands() -> list[str]:
    found: list[str] = []

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    nested = any(isinstance(a, argparse._SubParsersAction) for a in child._actions)
                    if not nested:
                        found.append(f"{prefix} {name}")
                    walk(child, f"{prefix} {name}")

    walk(build_parser(), "ourobot")
    return found


@pytest.mark.parametrize("command", cli_commands())
def test_every_cli_command_has_its_row(command):
    firsts = [row.split(" [")[0].split(" --")[0] for row in table_rows(COMMANDS_DOC)]
    assert any(first == command or first.startswith(command + " ") for first in firsts), (
        f"`{command}` has no row in docs/commands.md"
    )


@pytest.mark.parametrize("verb", sorted(VERB_PERMISSIONS))
def test_every_slash_verb_has_its_permission_and_availability(verb):
    rows = {
        key.split()[1]: cells
        for key, cells in table_rows(COMMANDS_DOC).items()
        if key.startswith("/ourobot ")
    }
    assert verb in rows, f"/ourobot {verb} has no row in docs/commands.md"
    permission, works = rows[verb][0], rows[verb][1]
    assert permission.split()[0] == VERB_PERMISSIONS[verb].name.lower()
    available = verb in AVAILABLE_VERBS or verb in INLINE_VERBS
    assert works == ("yes" if available else "not yet"), verb


def test_exit_codes_are_documented_including_3():
    table = section(COMMANDS_DOC, "Exit codes")
    codes = re.findall(r"^\| (\d+) \|", table, re.M)
    assert {"0", "1", "2", "3"} <= set(codes)
    assert "internal error" in table


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize(
    "page",
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "SECURITY.md",
        *sorted(DOCS.glob("*.md")),
    ],
    ids=lambda p: p.name,
)
def test_relative_links_point_at_files_that_exist(page: Path):
    for target in LINK.findall(page.read_text()):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_the_readme_asks_for_no_file_a_clone_lacks():
    readme = (ROOT / "README.md").read_text()
    assert "DESIGN.md" not in readme
    for needed in ("make demo", "make test", "docs/index.md", "docs/getting-started.md"):
        assert needed in readme
