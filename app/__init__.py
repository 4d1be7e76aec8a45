"""ourobot: the GitHub App, the core decisions and the CLI.

Nothing in this package reads the environment or opens a connection at import time;
factories take a `Settings` built once at startup.
"""
