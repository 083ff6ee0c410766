"""Drop-in facades for other tokenizer libraries: change one import.

``from purebpe.compat import tokenizers`` stands in for Hugging Face ``tokenizers``'
inference API (:mod:`purebpe.compat.tokenizers`).
"""

from __future__ import annotations
