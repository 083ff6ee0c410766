"""``purebpe train``: count words, train a variant, save the model, print a short summary."""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from typing import Any, BinaryIO, List, Optional, Sequence

from .._atomic import check_output_dir
from ..core import WordTable
from ..counting import CompactCounts
from ..errors import PureBPEError
from ..formats import FORMATS
from ..formats import load as load_model
from ..model import BPEModel
from ..pretokenize import Pretokenizer
from ..progress import Progress
from ..readers import LAYOUTS
from ..superbpe import PackedWords, train_stages
from ..superbpe import bytes_per_token as superbpe_bytes_per_token
from ..trainers import VARIANTS, choose_variant
from ..training import merge_counts
from ..training_options import TrainingOptions
from ..wordcounts import WordCounts
from ._common import (
    add_input_arguments,
    count_input,
    count_input_compact,
    pretokenizer_option,
    progress_option,
)

#: Options that say how to count, which a counts file has already fixed.
_COUNTING_OPTIONS = ("pretokenizer", "pattern", "processes", "max_chars", "doc_cap")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a byte-level BPE tokenizer",
        description=(
            "Train a byte-level BPE tokenizer on text files. With no FILES it trains on the "
            "Python documentation text in pydoc_data.topics, which ships with every interpreter."
        ),
    )
    add_input_arguments(parser, format_flag=False)
    parser.add_argument("--counts", metavar="FILE", help="train on words counted by 'purebpe count' instead")
    parser.add_argument("--vocab-size", type=int, default=1000, help="(default: %(default)s)")
    parser.add_argument("--variant", default="auto", help=f"auto, {', '.join(VARIANTS)}")
    parser.add_argument("--min-frequency", type=int, default=1, metavar="F")
    parser.add_argument("--max-token-length", type=int, default=None, metavar="BYTES")
    parser.add_argument(
        "--tie-break",
        default="canonical",
        choices=("canonical", "hf"),
        help="canonical: greatest bytes (default); hf: Hugging Face tokenizers' smallest ids",
    )
    parser.add_argument("--initial", metavar="DIR", help="continue training from this model")
    parser.add_argument(
        "--superbpe",
        action="store_true",
        help="SuperBPE: keep --transition merges learned with --pretokenizer (or those of "
        "--initial), then learn superwords that cross whitespace (see docs: Superword tokenizers)",
    )
    parser.add_argument(
        "--transition", type=int, metavar="T", help="with --superbpe: how many stage-1 merges"
    )
    parser.add_argument(
        "--format",
        dest="format",
        default=None,
        choices=list(FORMATS) + [layout for layout in LAYOUTS if layout != "auto"],
        help="the model's file format (default: purebpe), or the inputs' layout (text, jsonl, "
        "parquet: as --input-format)",
    )
    parser.add_argument("--model-format", default=None, choices=list(FORMATS), help="the model's file format")
    parser.add_argument("-o", "--output", default="purebpe-model", metavar="DIR")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    _resolve_formats(args)
    check_output_dir(args.output)
    progress = progress_option(args)
    initial: Optional[BPEModel] = load_model(args.initial) if args.initial else None
    if args.counts and args.files:
        raise PureBPEError("give either FILES or --counts, not both")
    if args.counts and any(getattr(args, option) is not None for option in _COUNTING_OPTIONS):
        raise PureBPEError(
            "--pretokenizer, --pattern and --processes apply to counting; with --counts the "
            "words are already counted (give them to 'purebpe count')"
        )
    if args.superbpe:
        return _run_superbpe(args, progress, initial)
    if args.transition is not None:
        raise PureBPEError("--transition goes with --superbpe")
    start = time.perf_counter()
    counts: WordCounts
    if args.counts:
        counts, source = WordCounts.load(args.counts), args.counts
        if args.special_token and tuple(args.special_token) != counts.special_tokens:
            raise PureBPEError(
                f"{args.counts} was counted with special tokens {list(counts.special_tokens)}; "
                "they are fixed when counting"
            )
        options = training_options(args, progress, initial, counts.special_tokens, counts.pretokenizer)
        options.check_initial_fits()
    else:
        # Fail on bad arguments before spending time on counting.
        options = training_options(args, progress, initial, args.special_token, pretokenizer_option(args))
        options.check_initial_fits()
        counts, source = count_input(args)
    counted = time.perf_counter()
    model = merge_counts(counts, options)
    trained = time.perf_counter()
    if model.vocab_size < args.vocab_size:
        print(f"purebpe: {early_stop_reason(counts, model, args)}", file=sys.stderr)
    paths = model.save(args.output, args.format)
    saved = time.perf_counter()
    seconds = [counted - start, trained - counted, saved - trained]
    variant = args.variant if args.variant != "auto" else f"auto ({choose_variant(counts.words)})"
    words = f"{counts.total():,} words, {len(counts):,} distinct"
    _print_summary(source, words, model, variant, seconds, paths, bytes_per_token(counts, model))
    return 0


def _resolve_formats(args: argparse.Namespace) -> None:
    """``--format`` names the model's format or, for a layout, the inputs' (the two sets of
    names do not overlap); ``--model-format`` and ``--input-format`` say which outright."""
    if args.format in LAYOUTS:
        if args.input_format != "auto" and args.input_format != args.format:
            raise PureBPEError(f"--format {args.format} and --input-format {args.input_format} disagree")
        args.input_format, args.format = args.format, None
    if args.format is not None and args.model_format is not None and args.format != args.model_format:
        raise PureBPEError(f"--format {args.format} and --model-format {args.model_format} disagree")
    args.format = args.model_format or args.format or "purebpe"


