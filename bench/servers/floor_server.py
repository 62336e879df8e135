"""The raw floor's stdio (or ``--http``) server (see bench/floor.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.floor import run_stdio_server

if __name__ == "__main__":
    run_stdio_server()
