"""The "adpasses" logger, without importing `logging` on hot or cold paths.

`ADPASSES_LOG=info` (or debug, warning, ...) makes adpasses log to stderr:
per compilation the function, its signature, the time of each stage and
whether the disk cache had it (docs/deployment.md). Without it, records go
to the "adpasses" logger of Python's `logging` as usual; a program that
never imported `logging` cannot have configured a handler, so then nothing
is formatted and `logging` is not imported (it costs milliseconds of a
cold start).
"""

from __future__ import annotations

import os
import sys

ENV = "ADPASSES_LOG"
_configured = False


def _logger():  # type: ignore[no-untyped-def]
    global _configured
    import logging

    logger = logging.getLogger("adpasses")
    if not _configured:
        _configured = True
        level = os.environ.get(ENV, "").strip()
        if level:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("adpasses: %(message)s"))
            logger.addHandler(handler)
            logger.setLevel(getattr(logging, level.upper(), logging.INFO) if not level.isdigit()
                            else int(level))
    return logger


def info_enabled() -> bool:
    """Whether an info record would be shown (cheap when nobody listens)."""
    if "logging" not in sys.modules and not os.environ.get(ENV):
        return False
    import logging

    return _logger().isEnabledFor(logging.INFO)


def info(message: str, *args: object) -> None:
    if info_enabled():
        _logger().info(message, *args)


def warning(message: str, *args: object) -> None:
    _logger().warning(message, *args)
