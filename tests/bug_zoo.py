"""The bug zoo: a correct small BPE trainer, and mutants of it that carry the bugs real
trainers shipped (issue 17's table) and other realistic ones.

The correct trainer is :data:`SOURCE`, one short program (a lazy max-heap of pairs, words
redone whole after each merge, as course code and Rust ports write it). A mutant is that
program with a few lines replaced: :class:`Mutant` holds the replacements, each of which
must match exactly once, so a mutant is a readable diff of :data:`SOURCE`. Each mutant
is compiled into a module of its own name below this one (``bug_zoo.<name>``), so that
its functions are importable as ``"bug_zoo.<name>:train_bpe"`` -- the conformance suite
runs them in worker processes with other ``PYTHONHASHSEED`` values from that spec.

Each program defines ``train_bpe(input_path, vocab_size, special_tokens,
min_frequency=1, max_token_length=None)`` (CS336's signature, with the limits) and
``train_from_counts(word_counts, vocab_size, special_tokens, ...)`` on ``{word_bytes:
count}``; the suite checks both.
"""

from __future__ import annotations

import sys
import types
from typing import Dict, Sequence, Tuple

import attr

SOURCE = '''
import heapq
import re
from collections import defaultdict

import regex

GPT2 = regex.compile(r"""'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+""")


def train_bpe(input_path, vocab_size, special_tokens, min_frequency=1, max_token_length=None):
    with open(input_path, "rb") as file:
        text = file.read().decode("utf-8")
    counts = count_words(text, special_tokens)
    return train_from_counts(counts, vocab_size, special_tokens, min_frequency, max_token_length)


def count_words(text, special_tokens):
    """Cut the text on the special tokens (longest first), pre-tokenize, count the words."""
    pieces = [text]
    if special_tokens:
        longest_first = sorted(special_tokens, key=len, reverse=True)
        pieces = re.split("|".join(re.escape(s) for s in longest_first), text)
    counts = {}
    for piece in pieces:
        for word in GPT2.findall(piece):
            counts[word.encode("utf-8")] = counts.get(word.encode("utf-8"), 0) + 1
    return counts


class Greatest:
    """A heap key that pops the greatest pair first (heapq pops the smallest)."""

    __slots__ = ("pair",)

    def __init__(self, pair):
        self.pair = pair

    def __lt__(self, other):
        return self.pair > other.pair


def tie_key(pair, ids):
    return Greatest(pair)


def add(pair_counts, pair, delta):
    pair_counts[pair] += delta


def pairs(word):
    return list(zip(word, word[1:]))


def merge(word, pair):
    """Replace each occurrence of ``pair`` in ``word``, left to right."""
    out = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def too_long(pair, max_token_length):
    return max_token_length is not None and len(pair[0]) + len(pair[1]) > max_token_length


def train_from_counts(word_counts, vocab_size, special_tokens, min_frequency=1, max_token_length=None):
    vocab = [bytes([b]) for b in range(256)]
    ids = {token: i for i, token in enumerate(vocab)}
    words = [[bytes([b]) for b in word] for word in word_counts]
    counts = list(word_counts.values())
    pair_counts = defaultdict(int)
    holders = defaultdict(set)
    for w, word in enumerate(words):
        for pair in pairs(word):
            add(pair_counts, pair, counts[w])
            holders[pair].add(w)
    heap = [(-count, tie_key(pair, ids), pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)
    merges = []
    num_merges = vocab_size - len(vocab) - len(special_tokens)
    while len(merges) < num_merges and heap:
        negative_count, _, pair = heapq.heappop(heap)
        count = pair_counts[pair]
        if count != -negative_count:  # stale: the count fell since this entry was pushed
            if count > 0:
                heapq.heappush(heap, (-count, tie_key(pair, ids), pair))
            continue
        if count < min_frequency:
            break
        if too_long(pair, max_token_length):
            continue
        merges.append(pair)
        ids.setdefault(pair[0] + pair[1], len(ids))
        gained = set()
        for w in sorted(holders.pop(pair)):
            word = words[w]
            for old in pairs(word):
                add(pair_counts, old, -counts[w])
            words[w] = word = merge(word, pair)
            for new in pairs(word):
                add(pair_counts, new, counts[w])
                holders[new].add(w)
                gained.add(new)
        for new in gained:
            if pair_counts[new] > 0:
                heapq.heappush(heap, (-pair_counts[new], tie_key(new, ids), new))
    tokens = vocab + [left + right for left, right in merges] + [s.encode("utf-8") for s in special_tokens]
    return dict(enumerate(tokens)), merges
'''


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Mutant:
    """A bug: where it shipped, and the lines of :data:`SOURCE` it replaces."""

    name: str
    bug: str
    shipped: str
    replacements: Tuple[Tuple[str, str], ...]

    def source(self) -> str:
        text = SOURCE
        for old, new in self.replacements:
            if text.count(old) != 1:
                raise ValueError(f"mutant {self.name}: {old!r} occurs {text.count(old)} times in SOURCE")
            text = text.replace(old, new)
        return text


