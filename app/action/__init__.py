"""Entry points `ourobot action <command>` runs inside GitHub Actions, from the same core."""
