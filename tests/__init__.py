"""The agentctx test suite.

Its processes (pytest and every ``agentctx`` it starts) share one bytecode cache under
``.build/pycache``, even where the environment sets ``PYTHONDONTWRITEBYTECODE``: without it each
subprocess would compile agentctx anew. Set here, before any test module imports agentctx.
"""

import os
import sys
from pathlib import Path

PYCACHE = Path(__file__).resolve().parent.parent / ".build" / "pycache"
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
sys.dont_write_bytecode = False
sys.pycache_prefix = str(PYCACHE)
