"""Post-processors of HF ``tokenizers`` pipelines: what is added or fixed after the model.

``TemplateProcessing`` (BOS/EOS), ``ByteLevel`` (offset trimming), ``RobertaProcessing``
and ``Sequence`` of them. A processor's ``process_encodings(encodings,
add_special_tokens)`` turns the encoding of each text into a list of parts;
:func:`process` runs HF's ``PostProcessor::process`` around it (type ids, merging).
:func:`from_json` builds one from a ``tokenizer.json``'s ``"post_processor"`` object and
refuses other kinds (``BertProcessing`` ...) in one line.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Union

from ..errors import PureBPEError
from .encoding import Encoding, Offsets
from .offsets import ByteLevelProcessing, RobertaProcessing, trim_offsets
from .template import TemplateProcessing

__all__ = [
    "ByteLevelProcessing",
    "Encoding",
    "Offsets",
    "PostProcessor",
    "RobertaProcessing",
    "SequenceProcessing",
    "TemplateProcessing",
    "from_json",
    "process",
    "trim_offsets",
]


class SequenceProcessing:
    """HF's ``Sequence`` post-processor: each processor in turn on the parts so far."""

    def __init__(self, processors: List["PostProcessor"]) -> None:
        self.processors = processors

    def process_encodings(self, encodings: List[Encoding], add_special_tokens: bool) -> List[Encoding]:
        for processor in self.processors:
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return encodings


PostProcessor = Union[TemplateProcessing, ByteLevelProcessing, RobertaProcessing, SequenceProcessing]


def from_json(obj: Mapping[str, Any]) -> PostProcessor:
    """The post-processor of a ``tokenizer.json``'s ``"post_processor"`` object.

    >>> from_json({"type": "ByteLevel", "trim_offsets": False}).trim
    False
    """
    kind = obj.get("type") if isinstance(obj, Mapping) else None
    if kind == "TemplateProcessing":
        return TemplateProcessing.from_json(obj)
    if kind == "ByteLevel":
        return ByteLevelProcessing.from_json(obj)
    if kind == "RobertaProcessing":
        return RobertaProcessing.from_json(obj)
    if kind == "Sequence":
        processors = obj.get("processors")
        if not isinstance(processors, list):
            raise PureBPEError('post-processor Sequence has no "processors" list')
        return SequenceProcessing([from_json(p) for p in processors])
    raise PureBPEError(f"post-processor {kind!r} is not supported")


def process(
    processor: Optional[PostProcessor],
    encoding: Encoding,
    pair: Optional[Encoding] = None,
    add_special_tokens: bool = True,
) -> Encoding:
    """HF's post-processing of one text's (or a pair's) encoding.

    >>> process(None, Encoding([3], ["a"], [(0, 1)])).ids
    [3]
    """
    encodings = [encoding] if pair is None else [encoding, pair]
    if processor is None:
        if pair is not None:
            pair.type_ids = [1] * len(pair.ids)  # HF's default_process gives no type ids: see below
        return Encoding.merge(encodings)
    for index, part in enumerate(encodings):
        part.type_ids = [index] * len(part.ids)
    return Encoding.merge(processor.process_encodings(encodings, add_special_tokens))