def mutant(name: str, bug: str, shipped: str, *replacements: Tuple[str, str]) -> Mutant:
    return Mutant(name, bug, shipped, tuple(replacements))


MUTANTS: Sequence[Mutant] = (
    # -- the bugs of issue 17's table ------------------------------------------------------
    mutant(
        "ties_by_smallest_ids",
        "ties broken by the smallest pair of token ids",
        "HF tokenizers, rustbpe, bpeasy",
        ("    return Greatest(pair)\n", "    return (ids[pair[0]], ids[pair[1]])\n"),
    ),
    mutant(
        "specials_counted_as_text",
        "special tokens counted and merged as ordinary text",
        "HF tokenizers #1616",
        ("    if special_tokens:\n        longest_first", "    if False:\n        longest_first"),
    ),
    mutant(
        "stale_entry_dropped",
        "a stale heap entry dropped instead of re-pushed",
        "UniqToken #8",
        (
            "            if count > 0:\n"
            "                heapq.heappush(heap, (-count, tie_key(pair, ids), pair))\n",
            "",
        ),
    ),
    mutant(
        "neighbours_not_updated",
        "a pair's count not lowered when a neighbouring merge breaks it",
        "sentencepiece #318",
        (
            "            for old in pairs(word):\n                add(pair_counts, old, -counts[w])\n",
            "            for old in pairs(word):\n                if old == pair:\n"
            "                    add(pair_counts, old, -counts[w])\n",
        ),
        (
            "                add(pair_counts, new, counts[w])\n",
            "                if pair[0] + pair[1] in new:\n"
            "                    add(pair_counts, new, counts[w])\n",
        ),
    ),
    mutant(
        "counts_int32",
        "pair counts kept in signed 32-bit integers: they wrap past 2**31",
        "HF tokenizers #2058",
        (
            "    pair_counts[pair] += delta\n",
            "    pair_counts[pair] = (pair_counts[pair] + delta + 2**31) % 2**32 - 2**31\n",
        ),
    ),
    mutant(
        "counts_uint32",
        "pair counts kept in unsigned 32-bit integers: they wrap past 2**32",
        "(32-bit counters)",
        ("    pair_counts[pair] += delta\n", "    pair_counts[pair] = (pair_counts[pair] + delta) % 2**32\n"),
    ),
    mutant(
        "negative_count_under_max_length",
        "too-long pairs not counted when made, yet subtracted when broken: a count below 0, "
        "read as huge (unsigned), merges a pair over max_token_length",
        "HF tokenizers #2320",
        ("    pair_counts[pair] += delta\n", "    pair_counts[pair] = (pair_counts[pair] + delta) % 2**64\n"),
        (
            "                add(pair_counts, new, counts[w])\n",
            "                if not too_long(new, max_token_length):\n"
            "                    add(pair_counts, new, counts[w])\n",
        ),
        (
            "            for new in pairs(word):\n",
            "            for new in pairs(word):\n                gained.add(new)\n",
        ),
        ("        if too_long(pair, max_token_length):\n            continue\n", ""),
    ),
    mutant(
        "hash_order_ties",
        "ties broken by hash order (differs between processes)",
        "HF tokenizers #1794",
        ("    return Greatest(pair)\n", "    return hash(pair)\n"),
    ),
    mutant(
        "overlaps_not_counted",
        "overlapping pairs counted once (a a a holds (a, a) once)",
        "minbpe #72 discussion",
        (
            "    return list(zip(word, word[1:]))\n",
            "    out, i = [], 0\n    while i < len(word) - 1:\n        out.append((word[i], word[i + 1]))\n"
            "        i += 2 if word[i] == word[i + 1] else 1\n    return out\n",
        ),
    ),
    mutant(
        "merged_right_to_left",
        "occurrences merged right to left (a a a -> a aa)",
        "minbpe #72 discussion",
        (
            "    out = []\n    i = 0\n    while i < len(word):\n"
            "        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:\n"
            "            out.append(word[i] + word[i + 1])\n            i += 2\n        else:\n"
            "            out.append(word[i])\n"
            "            i += 1\n    return out\n",
            "    out = []\n    i = len(word) - 1\n    while i >= 0:\n"
            "        if i > 0 and (word[i - 1], word[i]) == pair:\n"
            "            out.insert(0, word[i - 1] + word[i])\n            i -= 2\n        else:\n"
            "            out.insert(0, word[i])\n"
            "            i -= 1\n    return out\n",
        ),
    ),
    mutant(
        "no_split_on_specials",
        "special tokens removed, not split on: words merge across a document boundary",
        "common in course code",
        ('        pieces = re.split("|".join(', '        pieces = [re.sub("|".join('),
        ("longest_first), text)\n", 'longest_first), "", text)]\n'),
    ),
    mutant(
        "vocab_size_ignores_specials",
        "vocab size off by one per special token (specials not counted)",
        "common in course code",
        (
            "    num_merges = vocab_size - len(vocab) - len(special_tokens)\n",
            "    num_merges = vocab_size - len(vocab)\n",
        ),
    ),
    mutant(
        "bytes_missing_from_vocab",
        "only the bytes seen in the corpus in the base vocab",
        "common in course code",
        (
            "    vocab = [bytes([b]) for b in range(256)]\n",
            "    vocab = sorted({bytes([b]) for word in word_counts for b in word})\n",
        ),
        (
            "    num_merges = vocab_size - len(vocab) - len(special_tokens)\n",
            "    num_merges = vocab_size - 256 - len(special_tokens)\n",
        ),
    ),
    # -- other realistic mutants -------------------------------------------------------------
    mutant(
        "ties_by_least_bytes",
        "ties to the lexicographically least pair",
        "(the other reading of the rule)",
        ("    return Greatest(pair)\n", "    return pair\n"),
    ),
    mutant(
        "ties_by_concatenation",
        "ties compared on left + right instead of (left, right)",
        "(a CS336 trap)",
        ("    return Greatest(pair)\n", "    return Greatest(pair[0] + pair[1])\n"),
    ),
    mutant(
        "word_counts_ignored",
        "each distinct word counted once",
        "common in course code",
        ("    counts = list(word_counts.values())\n", "    counts = [1] * len(word_counts)\n"),
    ),
    mutant(
        "shorter_special_first",
        "special tokens matched in the given order, not longest first",
        "common in course code",
        (
            "        longest_first = sorted(special_tokens, key=len, reverse=True)\n",
            "        longest_first = list(special_tokens)\n",
        ),
    ),
    mutant(
        "text_mode_newlines",
        "the file read in text mode: \\r\\n becomes \\n",
        "common in course code",
        (
            '    with open(input_path, "rb") as file:\n        text = file.read().decode("utf-8")\n',
            '    with open(input_path, encoding="utf-8") as file:\n        text = file.read()\n',
        ),
    ),
    mutant(
        "no_contractions",
        "the GPT-2 pattern without its contractions ('s, 'll, ...)",
        "common in course code",
        ("""GPT2 = regex.compile(r\"\"\"'(?:[sdmt]|ll|ve|re)| ?""", """GPT2 = regex.compile(r\"\"\" ?"""),
    ),
    mutant(
        "stops_at_count_one",
        "stops when the best pair occurs only once",
        "common in course code",
        ("        if count < min_frequency:\n", "        if count < max(2, min_frequency):\n"),
    ),
    mutant(
        "min_frequency_exclusive",
        "min_frequency compared with > instead of >=",
        "(an off-by-one)",
        ("        if count < min_frequency:\n", "        if count <= min_frequency:\n"),
    ),
    mutant(
        "max_token_length_exclusive",
        "max_token_length compared with >= instead of >",
        "(an off-by-one)",
        (
            "    return max_token_length is not None and len(pair[0]) + len(pair[1]) > max_token_length\n",
            "    return max_token_length is not None and len(pair[0]) + len(pair[1]) >= max_token_length\n",
        ),
    ),
    mutant(
        "first_occurrence_only",
        "only the first occurrence of the pair in a word merged",
        "(a loop that stops early)",
        (
            "            out.append(word[i] + word[i + 1])\n            i += 2\n",
            "            return out + [word[i] + word[i + 1]] + word[i + 2:]\n",
        ),
    ),
)


def load(source: str, name: str) -> types.ModuleType:
    """``source`` compiled as the module ``bug_zoo.<name>`` (registered in ``sys.modules``)."""
    module = types.ModuleType(f"{__name__}.{name}")
    module.__file__ = __file__
    exec(compile(source, f"<bug_zoo.{name}>", "exec"), module.__dict__)
    sys.modules[module.__name__] = module
    return module


#: The correct trainer, as a module.
correct = load(SOURCE, "correct")
#: Each mutant's module, by name.
MODULES: Dict[str, types.ModuleType] = {m.name: load(m.source(), m.name) for m in MUTANTS}
