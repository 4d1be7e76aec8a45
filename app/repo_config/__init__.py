"""A repository's `.github/ourobot.yml` (version 1): the schema, its defaults and loading it.

Always read from the base/default branch, never from a PR head: a PR cannot relax the gates that
judge it. Missing file = defaults; an invalid file = one `ConfigError` line naming file, line and
key. Plain data in, plain data out: no GitHub, web framework or model SDK here.
"""

from app.repo_config.document import MAX_CONFIG_BYTES
from app.repo_config.loader import (
    DEFAULT_SOURCE,
    load_repo_config,
    load_repo_config_file,
    read_repo_config_text,
)
from app.repo_config.model import (
    CONFIG_VERSION,
    DEFAULT_PROTECTED_PATHS,
    GOVERNANCE_PATHS,
    MODES,
    PROVIDERS,
    BudgetsConfig,
    GuardsConfig,
    ImplementerConfig,
    LoopConfig,
    MergeConfig,
    Mode,
    ModelRef,
    ModelsConfig,
    ProjectConfig,
    Provider,
    RepoConfig,
    ReviewConfig,
    SandboxMode,
)

__all__ = [
    "CONFIG_VERSION",
    "DEFAULT_PROTECTED_PATHS",
    "DEFAULT_SOURCE",
    "GOVERNANCE_PATHS",
    "MAX_CONFIG_BYTES",
    "MODES",
    "PROVIDERS",
    "BudgetsConfig",
    "GuardsConfig",
    "ImplementerConfig",
    "LoopConfig",
    "MergeConfig",
    "Mode",
    "ModelRef",
    "ModelsConfig",
    "ProjectConfig",
    "Provider",
    "RepoConfig",
    "ReviewConfig",
    "SandboxMode",
    "load_repo_config",
    "load_repo_config_file",
    "read_repo_config_text",
]
