"""``check_encoder`` (purebpe.testing.encoder_checks): an encoder against purebpe's reading of
a tokenizer file.

* purebpe's own pipeline passes against itself (no false alarm), on HF files, a purebpe
  file and a tiktoken-format rank file;
* every mutant of the encoder bug zoo (:mod:`purebpe.testing.encoder_zoo`) is caught on a
  small ``tokenizer.json`` where its bug shows, and the counterexample is shrunk to a few
  characters on which the mutant really differs;
* the report names the text, both id lists, the first differing position and the
  tokens around it;
* ``purebpe conformance --encoder`` exits 0, 1 and 2 as documented;
* on CPython, HF ``tokenizers`` and ``tiktoken`` pass on real files from the fetch cache
  (skipped with a reason when the library or the file is absent).

The tokenizer files are the small pipelines of ``tests/data/hf_pipelines`` (recorded from
``tokenizers``), written out as ``tokenizer.json`` files, so PyPy runs all but the last.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import settings

import purebpe
from purebpe.testing import check_encoder, encoder_checks
from purebpe.testing.checks import encoder_conformance
from purebpe.testing.encoder_checks import corner_texts, load_reference, shrink_text
from purebpe.testing.encoder_zoo import MUTANTS, mutant_encoder

pytest_plugins = ["pytester"]

DATA = Path(__file__).resolve().parent / "data" / "hf_pipelines"
FEW = settings(max_examples=10, deadline=None, derandomize=True, database=None)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """The recorded pipelines as tokenizer.json files, and one where ignore_merges matters."""
    folder = tmp_path_factory.mktemp("encoder-files")
    out: Dict[str, Path] = {}
    for name in ("gemma", "llama3", "llama2", "added_zoo", "roberta", "qwen"):
        document = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["tokenizer"]
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    # Real Llama 3 files hold words no merge path reaches: ignore_merges makes them one token.
    document = json.loads(out["llama3"].read_text(encoding="utf-8"))
    document["model"]["vocab"]["Ġquick"] = 403
    out["llama3_unreachable"] = folder / "llama3_unreachable.json"
    out["llama3_unreachable"].write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return out


@pytest.mark.parametrize("name", ["gemma", "llama3", "added_zoo"])
def test_the_reference_passes_against_itself(files: Dict[str, Path], name: str) -> None:
    tok = purebpe.Tokenizer.from_file(files[name])
    check_encoder(tok.encode, files[name], settings=FEW)
    check_encoder(
        lambda text: tok.encode(text, add_special_tokens=True),
        files[name],
        add_special_tokens=True,
        settings=FEW,
    )


def test_rank_files_and_purebpe_files_are_references_too(tmp_path: Path) -> None:
    model = purebpe.train_from_iterator(encoder_checks.SAMPLES * 2, 330, ["<|endoftext|>"])
    model.save(tmp_path / "own")
    tok = purebpe.Tokenizer.from_file(tmp_path / "own")
    check_encoder(tok.encode, tmp_path / "own", settings=FEW)
    with pytest.raises(AssertionError, match="text = '<|endoftext|>'"):
        check_encoder(tok.encode_ordinary, tmp_path / "own", settings=FEW)
    # A tiktoken-format rank file, with the pattern and special tokens given when loading.
    ranks = tmp_path / "ranks.tiktoken"
    ranks.write_text(
        "".join(f"{__import__('base64').b64encode(bytes([b])).decode()} {b}\n" for b in range(256)),
        encoding="ascii",
    )
    options: Dict[str, Any] = {"pattern": "cl100k", "special_tokens": {"<|x|>": 256}}
    ranked = purebpe.Tokenizer.from_file(ranks, **options)
    check_encoder(lambda text: ranked.encode(text, allowed_special="all"), ranks, settings=FEW, **options)
    with pytest.raises(AssertionError, match="fails 1 property"):
        check_encoder(ranked.encode_ordinary, ranks, settings=FEW, **options)


#: Each mutant, the small file its bug shows on, and whether BOS/EOS are asked for.
ZOO = [
    ("merge priority by token id", "gemma", False),
    ("ignore_merges ignored", "llama3_unreachable", False),
    ("added tokens matched after normalization", "added_zoo", False),
    ("lstrip/rstrip ignored", "added_zoo", False),
    ("lstrip/rstrip ignored", "roberta", False),
    ("byte fallback missing", "llama2", False),
    ("normalizer skipped", "qwen", False),
    ("cl100k regex for Llama 3's", "llama3", False),
    ("digits split by two", "llama3", False),
    ("special tokens encoded as text", "llama3", False),
    ("post-processor skipped", "llama3", True),
]


def test_the_zoo_table_names_every_mutant() -> None:
    assert {name for name, _, _ in ZOO} == set(MUTANTS)


@pytest.mark.parametrize("name, file, add_special_tokens", ZOO)
def test_every_mutant_is_caught_with_a_short_text(
    files: Dict[str, Path], name: str, file: str, add_special_tokens: bool
) -> None:
    encode = mutant_encoder(name, files[file], add_special_tokens)
    outcomes = encoder_conformance(encode, files[file], add_special_tokens=add_special_tokens)
    failed = [outcome for outcome in outcomes if not outcome.passed]
    assert len(failed) == 1 and failed[0] is outcomes[-1]  # the run stops at the first failure
    found = failed[0].counterexample
    assert found is not None, failed[0].report()
    text = dict(found.values)["text"]
    longest_added = max((len(t) for t in load_reference(files[file]).added_tokens()), default=0)
    assert len(text) <= max(8, longest_added + 2), text
    # The counterexample is real: the mutant and the reference differ on it.
    reference = load_reference(files[file], add_special_tokens)
    assert encode(text) != reference.encode(text)
    report = failed[0].report()
    assert "expected ids:" in report and "got ids:" in report and "tokens around" in report


def test_the_report_shows_both_sides_at_the_first_difference(files: Dict[str, Path]) -> None:
    encode = mutant_encoder("digits split by two", files["llama3"])
    with pytest.raises(AssertionError) as caught:
        check_encoder(encode, files["llama3"])
    message = str(caught.value)
    assert message.splitlines()[0] == "the encoder fails 1 property (corner cases):"
    # "345" is one token of the file; split by two it is "34" "5", which the vocab spells as characters.
    assert "text = '345'" in message
    assert "the ids differ from position 0: expected 367, got 18" in message
    assert "expected ids: [367]" in message and "got ids:      [18, 19, 20]" in message
    assert "expected tokens around 0: >367='345'" in message
    assert "got tokens around 0:      >18='3' 19='4' 20='5'" in message


def test_a_crashing_encoder_is_reported_on_a_short_text(files: Dict[str, Path]) -> None:
    tok = purebpe.Tokenizer.from_file(files["llama3"])

    def fragile(text: str) -> List[int]:
        if "\r" in text:
            raise RuntimeError("carriage return")
        return tok.encode(text)

    with pytest.raises(AssertionError) as caught:
        check_encoder(fragile, files["llama3"])
    assert "text = '\\r'" in str(caught.value)
    assert "the encoder raised RuntimeError: carriage return" in str(caught.value)


def test_shrinking_keeps_only_what_the_failure_needs() -> None:
    calls: List[str] = []

    def fails(text: str) -> bool:
        calls.append(text)
        return "x" in text and "y" in text

    assert shrink_text("a" * 500 + "x" + "b" * 3000 + "y" + "c" * 20, fails) == "xy"
    assert len(calls) < 200
    assert shrink_text("abc", lambda text: True) == ""


def test_the_corner_cases_hold_each_added_token_in_every_setting(files: Dict[str, Path]) -> None:
    texts = corner_texts(["[MASK]"])
    for setting in (" [MASK] ", "ab[MASK]cd", "[mask]", "[MASK", "x  [MASK]\n y"):
        assert setting in texts
    assert "a\n " in texts and "1234567" in texts and "e\u0301" in texts
    assert max(len(text) for text in texts) == encoder_checks.LONG_RUN_CHARS
    assert not any(c.isspace() for c in texts[-1])


def test_bad_arguments_are_one_line(files: Dict[str, Path], tmp_path: Path) -> None:
    tok = purebpe.Tokenizer.from_file(files["llama3"])
    with pytest.raises(purebpe.PureBPEError, match="no such file"):
        check_encoder(tok.encode, tmp_path / "missing.json")
    with pytest.raises(purebpe.PureBPEError, match="add_special_tokens is for HF"):
        model = purebpe.train_from_iterator(["ab ab"], 258)
        check_encoder(model.tokenizer().encode, model.tokenizer(), add_special_tokens=True)
    with pytest.raises(TypeError, match="tokenizer_file must be a path"):
        check_encoder(tok.encode, 42)
    with pytest.raises(AssertionError, match="returned '1' at position 0, not an int"):
        check_encoder(lambda text: ["1"], files["llama3"])


# -- the command ---------------------------------------------------------------------------------

ENCODERS = """
import json, sys
import purebpe
from purebpe.testing.encoder_zoo import mutant_encoder

