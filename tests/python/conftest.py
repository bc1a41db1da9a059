"""Runs against the package laid out in build/python (scripts/build), unless gemmtune is
importable already (an installed one, or PYTHONPATH set)."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")

try:
    import gemmtune  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
