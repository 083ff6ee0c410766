"""The default training corpus: the Python documentation text in ``pydoc_data.topics``.

It ships with every CPython and PyPy, so ``purebpe train`` works out of the box and the
tests have real English prose everywhere. The text differs slightly between Python
versions; tests that need fixed results generate their own corpora.
"""

from __future__ import annotations

from typing import List

NAME = "pydoc_data.topics"


def default_corpus() -> List[str]:
    """The documentation topics, one string each, in a fixed (sorted-by-name) order."""
    from pydoc_data.topics import topics

    return [topics[name] for name in sorted(topics)]
