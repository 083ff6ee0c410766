"""A typical ``tokenizers`` inference script, run with either library (one import changed).

Shared by ``tests/test_hf_loader.py`` (which runs it with both, or replays the recorded
``tokenizers`` answer on PyPy) and ``scripts/record_hf_pipelines.py`` (which records it).
"""

from __future__ import annotations

from typing import Any, Dict

HF_IMPORT = "from tokenizers import Tokenizer, AddedToken"
PUREBPE_IMPORT = "from purebpe.compat.tokenizers import Tokenizer, AddedToken"
#: The pipelines (tests/data/hf_pipelines/<name>.json) the script runs on.
NAMES = ["llama2", "gpt2", "llama3", "roberta", "bpe_byte_fallback_unk"]

INFERENCE_SCRIPT = """
import json
{import_line}

tokenizer = Tokenizer.from_file(PATH)
tokenizer.add_special_tokens(["<|user|>", AddedToken("<|mask|>", lstrip=True)])
tokenizer.add_tokens(["purebpe"])
out = {{}}
enc = tokenizer.encode("Hello <|user|> purebpe world!  <|mask|> 日本語")
out["ids"] = enc.ids
out["tokens"] = enc.tokens
out["offsets"] = [list(o) for o in enc.offsets]
out["mask"] = enc.attention_mask
out["type_ids"] = enc.type_ids
out["special"] = enc.special_tokens_mask
out["len"] = len(enc)
out["plain"] = tokenizer.encode("Hello world", add_special_tokens=False).ids
batch = tokenizer.encode_batch(["a b c", "Über 123", ("Hello", "world")])
out["batch"] = [e.ids for e in batch]
out["decode"] = tokenizer.decode(enc.ids)
out["decode_keep"] = tokenizer.decode(enc.ids, skip_special_tokens=False)
out["decode_batch"] = tokenizer.decode_batch([e.ids for e in batch])
out["vocab_size"] = tokenizer.get_vocab_size()
out["vocab_size_model"] = tokenizer.get_vocab_size(with_added_tokens=False)
out["vocab"] = sorted(tokenizer.get_vocab().items())[:50]
out["t2i"] = [tokenizer.token_to_id(t) for t in ["<|user|>", "Hello", "nope", "a"]]
out["i2t"] = [tokenizer.id_to_token(i) for i in [0, 1, 5, out["vocab_size"] - 1, 10**6]]
again = Tokenizer.from_str(tokenizer.to_str())
out["again"] = again.encode("Hello <|user|> purebpe").ids
tokenizer.save(SAVE)
out["saved"] = Tokenizer.from_file(SAVE).encode("purebpe <|mask|>").ids
RESULT = out
"""


def run(import_line: str, path: str, save: str) -> Dict[str, Any]:
    """What the script computes with ``import_line`` on the tokenizer file ``path``."""
    scope: Dict[str, Any] = {"PATH": path, "SAVE": save}
    exec(INFERENCE_SCRIPT.format(import_line=import_line), scope)
    result: Dict[str, Any] = scope["RESULT"]
    return result
