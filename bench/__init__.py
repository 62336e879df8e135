"""Benchmarks of mcp_ref against the official Python SDK and a raw JSON-RPC floor.

``make bench`` runs :mod:`bench.run`; see bench/README.md. Nothing here is a test.
"""
