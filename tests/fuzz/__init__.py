"""The differential fuzzer: its case catalogue, input builders, hypothesis strategies and child-process
runner, and its tests (the CI tier, and the long tier against torch: pytest -m fuzz)."""
