"""KnowHub benchmarks: `make bench` (or `python -m bench`) prints every figure."""
