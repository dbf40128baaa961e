"""CLI tests that need a real git repository use the ``repo`` fixture."""

from tests.support.gitrepo import repo  # noqa: F401  (a fixture)
