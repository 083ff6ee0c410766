"""A tokenizer file is untrusted input (issue 24, items 6, 7, 8, 10): a hostile pattern, a
vocabulary of duplicates, one enormous token or one enormous id costs a bounded time and
memory and ends in one line naming the file, never in minutes of work or gigabytes."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

import pytest

import purebpe
from purebpe import BPEModel, Pattern, Tokenizer
from purebpe.bytemap import encode_token
from purebpe.errors import PureBPEError

#: Catastrophic backtracking: each extra "a" doubles the work ((a|a)+ before a "b" that
#: never comes). Both engines read it alike, so it can be written into every format.
HOSTILE = "(a|a)+b"


def env() -> Dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))


@pytest.mark.parametrize("format, name", [("purebpe", "purebpe.json"), ("hf", "tokenizer.json")])
def test_a_stored_pattern_that_backtracks_forever_fails_in_one_line_naming_the_file(
    tmp_path: Path, format: str, name: str
) -> None:
    pytest.importorskip("regex")  # custom patterns need the optional regex package
    BPEModel.from_merges([(b"a", b"a")], [], Pattern(HOSTILE)).save(tmp_path, format)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "purebpe", "encode", "--tokenizer", str(tmp_path), "--progress", "none"],
        input=b"a" * 40 + b"!",
        env=env(),
        capture_output=True,
        timeout=120,
    )
    assert time.monotonic() - started < 60, "the regex work was not bounded"
    assert result.returncode == 2, result.stderr
    err = result.stderr.decode()
    assert err.startswith(f"purebpe: error: {tmp_path / name}: pre-tokenization pattern '{HOSTILE}' gave up")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_use_of_a_pattern_is_bounded() -> None:
    """Encoding, counting and training all split through the one bounded search."""
    pytest.importorskip("regex")
    pattern = HOSTILE
    hostile_text = "a" * 36 + "!"
    model = BPEModel.from_merges([], [], Pattern(pattern, origin="stored.json"))
    for run in (
        lambda: model.tokenizer().encode(hostile_text),
        lambda: purebpe.count_from_iterator([hostile_text], pretokenizer=Pattern(pattern)),
        lambda: purebpe.train_from_iterator([hostile_text], 300, pretokenizer=Pattern(pattern)),
    ):
        started = time.monotonic()
        with pytest.raises(PureBPEError, match="gave up after"):
            run()
        assert time.monotonic() - started < 30


def test_a_sane_pattern_on_a_long_text_is_not_cut_short() -> None:
    pytest.importorskip("regex")
    text = "word " * 200_000  # 1 MB in one piece of text
    pattern = Pattern(r" ?\p{L}+| ?[^\s\p{L}]+|\s+")
    assert "".join(purebpe.pretokenize.pretokenize(text, pretokenizer=pattern)) == text


# --------------------------------------------------------------------------------------
# Item 7: duplicate tokens that would make a huge merge table are refused at load
# --------------------------------------------------------------------------------------
def duplicates_file(directory: Path, copies: int) -> Path:
    """A purebpe.json whose ``copies`` ids all hold "aa", with the merge (aa, aa)."""
    vocab = {str(b): encode_token(bytes([b])) for b in range(256)}
    vocab.update({str(256 + i): "aa" for i in range(copies)})
    vocab[str(256 + copies)] = "aaaa"
    document = {
        "format": "purebpe",
        "version": 1,
        "semantics": "",
        "pretokenizer": "gpt2",
        "vocab": vocab,
        "merges": [["a", "a"], ["aa", "aa"]],
        "special_tokens": {},
    }
    directory.mkdir()
    (directory / "purebpe.json").write_text(json.dumps(document))
    return directory / "purebpe.json"


def test_duplicate_tokens_that_would_blow_up_the_merge_table_are_refused_at_load(tmp_path: Path) -> None:
    path = duplicates_file(tmp_path / "hostile", 20_000)
    started = time.monotonic()
    with pytest.raises(
        PureBPEError, match=r"purebpe.json: merge 1 \(b'aa', b'aa'\) joins tokens held by 20000"
    ):
        purebpe.load(path)
    vocab = {b: bytes([b]) for b in range(256)}
    vocab.update({256 + i: b"aa" for i in range(20_000)})
    with pytest.raises(PureBPEError, match="would need over"):
        Tokenizer(vocab, [(b"a", b"a"), (b"aa", b"aa")])
    assert time.monotonic() - started < 10
    # A few duplicates, as real files may hold, still load and encode.
    few = purebpe.load(duplicates_file(tmp_path / "few", 3))
    assert few.tokenizer().decode(few.tokenizer().encode("aaaa")) == "aaaa"


# --------------------------------------------------------------------------------------
# Item 8: one enormous token in a rank file costs one pass over it
# --------------------------------------------------------------------------------------
def test_an_enormous_token_in_a_rank_file_is_read_in_linear_time(tmp_path: Path) -> None:
    def ranks_file(size: int) -> Path:
        lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
        lines.append(f"{base64.b64encode(b'ab').decode()} 256")
        lines.append(f"{base64.b64encode(b'x' * size).decode()} 257")
        path = tmp_path / f"big-{size}.tiktoken"
        path.write_text("\n".join(lines) + "\n")
        return path

    timings = []
    for size in (50_000, 400_000):
        path = ranks_file(size)
        started = time.process_time()
        tokenizer = Tokenizer.from_tiktoken(path, "r50k_base")
        timings.append(time.process_time() - started)
        assert tokenizer.encode("ab x") == [256, 32, 120]
    # Eight times the token: well under 8 x 8 = 64 times the work (quadratic took 61 s for 1 MB).
    assert timings[1] < 16 * timings[0] + 0.5, timings


# --------------------------------------------------------------------------------------
# Item 10: one guard against huge ids in every constructor
# --------------------------------------------------------------------------------------
HUGE = 2 * 10**9


def test_a_tokenizer_json_with_more_merges_than_ranks_can_pack_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A merge's rank is packed with its new id into one int (core.pack_rank): a list of
    # merges past MAX_MERGES (2**26; a real file lists about one a token) is refused
    # before a table is built. Lowered here: a list that long would be gigabytes of JSON.
    import purebpe.models.bpe

    monkeypatch.setattr(purebpe.models.bpe, "MAX_MERGES", 2)
    vocab = {"a": 0, "b": 1, "ab": 2, "ba": 3}
    path = tmp_path / "many-merges.json"
    path.write_text(json.dumps({"model": {"type": "BPE", "vocab": vocab, "merges": ["a b", "b a", "a b"]}}))
    with pytest.raises(
        PureBPEError, match=r"many-merges.json: .*BPE model has 3 merges, more than the 2 allowed"
    ):
        Tokenizer.from_file(path)
    path.write_text(json.dumps({"model": {"type": "BPE", "vocab": vocab, "merges": ["a b", "b a"]}}))
    assert Tokenizer.from_file(path).encode("abba") == [2, 3]


def test_a_huge_id_is_refused_by_every_constructor(tmp_path: Path) -> None:
    vocab = {b: bytes([b]) for b in range(256)}
    started = time.monotonic()
    with pytest.raises(PureBPEError, match=f"id {HUGE} is far beyond the 257 tokens"):
        Tokenizer({**vocab, HUGE: b"ab"}, [(b"a", b"b")])
    gpt2_vocab = {encode_token(bytes([b])): b for b in range(256)}
    (tmp_path / "vocab.json").write_text(json.dumps({**gpt2_vocab, encode_token(b"ab"): HUGE}))
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n")
    with pytest.raises(PureBPEError, match=f"vocab.json \\+ merges.txt: id {HUGE} is far beyond"):
        Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    with pytest.raises(PureBPEError, match=f"id {HUGE} is far beyond"):
        purebpe.load(tmp_path / "vocab.json")
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(PureBPEError, match=f"id {HUGE} is far beyond"):
        Tokenizer.from_ranks({**ranks, b"ab": HUGE}, {})
    with pytest.raises(PureBPEError, match=f"id {HUGE} is far beyond"):
        Tokenizer.from_ranks(ranks, {"<|endoftext|>": HUGE})
    lines = [f"{base64.b64encode(token).decode()} {rank}" for token, rank in {**ranks, b"ab": HUGE}.items()]
    (tmp_path / "huge.tiktoken").write_text("\n".join(lines) + "\n")
    with pytest.raises(PureBPEError, match=f"huge.tiktoken: id {HUGE} is far beyond"):
        Tokenizer.from_tiktoken(tmp_path / "huge.tiktoken", "r50k_base")
    assert time.monotonic() - started < 10, "a table indexed by id was allocated"