def _run_superbpe(args: argparse.Namespace, progress: Progress, initial: Optional[BPEModel]) -> int:
    """Stage 1 (unless ``--initial`` gives it), then stage 2 on the same input."""
    if args.counts:
        raise PureBPEError("--superbpe counts the text twice (two patterns): give FILES, not --counts")
    streams = [
        f
        for f in args.files
        if f == "-" or (os.path.exists(f) and not os.path.isfile(f) and not os.path.isdir(f))
    ]
    if streams:
        raise PureBPEError(
            f"{streams[0]}: --superbpe reads the corpus twice (two patterns), so not from a stream"
        )
    if (initial is None) == (args.transition is None):
        raise PureBPEError("--superbpe needs --transition T (stage 1 here) or --initial DIR (stage 1 done)")
    if args.max_token_length is not None or args.tie_break != "canonical":
        raise PureBPEError("--max-token-length and --tie-break do not apply to --superbpe")
    options = training_options(args, progress, initial, args.special_token, pretokenizer_option(args))
    start = time.perf_counter()
    with tempfile.TemporaryFile() as spill:
        stage2 = _Stage2Summary(args, spill)
        model = train_stages(
            options,
            lambda stage1: count_input(args, stage1.special_tokens, stage1.pretokenizer)[0],
            stage2.count,
            transition=args.transition,
            before_merging=stage2.keep_words,
        )
        trained = time.perf_counter()
        paths = model.save(args.output, args.format)
        seconds = [stage2.counted - start, trained - stage2.counted, time.perf_counter() - trained]
        compression = stage2.bytes_per_token(model)
    variant = f"{args.variant} (stage 1), superwords"
    _print_summary(stage2.source, stage2.words, model, variant, seconds, paths, compression)
    return 0


class _Stage2Summary:
    """What the summary says of SuperBPE's stage 2, taken as it runs: its counting (the source,
    the words, when it began) and its words, which wait in ``spill`` while the trainer runs."""

    def __init__(self, args: argparse.Namespace, spill: BinaryIO) -> None:
        self.args = args
        self.spill = spill
        self.counted = 0.0
        self.source = self.words = ""
        #: The table's words where they were not spilled, and their counts.
        self.replayed: Optional[Sequence[Sequence[int]]] = None
        self.counts: Sequence[int] = ()

    def count(self, stage2: TrainingOptions) -> CompactCounts:
        self.counted = time.perf_counter()
        counts, self.source = count_input_compact(self.args, stage2.special_tokens, stage2.pretokenizer)
        self.words = f"{counts.total():,} words, {len(counts):,} distinct"
        return counts

    def keep_words(self, table: WordTable) -> None:
        """The summary replays the words once more (the trainer drops them); packed ones wait on
        disk meanwhile: the trainer's own arrays make the peak (50 MB of 430 MiB, 100 MB of source)."""
        self.counts = table.counts
        if isinstance(table.words, PackedWords):
            table.words.write(self.spill)
        else:
            self.replayed = table.words

    def bytes_per_token(self, model: BPEModel) -> float:
        if self.replayed is None:
            self.spill.seek(0)
            return superbpe_bytes_per_token(PackedWords.read(self.spill), self.counts, model)
        return superbpe_bytes_per_token(self.replayed, self.counts, model)


def training_options(
    args: argparse.Namespace,
    progress: Progress,
    initial: Optional[BPEModel],
    special_tokens: Sequence[str],
    pretokenizer: Pretokenizer,
) -> TrainingOptions:
    """The options the command line gives, checked before any counting."""
    return TrainingOptions(
        vocab_size=args.vocab_size,
        special_tokens=special_tokens,
        variant=args.variant,
        pretokenizer=pretokenizer,
        min_frequency=args.min_frequency,
        max_token_length=args.max_token_length,
        tie_break=args.tie_break,
        initial=initial,
        progress=progress,
    )


def _print_summary(
    source: str,
    words: str,
    model: BPEModel,
    variant: str,
    seconds: List[float],
    paths: List[Any],
    compression: float,
) -> None:
    first = ", ".join(repr((left + right).decode("utf-8", "replace")) for left, right in model.merges[:8])
    print(f"trained on  {source}: {words}")
    print(
        f"vocab       {model.vocab_size:,} tokens ({len(model.merges):,} merges, "
        f"{len(model.special_tokens)} special) with variant {variant}"
    )
    print(f"first merges {first}")
    print(f"compression {compression:.2f} bytes per token on the training text")
    print(f"time        count {seconds[0]:.2f} s, merge {seconds[1]:.2f} s, save {seconds[2]:.2f} s")
    print(f"peak memory {peak_memory_mib():.0f} MiB")
    print(f"saved       {', '.join(str(p) for p in paths)}")


def early_stop_reason(counts: WordCounts, model: BPEModel, args: argparse.Namespace) -> str:
    """Why training stopped below ``--vocab-size``, in one line."""
    reached = f"stopped at vocab size {model.vocab_size:,} of {args.vocab_size:,}"
    if not any(len(word) > 1 for word in counts.words):
        return f"{reached}: the input has no pair of bytes to merge (empty, or only special tokens)"
    limits = f"at least {args.min_frequency} times"
    if args.max_token_length is not None:
        limits += f" within --max-token-length {args.max_token_length}"
    return f"{reached}: no pair left that occurs {limits}"


def bytes_per_token(counts: WordCounts, model: BPEModel) -> float:
    """UTF-8 bytes per token when the model encodes the counted words (specials excluded)."""
    table = WordTable.from_word_counts(counts.words, model.merges)
    n_bytes = sum(len(word) * n for word, n in counts.words.items())
    n_tokens = sum(len(word) * n for word, n in zip(table.words, table.counts))
    return n_bytes / n_tokens if n_tokens else 0.0


def peak_memory_mib() -> float:
    """This process's peak resident memory (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024
