"""Test helpers shared across the suite (real parts only: servers, processes, files)."""
