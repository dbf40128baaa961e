"""The query side file, read with the standard library: WordPiece, mean vectors, registration."""

from __future__ import annotations

import math
import sqlite3
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx.store import Store, querymodel, vectors
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import Draft

DIM = 3


def half(*values: float) -> bytes:
    return struct.pack(f"<{DIM}e", *values)


VOCAB = {
    "sqlite": half(1, 0, 0), "data": half(0.5, 0.5, 0), "##base": half(0, 1, 0),
    "un": half(0, 0, 1), "##related": half(0, 0, 1), "##s": half(0, 0.5, 0),
    "北": half(1, 1, 0), "京": half(1, -1, 0), "test": half(0, 1, 1),
}


@pytest.fixture
def side_file(tmp_path: Path) -> Path:
    path = tmp_path / "models" / "query" / "q.db"
    querymodel.write(path, model="tiny", source="tiny|1|1", dim=DIM, unk="[UNK]", prefix="##",
                     max_chars=12, rows=VOCAB.items())
    return path


@pytest.fixture
def model(side_file: Path) -> querymodel.QueryModel:
    opened = querymodel.QueryModel.open(side_file)
    assert opened is not None
    return opened


class TestWordPiece:
    def test_whole_words_and_longest_pieces_first(self, model: querymodel.QueryModel) -> None:
        assert model.tokens(["sqlite", "database", "unrelated"]) == [
            "sqlite", "data", "##base", "un", "##related"]

    def test_a_word_with_an_unknown_piece_is_dropped_whole(
            self, model: querymodel.QueryModel) -> None:
        # "datax": "data" matches, "##x" does not, so the word is [UNK] — and model2vec drops it.
        assert model.tokens(["datax", "test"]) == ["test"]

    def test_overlong_words_are_unknown(self, model: querymodel.QueryModel) -> None:
        assert model.tokens(["sqlite" * 3]) == []

    def test_cjk_ideographs_are_one_token_each(self, model: querymodel.QueryModel) -> None:
        assert model.tokens(["北京"]) == ["北", "京"]

    def test_plural_piece(self, model: querymodel.QueryModel) -> None:
        assert model.tokens(["tests"]) == ["test", "##s"]


class TestEncode:
    def test_mean_of_token_rows_made_unit(self, model: querymodel.QueryModel) -> None:
        vector = model.encode(["sqlite", "test"])
        assert vector is not None
        expected = (0.5, 0.5, 0.5)
        norm = math.sqrt(sum(v * v for v in expected))
        assert vector == pytest.approx(tuple(v / norm for v in expected))

    def test_nothing_known_is_none(self, model: querymodel.QueryModel) -> None:
        assert model.encode(["zzz", "qqq"]) is None
        assert model.encode([]) is None


class TestOpen:
    def test_missing_file(self, tmp_path: Path) -> None:
        assert querymodel.QueryModel.open(tmp_path / "nope.db") is None

    def test_not_a_database(self, tmp_path: Path) -> None:
        path = tmp_path / "junk.db"
        path.write_bytes(b"not sqlite at all" * 10)
        assert querymodel.QueryModel.open(path) is None

    def test_incomplete_or_foreign_format(self, side_file: Path) -> None:
        conn = sqlite3.connect(side_file)
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'complete'")
        conn.commit()
        conn.close()
        assert querymodel.QueryModel.open(side_file) is None
        conn = sqlite3.connect(side_file)
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'complete'")
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'format'")
        conn.commit()
        conn.close()
        assert querymodel.QueryModel.open(side_file) is None

    def test_rewrite_replaces_atomically(self, side_file: Path) -> None:
        querymodel.write(side_file, model="tiny", source="tiny|2|2", dim=DIM, unk=None,
                         prefix="##", max_chars=12, rows=[("sqlite", half(0, 0, 1))])
        assert querymodel.side_file_meta(side_file)["source"] == "tiny|2|2"
        assert not list(side_file.parent.glob(".*.tmp"))
        reopened = querymodel.QueryModel.open(side_file)
        assert reopened is not None and reopened.tokens(["database"]) == []


class TestRegistration:
    def test_round_trip_and_model_mismatch(self, store: Store, side_file: Path) -> None:
        assert querymodel.registered(store) is None
        assert querymodel.open_registered(store) is None
        querymodel.register(store, "tiny", side_file)
        assert querymodel.registered(store) == ("tiny", str(side_file))
        opened = querymodel.open_registered(store)
        assert opened is not None and opened.model == "tiny"
        opened.close()
        querymodel.register(store, "another-model", side_file)
        assert querymodel.open_registered(store) is None
        querymodel.unregister(store)
        assert querymodel.registered(store) is None

    def test_a_garbled_registration_is_ignored(self, store: Store) -> None:
        with store.write():
            store.meta_set(querymodel.META_KEY, "{not json")
        assert querymodel.registered(store) is None


