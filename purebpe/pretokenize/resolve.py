r"""From a pattern string to the fastest exact engine: a named scanner, or ``regex``.

Tokenizer files carry their pre-tokenization pattern as a string (tiktoken's ``pat_str``,
an HF ``Split`` pattern, a Tekken ``config.pattern``), and some write one of the named
patterns in another spelling: Whisper and HF's ``ByteLevel`` use GPT-2's original string.
(Llama 3's -- tiktoken's older cl100k string -- is *not* cl100k: it splits a final
whitespace run differently; it is its own named pattern, :mod:`.llama3`.)  :func:`resolve_pattern` maps

* a named pattern's own string (:data:`purebpe.pretokenize.PATTERNS`: the OpenAI ones,
  Llama 3's, Qwen's and Qwen 3.5's, which the cl100k scanner runs with its switches) to
  its name, and
* a *known variant* (:data:`KNOWN_VARIANTS`) to the name it is proven equal to,

so both run on the hand-written scanners (and the ``re`` forms), and gives back a
:class:`~purebpe.pretokenize.custom.Pattern` -- run by the ``regex`` package -- for any
other string.  A variant is listed only with its proof in ``tests/test_pattern_resolve.py``:
both strings, run by ``regex``, split every string of up to four characters drawn from one
representative of every character class either pattern tells apart (letters of each case,
marks, digits, other numbers, the contraction letters in both cases and U+017F, the
apostrophe, ``\r``, ``\n``, U+0020 and other whitespace, ``/``, punctuation) identically,
and Hypothesis text agrees too.  Both patterns read a character only through those
classes, so strings over the representatives cover every way they can differ.

Patterns not listed (DeepSeek's Split patterns) stay a
:class:`~purebpe.pretokenize.custom.Pattern`; those run on their proven ``re`` forms
(:mod:`.re_forms`), any other on ``regex``.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Union

from . import cl100k, gpt2, llama3, o200k, qwen, qwen35, tekken
from .custom import Pattern

__all__ = [
    "CL100K_HF_PATTERN",
    "KNOWN_VARIANTS",
    "POSSESSIVE_INTERVAL",
    "R50K_ORIGINAL_PATTERN",
    "named_pattern",
    "resolve_pattern",
]

#: GPT-2's original string with the contractions spelled out: Whisper's ``pat_str`` and
#: the regex inside HF's ``ByteLevel(use_regex=True)``.
R50K_ORIGINAL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

#: cl100k as purebpe writes it into HF files (:func:`purebpe.formats.hf.hf_regex`): without
#: the possessive ``{1,3}+``, which HF's Oniguruma would read as a repeat.
CL100K_HF_PATTERN = cl100k.PATTERN.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")

#: Pattern strings proven to split exactly like a named pattern (module docstring).
KNOWN_VARIANTS: Dict[str, str] = {
    gpt2.PATTERN: "gpt2",
    gpt2.GPT2_PATTERN: "gpt2",
    R50K_ORIGINAL_PATTERN: "gpt2",
    cl100k.PATTERN: "cl100k",
    CL100K_HF_PATTERN: "cl100k",
    llama3.PATTERN: "llama3",
    qwen.PATTERN: "qwen",
    qwen35.PATTERN: "qwen3.5",
    tekken.PATTERN: "tekken",
    o200k.PATTERN: "o200k",  # also Llama 4's pat_str, character for character
}


def named_pattern(source: str) -> Optional[str]:
    r"""The named pattern that ``source`` is, or is proven equal to; else ``None``.

    >>> named_pattern(r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")
    'gpt2'
    >>> named_pattern(r"\p{L}+") is None
    True
    """
    return KNOWN_VARIANTS.get(source)


def resolve_pattern(source: Union[str, Pattern]) -> Union[str, Pattern]:
    r"""The fastest exact pre-tokenizer for a pattern string (or an "isolated" :class:`Pattern`).

    A named pattern or a known variant gives the name (scanner / ``re`` engines); any
    other pattern gives a :class:`Pattern` run by ``regex`` (whose compile errors are
    reported when the pattern is checked).

    >>> resolve_pattern(
    ...     r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    ...     r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    ... )
    'llama3'
    >>> resolve_pattern(r"\p{N}")
    Pattern(regex='\\p{N}', behavior='isolated')
    """
    if isinstance(source, Pattern):
        if source.behavior != "isolated":
            return source
        named = named_pattern(source.regex)
        return source if named is None else named
    if not isinstance(source, str):
        raise TypeError(f"a pattern is a str or purebpe.Pattern, not {type(source).__name__}")
    named = named_pattern(source)
    return Pattern(source) if named is None else named


#: ``X{m,n}+``: possessive in ``regex``, a repeat of ``X{m,n}`` in Oniguruma (HF's engine);
#: an interval's digits are ASCII in both.
POSSESSIVE_INTERVAL = re.compile(r"(?<!\\)\{[0-9]*,?[0-9]*\}\+")
