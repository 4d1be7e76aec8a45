"""GitHub webhooks in: signature verification, the body cap, and the receiver app.

`create_receiver_app` is what `ourobot serve` runs; `sign` is what tests, the sandbox and the
benchmark use to produce a valid X-Hub-Signature-256.
"""

from app.webhooks.body import MAX_BODY_BYTES
from app.webhooks.delivery import DELIVERY_HEADER, EVENT_HEADER, BadDelivery, parse_delivery
from app.webhooks.handoff import InlineHook
from app.webhooks.receiver import (
    HEALTH_PATH,
    WEBHOOK_PATH,
    InProcessRecorder,
    Recorder,
    create_receiver_app,
)
from app.webhooks.signature import SIGNATURE_HEADER, sign, verify

__all__ = [
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "HEALTH_PATH",
    "MAX_BODY_BYTES",
    "SIGNATURE_HEADER",
    "WEBHOOK_PATH",
    "BadDelivery",
    "InProcessRecorder",
    "InlineHook",
    "Recorder",
    "create_receiver_app",
    "parse_delivery",
    "sign",
    "verify",
]
