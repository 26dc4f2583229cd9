"""Benchmarks (`make bench`): ratios and budgets measured in one run on this machine."""
