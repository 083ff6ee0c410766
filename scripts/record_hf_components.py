"""Record HF ``tokenizers``' answers for the pipeline components into a JSON fixture.

``python3 scripts/record_hf_components.py [OUT]`` (default ``tests/data/hf_components.json``)
runs every normalizer, pre-tokenizer and decoder of ``tests/_hf_components.py`` on its
fixed texts and token lists with the installed ``tokenizers`` and writes, per component,
its ``tokenizer.json`` object and HF's answers:

* normalizers: the normalized text and, per normalized character, its original
  ``(start, end)`` (read through a ``PreTokenizedString`` split into single characters);
* pre-tokenizers: ``pre_tokenize_str``'s pieces with their offsets;
* decoders: ``decode(tokens)`` (token lists HF panics on are left out).

The tests replay the file on interpreters without ``tokenizers`` (PyPy).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import _hf_components as components  # noqa: E402


def record(tokenizers: Any) -> Dict[str, Any]:
    texts = components.all_texts()
    out: Dict[str, Any] = {
        "tokenizers_version": tokenizers.__version__,
        "normalizers": [],
        "pre_tokenizers": [],
        "decoders": [],
    }
    for normalizer, obj in components.normalizers(tokenizers):
        cases = [
            {
                "text": text,
                "normalized": normalizer.normalize_str(text),
                "alignment": components.normalizer_alignment(tokenizers, normalizer, text),
            }
            for text in texts
        ]
        out["normalizers"].append({"json": obj, "cases": cases})
    for pre_tokenizer, obj in components.pre_tokenizers(tokenizers):
        cases = [
            {
                "text": text,
                "pieces": [[piece, list(offsets)] for piece, offsets in pre_tokenizer.pre_tokenize_str(text)],
            }
            for text in texts
        ]
        out["pre_tokenizers"].append({"json": obj, "cases": cases})
    for decoder, obj in components.decoders(tokenizers):
        cases = []
        for tokens in components.token_lists():
            try:
                cases.append({"tokens": tokens, "text": decoder.decode(tokens)})
            except BaseException:  # noqa: B036 - HF's Rust panics surface as PanicException
                continue
        out["decoders"].append({"json": obj, "cases": cases})
    return out


def main() -> None:
    import tokenizers

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "data" / "hf_components.json"
    data = record(tokenizers)
    target.write_text(
        json.dumps(data, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    counts = {
        kind: sum(len(c["cases"]) for c in data[kind])
        for kind in ("normalizers", "pre_tokenizers", "decoders")
    }
    print(f"wrote {target}: {counts}")


if __name__ == "__main__":
    main()
