"""Error types that cross module boundaries and map to CLI exit codes."""


class UserError(Exception):
    """Bad input from a person (file, flag, config): one line, exit code 2, never a traceback."""


class ConfigError(UserError):
    """An invalid `.github/ourobot.yml` or server setting; the message names the field."""
