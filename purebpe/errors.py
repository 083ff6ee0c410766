"""The errors purebpe raises on bad input: one clear line saying what is wrong and where."""

from __future__ import annotations

from typing import Callable, Optional, Tuple, Type, TypeVar

T = TypeVar("T")

#: Quoted input in an error message is cut to about this many characters, so that an
#: error about a 20 MB line is still one short line.
EXCERPT_CHARS = 40


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` for an error message, a long ``str``/``bytes`` cut to ``limit`` characters.

    >>> excerpt("x" * 100, 5)
    "'xxxxx'... (100 characters)"
    """
    if isinstance(value, (str, bytes, bytearray)) and len(value) > limit:
        unit = "characters" if isinstance(value, str) else "bytes"
        return f"{value[:limit]!r}... ({len(value)} {unit})"
    text = repr(value)
    return text if len(text) <= 2 * limit else text[: 2 * limit] + "..."


class PureBPEError(ValueError):
    """Base class of every error purebpe raises for bad input or bad arguments.

    It is a ``ValueError`` so callers that already catch that keep working; the CLI
    prints its message as one line and exits with status 2.
    """


class InputError(PureBPEError):
    """Input text that cannot be used (not UTF-8, a lone surrogate, ...), with its location.

    ``source`` names the file (or ``"<text 3>"`` for the fourth string of an iterable),
    ``offset`` is the byte offset in a file (character index in a string), ``line`` is 1-based.
    """

    def __init__(
        self,
        what: str,
        source: str,
        offset: Optional[int] = None,
        line: Optional[int] = None,
    ) -> None:
        self.what = what
        self.source = source
        self.offset = offset
        self.line = line
        where = source
        if line is not None:
            where += f", line {line}"
        if offset is not None:
            where += f", byte offset {offset}" if not source.startswith("<") else f", index {offset}"
        super().__init__(f"{where}: {what}")

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # Errors raised in worker processes are pickled back to the parent.
        return (type(self), (self.what, self.source, self.offset, self.line))


class UnknownTokenError(PureBPEError, KeyError):
    """A token id or token text that is not in the vocabulary.

    Also a ``KeyError``, as tiktoken raises for ids and bytes it does not know.
    """

    # KeyError's str() would quote the message; keep it one plain line.
    __str__ = ValueError.__str__


#: What a reader of a parsed document raises on a shape it does not expect (a key missing,
#: a list where an object should be): the document is malformed.
MALFORMED: Tuple[Type[Exception], ...] = (KeyError, TypeError, ValueError, AttributeError)


def naming_errors(
    name: str, what: str, read: Callable[[], T], malformed: Tuple[Type[Exception], ...] = MALFORMED
) -> T:
    """``read()``, its errors made one line naming ``name``: a :class:`PureBPEError` gets
    ``name`` in front, a ``malformed`` exception becomes "malformed ``what``".

    >>> naming_errors("v.json", "vocab file", lambda: {}["vocab"])
    Traceback (most recent call last):
    purebpe.errors.PureBPEError: v.json: malformed vocab file (KeyError: 'vocab')
    """
    try:
        return read()
    except PureBPEError as exc:
        raise PureBPEError(f"{name}: {exc}") from None
    except malformed as exc:
        raise PureBPEError(f"{name}: malformed {what} ({type(exc).__name__}: {exc})") from None


def check_int(value: object, name: str, minimum: Optional[int] = None) -> None:
    """A ``TypeError`` unless ``value`` is an int (not a bool, a float or a str), and a
    :class:`PureBPEError` if it is below ``minimum``.

    >>> check_int(2.5, "processes")
    Traceback (most recent call last):
    ...
    TypeError: processes must be an int, not 2.5 (float)
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {excerpt(value)} ({type(value).__name__})")
    if minimum is not None and value < minimum:
        raise PureBPEError(f"{name} must be at least {minimum}, not {value}")


def check_iterable_of_texts(texts: object, name: str = "texts") -> None:
    """A ``TypeError`` for one ``str`` (or ``bytes``) where an iterable of texts is expected:
    iterating it would give single characters.

    >>> check_iterable_of_texts("hello")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    TypeError: texts must be an iterable of str, not one str (it would be read as 5 one-character
    texts); wrap it in a list: ['hello']
    """
    if isinstance(texts, (str, bytes, bytearray)):
        raise TypeError(
            f"{name} must be an iterable of str, not one {type(texts).__name__} (it would be read "
            f"as {len(texts)} one-character texts); wrap it in a list: [{excerpt(texts)}]"
        )


def check_ids_argument(ids: object) -> None:
    """A ``TypeError`` for ``str``/``bytes`` where token ids are expected (``decode(b"hi")``
    would read the bytes' values as ids)."""
    if isinstance(ids, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"ids must be an iterable of int token ids, not {type(ids).__name__} {excerpt(ids)}")
