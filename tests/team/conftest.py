"""The team-file tests run against real git repositories."""

from tests.support.gitrepo import repo  # noqa: F401  (a fixture)
