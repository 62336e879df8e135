"""The raw floor's stdio server (see bench/floor.py)."""

from bench.floor import run_stdio_server

if __name__ == "__main__":
    run_stdio_server()
