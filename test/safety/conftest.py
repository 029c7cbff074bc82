"""The safety group: what must never crash the process, corrupt memory or
return a wrong number silently (issue 13). Run it alone with
`pytest -m safety` (every test in this folder carries the marker).

Cases that would kill the interpreter if they regressed (segfaults, hangs,
stack overflows) run in a fresh Python process (`isolate.run_isolated`), so
a regression fails one test instead of the whole suite.
"""

from __future__ import annotations

import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(items):  # type: ignore[no-untyped-def]
    for item in items:
        if str(item.fspath).startswith(HERE):
            item.add_marker(pytest.mark.safety)
