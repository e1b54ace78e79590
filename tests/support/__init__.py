"""Helpers shared by the tests (imported as support.<module>, with tests/ on sys.path)."""
