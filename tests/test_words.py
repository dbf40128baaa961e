"""The frequent-word list: ranks by binary search over the shipped file."""

from __future__ import annotations

from pathlib import Path

from agentctx.core import words

DATA = Path(words.__file__).resolve().parent.parent / "data"


def _listed() -> dict[str, int]:
    body = (DATA / "common_words.txt").read_text(encoding="utf-8").split("\n\n", 1)[1]
    return {word: int(rank) for word, rank in (line.split() for line in body.splitlines())}


def test_every_listed_word_is_found_with_its_rank() -> None:
    listed = _listed()
    assert len(listed) == 10_000
    software = set((DATA / "software_words.txt").read_text(encoding="utf-8")
                   .split("\n\n", 1)[1].split())
    for word, rank in listed.items():
        expected = min(rank, words.SOFTWARE_WORD_RANK) if word in software else rank
        assert words.word_rank(word) == expected, word


def test_the_file_is_sorted_with_ranks_one_to_ten_thousand() -> None:
    listed = _listed()
    assert list(listed) == sorted(listed)
    assert sorted(listed.values()) == list(range(1, 10_001))


def test_unlisted_words_and_edges() -> None:
    for word in ("", "zzzzzz", "aaaaaa", "storybook", "the the", "\n"):
        assert words.word_rank(word) is None, word
    assert words.word_rank("the") == 1


def test_inflections_fall_back_to_the_stem() -> None:
    assert words.word_rank("incidents") == words.word_rank("incident") or \
        words.word_rank("incidents") is not None
    assert words.word_rank("deps") == words.SOFTWARE_WORD_RANK
    assert words.word_rank("suites") == words.SOFTWARE_WORD_RANK
