"""SuperBPE's stage 2 in compact structures: counts in flat arrays (``CompactCounts``),
words replayed into one array (``PackedWords``), and the same results as the dict path."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

import purebpe
from purebpe import superbpe
from purebpe.core import WordTable
from purebpe.counting import CompactCounts, count, count_compact, pack_counts
from purebpe.superbpe import (
    STAGE2_PRETOKENIZER,
    WORD_TABLE_COMPILED,
    PackedWords,
    bytes_per_token,
    stage2_options,
    stage2_table,
)

SPECIAL = "<|endoftext|>"

tables = st.lists(st.dictionaries(st.binary(max_size=6), st.integers(1, 1 << 40), max_size=300), max_size=4)


@given(tables)
def test_compact_counts_sum_tables_as_a_dict_does(parts: List[Dict[bytes, int]]) -> None:
    expected: Dict[bytes, int] = {}
    compact = CompactCounts()
    for i, part in enumerate(parts):
        for word, n in part.items():
            expected[word] = expected.get(word, 0) + n
        # Every way in: a table, a packed table (as from a worker), one word at a time.
        if i % 3 == 0:
            compact.add_counts(part)
        elif i % 3 == 1:
            compact.add_packed(pack_counts(part))
        else:
            for word, n in part.items():
                compact.add(word, n)
    assert list(compact.pairs()) == list(expected.items())  # first-counted order, as a dict
    assert len(compact) == len(expected) and compact.total() == sum(expected.values())


def test_compact_counts_grow_past_their_first_table() -> None:
    compact = CompactCounts()
    words = [str(i).encode() for i in range(5000)]  # the table starts with 1024 slots
    for word in words + words[::-1]:
        compact.add(word, 1)
    assert dict(compact.pairs()) == {word: 2 for word in words}
    assert len(compact.slots) >= 2 * len(words)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import pydoc_data.topics

    path = tmp_path_factory.mktemp("compact") / "pydoc.txt"
    topics = sorted(pydoc_data.topics.topics.items())[:40]
    path.write_text(SPECIAL.join(text for _, text in topics), encoding="utf-8")
    return path


@pytest.mark.parametrize("processes", [1, 2])
def test_count_compact_counts_what_count_counts(corpus: Path, processes: int) -> None:
    expected = count(corpus, [SPECIAL], pretokenizer=STAGE2_PRETOKENIZER, processes=processes)
    compact = count_compact(corpus, [SPECIAL], pretokenizer=STAGE2_PRETOKENIZER, processes=processes)
    assert dict(compact.pairs()) == expected.words


def replayed_words(table: WordTable) -> List[Tuple[List[int], int]]:
    return [(list(word), n) for word, n in zip(table.words, table.counts)]


@pytest.mark.parametrize("variant", ["positional", "bucket"])
def test_stage_two_table_holds_the_words_replayed_as_the_word_table_does(corpus: Path, variant: str) -> None:
    initial = purebpe.train(corpus, 400, [SPECIAL])
    counts = count(corpus, [SPECIAL], pretokenizer=STAGE2_PRETOKENIZER)
    options = stage2_options(600, initial, variant=variant)
    table = stage2_table(counts.words.items(), options)
    # Packed for the positional trainer, except on the compiled build (its WordTable holds lists).
    assert isinstance(table.words, PackedWords) == (variant == "positional" and not WORD_TABLE_COMPILED)
    expected = WordTable.from_word_counts(counts.words, initial.merges)
    assert replayed_words(table) == replayed_words(expected)
    assert table.token_bytes == expected.token_bytes


def test_bytes_per_token_of_replayed_words_is_that_of_the_text(corpus: Path) -> None:
    model = purebpe.train_superbpe(corpus, 600, 200, [SPECIAL])
    counts = count(corpus, [SPECIAL], pretokenizer=STAGE2_PRETOKENIZER)
    stage1 = purebpe.train(corpus, 256 + 200 + 1, [SPECIAL])
    table = stage2_table(counts.words.items(), stage2_options(600, stage1))
    special = model.vocab_size - 1
    assert model.vocab[special] == SPECIAL.encode()
    tokens = model.tokenizer().encode(corpus.read_text(encoding="utf-8"), allowed_special="all")
    specials = tokens.count(special)
    expected = (len(corpus.read_bytes()) - len(SPECIAL) * specials) / (len(tokens) - specials)
    assert bytes_per_token(table.words, table.counts, model) == pytest.approx(expected, rel=1e-12)


@given(st.lists(st.lists(st.integers(0, 70000), max_size=5), max_size=40), st.integers(1, 8))
def test_packed_words_read_back_as_a_list_of_words(words: List[List[int]], chunk_ids: int) -> None:
    packed = PackedWords("I")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(superbpe, "CHUNK_IDS", chunk_ids)  # many chunks, words longer than one
        for word in words:
            packed.append(word)
    assert len(packed) == len(words)
    assert [list(word) for word in packed] == words
    assert [list(packed[i]) for i in range(-len(words), len(words))] == words + words
    assert [list(word) for word in packed[1::2]] == words[1::2]
    with pytest.raises(IndexError):
        packed[len(words)]
    spill = io.BytesIO()
    packed.write(spill)
    spill.seek(0)
    assert [list(word) for word in PackedWords.read(spill)] == words
