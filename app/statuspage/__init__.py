"""The read-only status page `ourobot serve` adds at /status when OUROBOT_STATUS_TOKEN is set."""
