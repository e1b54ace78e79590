"""The SHA-256 of a file, read in 1 MiB blocks (a model file is too large to read at once); shared by
tests/models/test_llm_golden.py and scripts/make_llm_golden.py, which records the digest it checks."""
import hashlib


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
