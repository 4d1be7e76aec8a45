"""Operator-owned state, outside anything a model or a pull request can change: the halt
(`halt`), the spend caps asked before every model call (`spend_caps`), model prices
(`pricing`) and the append-only ledger of what ourobot did and spent (`ledger`)."""
