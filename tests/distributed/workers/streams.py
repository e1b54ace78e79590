"""Launcher option probe: one line to stdout and one to stderr per rank (no process group)."""
import os
import sys

rank = os.environ["RANK"]
print(f"OUT from rank {rank} of {os.environ['WORLD_SIZE']}", flush=True)
print(f"ERR from rank {rank}", file=sys.stderr, flush=True)
