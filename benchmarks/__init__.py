"""Benchmarks: each module's `main()` prints its figures; `python -m benchmarks` runs them all."""
