"""pytest plugin: run purebpe's conformance suite against your trainer, tokenizer or masker.

Installed with purebpe (entry point ``pytest11``: ``purebpe``), so every pytest run loads
it, and it stays inert -- no options read, no module imported, no test added -- unless
one of its options is given::

    pytest --bpe-trainer mypackage.bpe:train_bpe
    pytest --bpe-tokenizer mypackage.bpe:Tokenizer --bpe-masker mypackage.mask:mask_scheme
    pytest --bpe-encoder mypackage.tok:encode --bpe-tokenizer-file tokenizer.json
    pytest -p purebpe.testing --bpe-trainer ...   # where plugins are not auto-loaded

Each property becomes one test item, ``bpe_trainer[merges match purebpe]`` and so on,
added in front of the session's own tests (select only them with ``-m bpe_conformance``
or ``-k bpe_``). A failing item prints the minimal counterexample as a runnable snippet.
``--bpe-semantics purebpe`` demands purebpe's exact token ids from a trainer;
``--bpe-max-examples N`` sets Hypothesis' examples per property (default 50).

How it works: ``pytest_collection_modifyitems`` (run first, so ``-k`` and ``-m`` see the
new items) resolves each ``MODULE:CALLABLE`` and turns each property of
:func:`purebpe.testing.checks.checks_for` into a :class:`ConformanceItem`. Everything
beyond pytest itself is imported only then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

import pytest

if TYPE_CHECKING:
    from .harness import Check

#: The implementation kinds and the option that names each one's callable.
OPTIONS = {
    "trainer": "--bpe-trainer",
    "tokenizer": "--bpe-tokenizer",
    "masker": "--bpe-masker",
    "encoder": "--bpe-encoder",
}
MARKER = "bpe_conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("purebpe", "purebpe conformance suite (purebpe.testing)")
    group.addoption(
        "--bpe-trainer",
        metavar="MODULE:CALLABLE",
        help="run the trainer conformance suite on train_bpe(input_path, vocab_size, special_tokens)",
    )
    group.addoption(
        "--bpe-tokenizer",
        metavar="MODULE:CALLABLE",
        help="run the tokenizer conformance suite on factory(vocab, merges, special_tokens)",
    )
    group.addoption(
        "--bpe-masker",
        metavar="MODULE:CALLABLE",
        help="run the Wakong conformance suite on mask_scheme(rng, seq_len)",
    )
    group.addoption(
        "--bpe-encoder",
        metavar="MODULE:CALLABLE",
        help="check encode(text) -> ids against purebpe's reading of --bpe-tokenizer-file",
    )
    group.addoption(
        "--bpe-tokenizer-file",
        metavar="FILE",
        help="the tokenizer file --bpe-encoder encodes with (tokenizer.json, tiktoken ranks, Tekken...)",
    )
    group.addoption(
        "--bpe-add-special-tokens",
        action="store_true",
        help="--bpe-encoder adds the tokenizer.json post-processor's BOS/EOS",
    )
    group.addoption(
        "--bpe-semantics",
        choices=("cs336", "purebpe", "hf"),
        default="cs336",
        help=(
            "cs336: vocab compared as a set of bytes (default); purebpe: exact ids; hf: Hugging Face's rules"
        ),
    )
    group.addoption(
        "--bpe-max-examples",
        type=int,
        default=None,
        metavar="N",
        help="Hypothesis examples per property (default 50)",
    )


def _requested(config: pytest.Config) -> List[Tuple[str, str]]:
    return [(kind, config.getoption(option)) for kind, option in OPTIONS.items() if config.getoption(option)]


def pytest_configure(config: pytest.Config) -> None:
    if _requested(config):
        config.addinivalue_line("markers", f"{MARKER}: a property of purebpe's conformance suite")


class ConformanceFailure(AssertionError):
    """A property failed; the message is the counterexample report."""


class ConformanceItem(pytest.Item):
    """One property of the conformance suite, run on the callable named by ``spec``."""

    def __init__(self, *, check: "Check", spec: str, settings: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.spec = spec
        self.hypothesis_settings = settings
        self.add_marker(MARKER)

    def runtest(self) -> None:
        from .harness import run_check

        outcome = run_check(self.check, self.hypothesis_settings)
        if not outcome.passed:
            raise ConformanceFailure(outcome.report())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Optional[Any] = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return f"{self.spec} fails '{self.check.name}' ({self.check.description})\n{excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> Tuple[Any, Optional[int], str]:
        return self.path, None, f"{self.name}: {self.check.description}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: List[pytest.Item]
) -> None:
    requested = _requested(config)
    if not requested:
        return
    from ..errors import PureBPEError

    try:
        from .checks import checks_for
        from .harness import default_settings, load_callable
    except ImportError as exc:
        raise pytest.UsageError(f"purebpe's conformance suite needs hypothesis ({exc})") from None

    max_examples = config.getoption("--bpe-max-examples")
    settings = default_settings() if max_examples is None else default_settings(max_examples)
    added: List[pytest.Item] = []
    for kind, spec in requested:
        try:
            if kind == "encoder" and config.getoption("--bpe-tokenizer-file") is None:
                raise PureBPEError("needs --bpe-tokenizer-file FILE (the tokenizer file it encodes with)")
            checks = checks_for(
                kind,
                load_callable(spec),
                semantics=config.getoption("--bpe-semantics"),
                tokenizer_file=config.getoption("--bpe-tokenizer-file"),
                add_special_tokens=config.getoption("--bpe-add-special-tokens"),
            )
        except PureBPEError as exc:
            raise pytest.UsageError(f"{OPTIONS[kind]} {spec}: {exc}") from None
        for check in checks:
            name = f"bpe_{kind}[{check.name}]"
            added.append(
                ConformanceItem.from_parent(
                    session,
                    name=name,
                    nodeid=f"purebpe.testing::{name}",
                    check=check,
                    spec=spec,
                    settings=settings,
                )
            )
    items[:0] = added
