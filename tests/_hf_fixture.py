"""The recorded HF answers (``tests/data/hf_components.json``) and ``tokenizers`` if present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

FIXTURE = Path(__file__).parent / "data" / "hf_components.json"
_loaded: Optional[Dict[str, Any]] = None


def recorded(kind: str) -> List[Dict[str, Any]]:
    """The recorded components of ``kind`` (``normalizers``, ``pre_tokenizers``, ``decoders``)."""
    global _loaded
    if _loaded is None:
        _loaded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    components: List[Dict[str, Any]] = _loaded[kind]
    return components


def component_id(obj: Dict[str, Any]) -> str:
    """A short test id for a component's JSON object."""
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"))[:90]


def hf_tokenizers() -> Any:
    """The ``tokenizers`` module, or None (PyPy: the recorded answers are all there is)."""
    try:
        import tokenizers
    except ImportError:
        return None
    return tokenizers
