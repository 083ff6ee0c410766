"""What ``transformers`` reads beside a ``tokenizer.json``: its config and special-token map.

``tokenizers`` needs only ``tokenizer.json``, but ``transformers.AutoTokenizer`` takes the
roles of the special tokens (which one ends a text, which begins one) from
``tokenizer_config.json`` and ``special_tokens_map.json``; without them ``eos_token`` is
``None`` and ``all_special_tokens`` is empty.  :func:`transformers_files` makes both: the
end-of-text token by its usual names (``<|endoftext|>``, ``<|end_of_text|>``, ``</s>``,
``<|im_end|>`` ...; a model with a single special token uses it), likewise the beginning,
unknown and padding tokens, and every other special token as an additional one, each also
under ``added_tokens_decoder`` by id.  A save writes them with their ``tokenizer.json`` as
one unit (:func:`purebpe._atomic.write_files`): a full disk leaves all three as they were.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .bytelevel import json_bytes

__all__ = ["FILES", "special_token_roles", "transformers_files"]

FILES = ("tokenizer_config.json", "special_tokens_map.json")

_ROLES = {
    "eos_token": ("<|endoftext|>", "<|end_of_text|>", "</s>", "<|im_end|>", "<|eot_id|>", "<eos>"),
    "bos_token": ("<|begin_of_text|>", "<s>", "<|startoftext|>", "<bos>"),
    "unk_token": ("<unk>", "<|unk|>"),
    "pad_token": ("<pad>", "<|pad|>", "<|finetune_right_pad_id|>"),
}


def special_token_roles(special_ids: Mapping[str, int]) -> Dict[str, str]:
    """``{"eos_token": ..., ...}`` for the special tokens whose names say their role.

    >>> special_token_roles({"<|endoftext|>": 50256})
    {'eos_token': '<|endoftext|>'}
    >>> special_token_roles({"<s>": 1, "</s>": 2, "<unk>": 0})
    {'eos_token': '</s>', 'bos_token': '<s>', 'unk_token': '<unk>'}
    """
    roles: Dict[str, str] = {}
    for role, names in _ROLES.items():
        found: Optional[str] = next((name for name in names if name in special_ids), None)
        if found is not None:
            roles[role] = found
    if not roles and len(special_ids) == 1:
        roles["eos_token"] = next(iter(special_ids))
    return roles


def transformers_files(special_ids: Mapping[str, int], directory: Path) -> List[Tuple[Path, bytes]]:
    """``tokenizer_config.json`` and ``special_tokens_map.json`` for ``directory``: each
    ``(path, contents)``, to write with the ``tokenizer.json`` they go with.

    >>> [(path.name, len(data) > 0) for path, data in transformers_files({"</s>": 2}, Path("out"))]
    [('tokenizer_config.json', True), ('special_tokens_map.json', True)]
    """
    roles = special_token_roles(special_ids)
    additional = [
        text
        for text, _ in sorted(special_ids.items(), key=lambda item: item[1])
        if text not in roles.values()
    ]
    special_map: Dict[str, Any] = dict(roles)
    if additional:
        special_map["additional_special_tokens"] = additional
    config: Dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,
        "model_max_length": 1000000000000000019884624838656,  # transformers' "no limit"
        "added_tokens_decoder": {
            str(tid): {
                "content": text,
                "lstrip": False,
                "normalized": False,
                "rstrip": False,
                "single_word": False,
                "special": True,
            }
            for text, tid in sorted(special_ids.items(), key=lambda item: item[1])
        },
        **special_map,
    }
    return [(directory / FILES[0], json_bytes(config)), (directory / FILES[1], json_bytes(special_map))]