class TestSimilarities:
    def test_cosines_of_hits_and_their_superseded_sources(self, store: Store, side_file: Path,
                                                          tmp_path: Path) -> None:
        (tmp_path / "p" / ".git").mkdir(parents=True)
        pid = proj.resolve(store, str(tmp_path / "p")).project.id
        storage = rec.add(store, Draft(type="decision", title="Storage is SQLite"), project_id=pid)
        testing = rec.add(store, Draft(type="decision", title="Tests run with pytest"),
                          project_id=pid)
        bare = rec.add(store, Draft(type="decision", title="No vector yet"), project_id=pid)
        old = rec.add(store, Draft(type="decision", title="Old storage choice"), project_id=pid)
        wanted = {storage.pk: (1.0, 0.0, 0.0), testing.pk: (0.0, 1.0, 1.0), old.pk: (0.0, 0.0, 1.0)}
        waiting = [p for p in vectors.pending(store) if p.pk in wanted]
        vectors.save(store, "tiny", [(p, np.asarray(wanted[p.pk], dtype=np.float32))
                                     for p in waiting])
        assert querymodel.similarities(store, ["sqlite"], [(storage.pk, None)]) is None
        querymodel.register(store, "tiny", side_file)
        found = querymodel.similarities(
            store, ["sqlite"], [(storage.pk, None), (testing.pk, None), (bare.pk, None),
                                (testing.pk, old.id)])
        assert found is not None
        assert found[0] == pytest.approx(1.0)
        assert found[1] == pytest.approx(0.0)
        assert found[2] is None
        # Through a superseded record: the better of the two cosines ("un" points along z).
        through = querymodel.similarities(store, ["un"], [(storage.pk, old.id)])
        assert through is not None and len(through) == 1 and through[0] == pytest.approx(1.0)
        assert querymodel.similarities(store, ["zzz"], [(storage.pk, None)]) is None


def test_paths_with_uri_characters(tmp_path: Path) -> None:
    path = tmp_path / "a dir?with#odd%chars" / "q.db"
    querymodel.write(path, model="tiny", source="s", dim=DIM, unk=None, prefix="##",
                     max_chars=12, rows=VOCAB.items())
    opened = querymodel.QueryModel.open(path)
    assert opened is not None and opened.tokens(["sqlite"]) == ["sqlite"]
    assert querymodel.side_file_meta(path)["model"] == "tiny"


def test_words_too_long_to_be_words_are_left_out(tmp_path: Path) -> None:
    path = tmp_path / "long.db"
    querymodel.write(path, model="tiny", source="s", dim=DIM, unk=None, prefix="##",
                     max_chars=100, rows=VOCAB.items())
    model = querymodel.QueryModel.open(path)
    assert model is not None
    fits = "un" + "related" * 5  # 37 characters: still split into pieces
    assert model.tokens([fits]) == ["un"] + ["##related"] * 5
    blob = "un" + "related" * 6  # 44: a pasted identifier or hash, not a word
    assert len(blob) > querymodel.MAX_WORD_CHARS
    assert model.tokens([blob, "test"]) == ["test"]


def _reference_wordpiece(word: str, vocab: set[str], max_chars: int) -> list[str]:
    """BERT's WordPiece, written the plain way: greedy longest match, [UNK] drops the word."""
    if len(word) > max_chars:
        return []
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return []
    return pieces


ALPHABET = "abc"
PIECE_VOCAB = sorted({"a", "b", "ab", "abc", "ca", "##a", "##b", "##c", "##bc", "##cab", "##ca"})


@given(st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=12), min_size=1, max_size=6))
@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_batched_wordpiece_equals_the_plain_algorithm(tmp_path: Path, words: list[str]) -> None:
    path = tmp_path / "pieces.db"
    if not path.exists():
        querymodel.write(path, model="p", source="s", dim=DIM, unk=None, prefix="##",
                         max_chars=10, rows=[(t, half(1, 0, 0)) for t in PIECE_VOCAB])
    model = querymodel.QueryModel.open(path)
    assert model is not None
    expected = [p for w in words for p in _reference_wordpiece(w, set(PIECE_VOCAB), 10)]
    assert model.tokens(words) == expected
    model.close()
