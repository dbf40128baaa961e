"""The benchmarks ``make bench`` runs (``python -m bench``); each prints medians and ratios
against a baseline measured in the same run."""
