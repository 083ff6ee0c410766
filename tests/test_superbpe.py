"""SuperBPE: stage 1 merges are kept exactly, stage 2 is canonical BPE on stage-2 words,
the tokenizer saves, loads and encodes as HF does with the exported file."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
from purebpe.cli import main
from purebpe.errors import PureBPEError
from purebpe.pretokenize import Pattern, pretokenize
from purebpe.superbpe import (
    STAGE2_PATTERN,
    STAGE2_PRETOKENIZER,
    extend_superbpe,
    superwords_from_counts,
    train_superbpe,
)

regex = pytest.importorskip("regex")  # stage 2's pattern runs on regex (a test dependency)
SPECIAL = "<|endoftext|>"


def pydoc_file(directory: Path, topics: int) -> Path:
    import pydoc_data.topics

    path = directory / f"pydoc-{topics}.txt"
    text = SPECIAL.join(v for _, v in sorted(pydoc_data.topics.topics.items())[:topics])
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return pydoc_file(tmp_path_factory.mktemp("superbpe"), 80)


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return pydoc_file(tmp_path_factory.mktemp("superbpe"), 15)


def stage2_words(text: str) -> Dict[bytes, int]:
    """The specification, from regex directly: split on the special, then matches and gaps."""
    words: collections.Counter[bytes] = collections.Counter()
    for piece in text.split(SPECIAL):
        for part in regex.split(f"({STAGE2_PATTERN})", piece):
            if part:
                words[part.encode("utf-8")] += 1
    return dict(words)


def test_stage_two_pattern_is_the_reference_recipe() -> None:
    assert STAGE2_PATTERN == r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"
    assert pretokenize("by the way, 2024!!  ok", pretokenizer=STAGE2_PRETOKENIZER) == [
        "by the way, ",
        "202",
        "4",
        "!!",
        " ",
        " ok",
    ]


@pytest.mark.parametrize("pretokenizer", ["gpt2", "cl100k"])
def test_superbpe_keeps_stage_one_and_learns_superwords(small_corpus: Path, pretokenizer: str) -> None:
    corpus = small_corpus
    stage1 = purebpe.train(corpus, 256 + 150 + 1, [SPECIAL], pretokenizer=pretokenizer)
    model = train_superbpe(corpus, 500, 150, [SPECIAL], pretokenizer=pretokenizer)
    assert model.merges[:150] == stage1.merges  # in order, with their ids
    assert all(model.vocab[256 + i] == left + right for i, (left, right) in enumerate(stage1.merges))
    assert model.vocab_size == 500 and model.special_tokens == (SPECIAL,)
    assert model.pretokenizer == STAGE2_PRETOKENIZER
    # Stage 2 made tokens that cross a space inside a word run: superwords.
    superwords = [left + right for left, right in model.merges[150:] if b" " in (left + right).strip(b" ")]
    assert superwords
    # Stage 2 is canonical BPE on stage-2 words from stage 1's merges: the same as the
    # naive trainer continuing on words counted independently of purebpe's counting.
    counts = purebpe.WordCounts(
        stage2_words(corpus.read_text(encoding="utf-8")), (SPECIAL,), STAGE2_PRETOKENIZER
    )
    naive = superwords_from_counts(counts, 500, stage1, variant="naive")
    assert naive == model


@given(
    texts=st.lists(st.text(st.sampled_from(list("ab c.,!1 \n")), max_size=30), min_size=1, max_size=6),
    transition=st.integers(0, 6),
    extra=st.integers(0, 8),
)
@settings(max_examples=60)
def test_every_long_word_variant_agrees_with_naive_in_stage_two(
    tmp_path_factory: pytest.TempPathFactory, texts: List[str], transition: int, extra: int
) -> None:
    path = tmp_path_factory.mktemp("s") / "t.txt"
    path.write_text(SPECIAL.join(texts), encoding="utf-8")
    vocab = 257 + transition + extra
    expected = train_superbpe(path, vocab, transition, [SPECIAL], variant="naive")
    for variant in ("positional", "bucket", "heap"):
        assert train_superbpe(path, vocab, transition, [SPECIAL], variant=variant) == expected, variant
    assert train_superbpe(path, vocab, transition, [SPECIAL]) == expected  # auto


def test_extending_an_existing_tokenizer_keeps_its_merges(corpus: Path, tmp_path: Path) -> None:
    base = purebpe.train(corpus, 400, [SPECIAL], pretokenizer="o200k")
    base.save(tmp_path / "base", format="hf")
    loaded = purebpe.load(tmp_path / "base")
    extended = extend_superbpe(corpus, 600, loaded)
    assert extended.merges[: len(base.merges)] == base.merges
    assert extended == train_superbpe(corpus, 600, len(base.merges), [SPECIAL], pretokenizer="o200k")


def test_bad_transitions_are_one_line_errors(corpus: Path) -> None:
    with pytest.raises(PureBPEError, match="transition 900 must be between 0 and"):
        train_superbpe(corpus, 700, 900, [SPECIAL])
    with pytest.raises(PureBPEError, match="needs words counted with its pattern"):
        superwords_from_counts(purebpe.count(corpus), 600, purebpe.train(corpus, 300))


def test_saved_in_every_format_that_can_express_it(corpus: Path, tmp_path: Path) -> None:
    model = train_superbpe(corpus, 600, 100, [SPECIAL])
    text = corpus.read_text(encoding="utf-8")[:20000]
    ids = model.tokenizer().encode(text)
    assert model.tokenizer().decode(ids) == text
    for fmt in ("purebpe", "hf"):
        model.save(tmp_path / fmt, format=fmt)
        assert purebpe.load(tmp_path / fmt) == model
    for fmt in ("tiktoken", "gpt2"):
        with pytest.raises(PureBPEError, match="custom pre-tokenization pattern"):
            model.save(tmp_path / fmt, format=fmt)
    # Superwords make fewer tokens than stage 1 alone at the same vocabulary size.
    plain = purebpe.train(corpus, 600, [SPECIAL]).tokenizer()
    assert len(ids) < len(plain.encode(text))


@pytest.mark.peers
def test_hf_encodes_like_purebpe_with_the_exported_file(corpus: Path, tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    model = train_superbpe(corpus, 800, 200, [SPECIAL])
    path = model.save(tmp_path, format="hf")[0]  # then transformers' two files
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = model.tokenizer()
    text = corpus.read_text(encoding="utf-8")
    for sample in (text[:50000], text[-30000:], "by the way, it's 2024!!\n\n  ok<|endoftext|>x"):
        assert hf.encode(sample).ids == tok.encode(sample)
        assert hf.decode(tok.encode(sample), skip_special_tokens=False) == sample


def test_cli_trains_superbpe_and_extends(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--special-token", SPECIAL, "--progress", "none"]
    assert (
        main(
            [
                "train",
                str(corpus),
                "--vocab-size",
                "600",
                "--superbpe",
                "--transition",
                "100",
                "-o",
                str(tmp_path / "s"),
                *common,
            ]
        )
        == 0
    )
    assert purebpe.load(tmp_path / "s") == train_superbpe(corpus, 600, 100, [SPECIAL])
    assert main(["train", str(corpus), "--vocab-size", "400", "-o", str(tmp_path / "b"), *common]) == 0
    assert (
        main(
            [
                "train",
                str(corpus),
                "--vocab-size",
                "650",
                "--superbpe",
                "--initial",
                str(tmp_path / "b"),
                "-o",
                str(tmp_path / "e"),
                "--progress",
                "none",
            ]
        )
        == 0
    )
    extended = purebpe.load(tmp_path / "e")
    assert extended == extend_superbpe(corpus, 650, purebpe.load(tmp_path / "b"))
    capsys.readouterr()
    assert main(["train", str(corpus), "--superbpe", *common]) == 2
    assert "needs --transition T" in capsys.readouterr().err
    assert main(["train", str(corpus), "--transition", "5", *common]) == 2
    assert "--transition goes with --superbpe" in capsys.readouterr().err
    assert main(["train", str(corpus), "--superbpe", "--transition", "900", *common]) == 2
    assert "transition 900 must be between 0 and the number of merges" in capsys.readouterr().err


def test_without_regex_superbpe_trains_on_its_own_scanner(
    small_corpus: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Stage 2's pattern has a scanner of its own (purebpe.pretokenize.superwords): a plain
    # install, without the optional regex package, trains SuperBPE -- the same model.
    import subprocess
    import sys

    from purebpe.pretokenize import custom

    expected = train_superbpe(small_corpus, 500, 150, [SPECIAL])
    monkeypatch.setitem(sys.modules, "regex", None)
    monkeypatch.setattr(custom, "_compiled", {})
    assert train_superbpe(small_corpus, 500, 150, [SPECIAL]) == expected
    # The CLI in a fresh interpreter where "import regex" fails.
    code = (
        "import sys; sys.modules['regex'] = None; from purebpe.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    out = tmp_path / "model"
    env = {"PYTHONPATH": str(Path(purebpe.__file__).parent.parent), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "train",
            str(small_corpus),
            "--vocab-size",
            "500",
            "--superbpe",
            "--transition",
            "150",
            "--special-token",
            SPECIAL,
            "--progress",
            "none",
            "-o",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert purebpe.load(out).merges == expected.merges


def test_long_pieces_encode_in_time_linear_enough() -> None:
    # A superword tokenizer's pieces can be whole paragraphs: encoding one must not be
    # quadratic (apply_merges works with a heap over the piece's pairs).
    model = purebpe.train_from_iterator(
        ["the cat sat on the mat " * 200], 400, pretokenizer=STAGE2_PRETOKENIZER
    )
    tok = model.tokenizer()
    piece = "the cat sat on the mat " * 20000  # one 460 kB piece
    ids = tok.encode(piece)
    assert tok.decode(ids) == piece
    assert len(ids) < len(piece) / 10
    assert Pattern(STAGE2_PATTERN) == model.pretokenizer
