"""A tokenizer file is untrusted input (issue 24, items 6, 7, 8, 10): a hostile pattern, a
vocabulary of duplicates, one enormous token or one enormous id costs a bounded time and
memory and ends in one line naming the file, never in minutes of work or gigabytes."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

import pytest

import purebpe
from purebpe import BPEModel, Pattern
from purebpe.errors import PureBPEError

pytest.importorskip("regex")

#: Catastrophic backtracking: each extra "a" doubles the work ((a|a)+ before a failing $).
HOSTILE = "(a|a)+$"


def env() -> Dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))


@pytest.mark.parametrize("format, name", [("purebpe", "purebpe.json"), ("hf", "tokenizer.json")])
def test_a_stored_pattern_that_backtracks_forever_fails_in_one_line_naming_the_file(
    tmp_path: Path, format: str, name: str
) -> None:
    BPEModel.from_merges([(b"a", b"a")], [], Pattern(HOSTILE)).save(tmp_path, format)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "purebpe", "encode", "--tokenizer", str(tmp_path),
                             "--progress", "none"], input=b"a" * 40 + b"!", env=env(), capture_output=True, timeout=120)
    assert time.monotonic() - started < 60, "the regex work was not bounded"
    assert result.returncode == 2, result.stderr
    err = result.stderr.decode()
    assert err.startswith(f"purebpe: error: {tmp_path / name}: pre-tokenization pattern '(a|a)+$' gave up")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_use_of_a_pattern_is_bounded() -> None:
    """Encoding, counting and training all split through the one bounded search."""
    pattern = HOSTILE
    hostile_text = "a" * 36 + "!"
    model = BPEModel.from_merges([], [], Pattern(pattern, origin="stored.json"))
    for run in (lambda: model.tokenizer().encode(hostile_text),
                lambda: purebpe.count_from_iterator([hostile_text], pretokenizer=Pattern(pattern)),
                lambda: purebpe.train_from_iterator([hostile_text], 300, pretokenizer=Pattern(pattern))):
        started = time.monotonic()
        with pytest.raises(PureBPEError, match="gave up after"):
            run()
        assert time.monotonic() - started < 30


def test_a_sane_pattern_on_a_long_text_is_not_cut_short() -> None:
    text = "word " * 200_000  # 1 MB in one piece of text
    pattern = Pattern(r" ?\p{L}+| ?[^\s\p{L}]+|\s+")
    assert "".join(purebpe.pretokenize.pretokenize(text, pretokenizer=pattern)) == text
