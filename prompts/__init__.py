"""Role prompts as Markdown templates, shipped as package data.

A repository may override any of them under `.github/ourobot/prompts/`.
"""

from importlib.resources import files
from importlib.resources.abc import Traversable


def prompt_dir() -> Traversable:
    """The folder holding the built-in templates."""
    return files(__name__)