FILE = {file!r}
good = purebpe.Tokenizer.from_file(FILE).encode
with_bos = lambda text: purebpe.Tokenizer.from_file(FILE).encode(text, add_special_tokens=True)
bad = mutant_encoder("special tokens encoded as text", FILE)
not_callable = 3
"""


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).resolve().parent.parent))
    return subprocess.run(
        [sys.executable, "-m", "purebpe", "conformance", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_command_exits_0_and_1(files: Dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "my_encoders.py").write_text(ENCODERS.format(file=str(files["llama3"])), encoding="utf-8")
    common = ["--tokenizer", str(files["llama3"]), "--max-examples", "5", "--progress", "none"]
    passed = run_cli(tmp_path, "--encoder", "my_encoders:good", *common)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "| corner cases | pass |" in passed.stdout and "3 of 3 properties pass" in passed.stdout
    failed = run_cli(tmp_path, "--encoder", "my_encoders:bad", *common)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "| corner cases | FAIL |" in failed.stdout and "text = '<|begin_of_text|>'" in failed.stdout


def test_the_command_takes_bos_and_refuses_bad_usage_in_one_line(
    files: Dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from purebpe.cli import main

    (tmp_path / "my_encoders_2.py").write_text(ENCODERS.format(file=str(files["llama3"])), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    file = str(files["llama3"])
    quick = ["--max-examples", "3", "--progress", "none"]
    assert (
        main(
            [
                "conformance",
                "--encoder",
                "my_encoders_2:with_bos",
                "--tokenizer",
                file,
                "--add-special-tokens",
                *quick,
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "conformance",
                "--encoder",
                "my_encoders_2:good",
                "--tokenizer",
                file,
                "--add-special-tokens",
                *quick,
            ]
        )
        == 1
    )
    capsys.readouterr()
    for args, message in [
        (["--encoder", "my_encoders_2:good"], "--encoder needs --tokenizer FILE"),
        (["--encoder", "my_encoders_2:not_callable", "--tokenizer", file], "not a callable"),
        (["--encoder", "my_encoders_2:good", "--tokenizer", str(tmp_path / "none.json")], "no such file"),
        (["my_encoders_2:good", "--encoder", "my_encoders_2:good", "--tokenizer", file], "not both"),
        (["--tokenizer", file], "--tokenizer is for --encoder"),
        (["my_encoders_2:good", "--add-special-tokens"], "--tokenizer is for --encoder"),
        ([], "name the implementation"),
    ]:
        assert main(["conformance", *args]) == 2, args
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_the_pytest_plugin_adds_one_item_per_property(
    files: Dict[str, Path], pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(my_encoders_3=ENCODERS.format(file=str(files["llama3"])))
    pytester.syspathinsert()
    common = [
        "-p",
        "purebpe.testing",
        "--bpe-tokenizer-file",
        str(files["llama3"]),
        "--bpe-max-examples",
        "3",
    ]
    result = pytester.runpytest(*common, "--bpe-encoder", "my_encoders_3:good", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*bpe_encoder?corner cases? PASSED*"])
    result = pytester.runpytest(*common, "--bpe-encoder", "my_encoders_3:bad")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*text = '<|begin_of_text|>'*", "FAILED *bpe_encoder?corner cases?*"])
    result = pytester.runpytest("-p", "purebpe.testing", "--bpe-encoder", "my_encoders_3:good")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bpe-encoder my_encoders_3:good: needs --bpe-tokenizer-file FILE*"])


# -- the real libraries --------------------------------------------------------------------------


def test_hf_tokenizers_passes_on_a_real_tokenizer_json() -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is not installed (PyPy)")
    from _tokenizer_files import tokenizer_file

    path = tokenizer_file("anthropic-tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(path))
    check_encoder(lambda text: hf.encode(text, add_special_tokens=False).ids, path, settings=FEW)


def test_tiktoken_passes_on_a_real_rank_file() -> None:
    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed (PyPy)")
    from _tokenizer_files import tokenizer_file
    from tiktoken.load import load_tiktoken_bpe

    path = tokenizer_file("cl100k_base.tiktoken")
    reference = purebpe.Tokenizer.from_file(path)
    encoding = tiktoken.Encoding(
        "cl100k_base",
        pat_str=purebpe.PATTERNS["cl100k"],
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=dict(reference.special_ids),
    )

    def encode(text: str) -> List[int]:
        return encoding.encode(text, allowed_special="all")

    check_encoder(encode, reference, settings=FEW)
