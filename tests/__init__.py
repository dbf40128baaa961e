"""The agentctx test suite.

Its processes (pytest and every ``agentctx`` it starts) share one bytecode cache under
``.build/pycache``, even where the environment sets ``PYTHONDONTWRITEBYTECODE``: without it each
subprocess would compile agentctx anew. Set here, before any test module imports agentctx.

A suite started as a background job (``make test &`` in a script, some CI runners) inherits
SIGINT ignored and would pass that on to the processes it starts, so the tests that press Ctrl-C
on one would find it deaf: Ctrl-C is given back its usual meaning first.
"""

import os
import signal
import sys
from pathlib import Path

PYCACHE = Path(__file__).resolve().parent.parent / ".build" / "pycache"
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
sys.dont_write_bytecode = False
sys.pycache_prefix = str(PYCACHE)

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
