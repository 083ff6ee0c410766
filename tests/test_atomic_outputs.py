"""Outputs are atomic as a whole: a full disk, a crash between two renames or a SIGKILL at any
instant leaves the old model, the new one, or a pair every loader refuses, never a wrong model."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
import purebpe._atomic as atomic
import purebpe.hf
from purebpe import BPEModel
from purebpe.errors import PureBPEError
from purebpe.files import convert as convert_module
from purebpe.files.convert import convert
from purebpe.formats import FORMATS

EOT = "<|endoftext|>"
OLD = BPEModel.from_merges([(b"a", b"b")], [EOT])
NEW = BPEModel.from_merges([(b"a", b"b"), (b"ab", b"c"), (b" ", b"t")], [EOT, "<pad>"], "none")
MULTI_FILE = ["gpt2", "tiktoken"]


def files_of(directory: Path) -> List[str]:
    return sorted(p.name for p in directory.iterdir())


def load_outcome(directory: Path) -> Any:
    """OLD, NEW, or the refusal's message; anything else fails the test."""
    try:
        model = purebpe.load(directory)
    except PureBPEError as exc:
        return str(exc)
    assert model in (OLD, NEW), "a mixed pair loaded as a model"
    return model


# --------------------------------------------------------------------------------------
# A full disk while writing any of the files: nothing changes
# --------------------------------------------------------------------------------------
class FullDisk:
    """A file that takes ``room`` bytes and then fails as a full disk does."""

    def __init__(self, f: Any, room: int) -> None:
        self.f, self.room = f, room

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(data)
        return int(self.f.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.f, name)

    def __enter__(self) -> "FullDisk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()


@contextlib.contextmanager
def full_disk(failing_file: int, after_bytes: int) -> Iterator[None]:
    """The ``failing_file``-th file written atomically (counting from 0) fills the disk
    after ``after_bytes`` bytes."""
    opened: List[int] = []
    real_fdopen = os.fdopen

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        opened.append(fd)
        f = real_fdopen(fd, *args, **kwargs)
        return FullDisk(f, after_bytes) if len(opened) - 1 == failing_file else f

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(atomic.os, "fdopen", fdopen)
        yield


def contents(directory: Path) -> Dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in files_of(directory)}


@settings(max_examples=16)
@given(
    format=st.sampled_from(list(FORMATS)), failing_file=st.integers(0, 2), after_bytes=st.integers(0, 5000)
)
def test_a_full_disk_changes_nothing(
    tmp_path_factory: pytest.TempPathFactory, format: str, failing_file: int, after_bytes: int
) -> None:
    # hf writes three files (tokenizer.json and what transformers reads beside it), gpt2
    # and tiktoken two: a failure on any of them leaves every one as it was.
    directory = tmp_path_factory.mktemp("full")
    OLD.save(directory, format)
    before = contents(directory)
    try:
        with full_disk(failing_file, after_bytes):
            NEW.save(directory, format)
    except PureBPEError as exc:
        assert "No space left on device" in str(exc) and ".tmp" not in str(exc)
        assert str(directory) in str(exc)
        assert contents(directory) == before
        assert purebpe.load(directory) == OLD
        return
    # The disk had room enough (or the failing file was not reached): the new model is there.
    assert purebpe.load(directory) == NEW


@settings(max_examples=16)
@given(
    format=st.sampled_from(list(FORMATS)), failing_file=st.integers(0, 5), after_bytes=st.integers(0, 5000)
)
def test_a_full_disk_during_a_conversion_changes_nothing(
    tmp_path_factory: pytest.TempPathFactory, format: str, failing_file: int, after_bytes: int
) -> None:
    # A conversion writes its files twice: to a scratch folder, where it reads them back,
    # then into the output.
    source = tmp_path_factory.mktemp("source")
    NEW.save(source)
    directory = tmp_path_factory.mktemp("converted")
    OLD.save(directory, format)
    before = contents(directory)
    try:
        with full_disk(failing_file, after_bytes):
            convert(source, directory, format)
    except PureBPEError as exc:
        assert "No space left on device" in str(exc) and "\n" not in str(exc)
        assert contents(directory) == before
        return
    assert purebpe.load(directory) == NEW


class ReadsWrong:
    """A tokenizer read back from a conversion's output that gives other ids."""

    special_ids: Dict[str, int] = {}

    def encode(self, text: str, *args: Any, **options: Any) -> List[int]:
        return [-1]


@pytest.mark.parametrize("source_format", ["purebpe", "hf"])
@pytest.mark.parametrize("format", list(FORMATS))
def test_a_conversion_that_reads_back_wrong_leaves_the_output_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, format: str, source_format: str
) -> None:
    source, directory = tmp_path / "source", tmp_path / "out"
    # A model every format holds (NEW's pre-tokenizer "none" is not one tiktoken's files take).
    BPEModel.from_merges([(b"a", b"b"), (b"ab", b"c")], [EOT]).save(source, source_format)
    OLD.save(directory, format)
    before = contents(directory)

    # The written files read back as a tokenizer giving other ids (as a bug of a format's
    # writer would); the source reads as it is.
    def reads_wrong(real_load: Any) -> Any:
        return lambda path, **options: (
            real_load(path, **options) if source in (Path(path), Path(path).parent) else ReadsWrong()
        )

    monkeypatch.setattr(convert_module, "_read_back", lambda paths, format: ReadsWrong())
    monkeypatch.setattr(convert_module, "load_tokenizer", reads_wrong(convert_module.load_tokenizer))
    monkeypatch.setattr(purebpe.hf, "load", reads_wrong(purebpe.hf.load))
    with pytest.raises(PureBPEError, match="reads back with other ids") as caught:
        convert(source, directory, format)
    assert str(directory) in str(caught.value)
    assert contents(directory) == before


# --------------------------------------------------------------------------------------
# A crash between the renames of a two-file save: the loaders refuse the pair
# --------------------------------------------------------------------------------------
class Crash(BaseException):
    pass


@pytest.mark.parametrize("format", MULTI_FILE)
def test_a_crash_between_the_renames_leaves_a_pair_every_loader_refuses(
    format: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    OLD.save(tmp_path, format)
    real_replace = os.replace
    calls: List[object] = []

    def replace_then_crash(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise Crash()
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace_then_crash)
    with pytest.raises(Crash):
        NEW.save(tmp_path, format)
    monkeypatch.undo()
    names = files_of(tmp_path)
    assert not any(name.endswith(".tmp") for name in names)
    first, second = (
        tmp_path / name
        for name in {
            "gpt2": ("vocab.json", "merges.txt"),
            "tiktoken": ("tokenizer.tiktoken", "tokenizer.tiktoken.json"),
        }[format]
    )
    for target in (tmp_path, first, second):
        with pytest.raises(PureBPEError, match="not saved together") as caught:
            purebpe.load(target)
        assert str(first) in str(caught.value) and str(second) in str(caught.value)
        assert "\n" not in str(caught.value)
    if format == "tiktoken":
        pytest.importorskip("tiktoken", reason="tiktoken is a CPython-only test peer")
        from purebpe.formats.tiktoken_format import tiktoken_encoding

        with pytest.raises(PureBPEError, match="not saved together"):
            tiktoken_encoding(tmp_path)
    else:
        with pytest.raises(PureBPEError, match="not saved together"):
            purebpe.Tokenizer.from_files(first, second)


@pytest.mark.parametrize("format", MULTI_FILE)
def test_files_mixed_by_hand_are_refused(format: str, tmp_path: Path) -> None:
    OLD.save(tmp_path / "old", format)
    NEW.save(tmp_path / "new", format)
    partner = {"gpt2": "vocab.json", "tiktoken": "tokenizer.tiktoken"}[format]
    (tmp_path / "new" / partner).write_bytes((tmp_path / "old" / partner).read_bytes())
    with pytest.raises(PureBPEError, match="not saved together"):
        purebpe.load(tmp_path / "new")


# --------------------------------------------------------------------------------------
# SIGKILL at random instants of a save loop
# --------------------------------------------------------------------------------------
SAVE_LOOP = """
import sys
from purebpe import BPEModel
old = BPEModel.from_merges([(b"a", b"b")], ["<|endoftext|>"])
new = BPEModel.from_merges([(b"a", b"b"), (b"ab", b"c"), (b" ", b"t")], ["<|endoftext|>", "<pad>"], "none")
print("ready", flush=True)
while True:
    for model in (new, old):
        model.save(sys.argv[1], sys.argv[2])
"""


def child_env() -> dict:  # type: ignore[type-arg]
    return dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))


@pytest.mark.parametrize("format", list(FORMATS))
def test_sigkill_at_any_instant_never_leaves_a_wrong_model(format: str, tmp_path: Path) -> None:
    rng = random.Random(format)
    OLD.save(tmp_path, format)
    for _ in range(6):
        child = subprocess.Popen(
            [sys.executable, "-c", SAVE_LOOP, str(tmp_path), format], env=child_env(), stdout=subprocess.PIPE
        )
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.05, 0.3))
        child.kill()
        child.wait()
        child.stdout.close()
        outcome = load_outcome(tmp_path)
        if isinstance(outcome, str):
            assert "not saved together" in outcome or "no such file" in outcome
    # The next save removes the temporaries the killed processes left, and only those.
    foreign = tmp_path / ".notes.txt.tmp"
    foreign.write_text("not ours")
    OLD.save(tmp_path, format)
    assert purebpe.load(tmp_path) == OLD
    assert [name for name in files_of(tmp_path) if name.startswith(".")] == [foreign.name]


# --------------------------------------------------------------------------------------
# A signal at any instant: its handler's exception, raised before each line of a save in
# turn and as each system call it makes returns (its file made, the name not yet stored),
# then the command line's cleanup. Nothing may be left but the old files.
# (Line events, not opcode events: raising from an opcode trace crashes CPython 3.9 and 3.10,
# and 3.12 delivers no opcode events to a frame that turns them on mid-call.)
# --------------------------------------------------------------------------------------
class Signalled(BaseException):
    pass


WATCHED = {atomic.__file__, contextlib.__file__}
SYSTEM_CALLS = ("open", "fdopen", "mkdir", "replace", "rename", "fsync", "close", "unlink", "rmdir")


def interrupted_at_every_instant(save: Any, directory: Path) -> int:
    """Run ``save()`` interrupted at its first instant, then its second, ..., each time
    followed by the command line's cleanup; returns the first instant a save ran through."""
    for instant in range(1, 100_000):
        clock = [0]

        def tick(clock: List[int] = clock, instant: int = instant) -> None:
            clock[0] += 1
            if clock[0] == instant:
                raise Signalled()

        def trace(frame: Any, event: str, arg: Any) -> Any:
            if frame.f_code.co_filename not in WATCHED:
                return None
            if event == "line":
                tick()
            return trace

        def returning_then_tick(call: Any) -> Any:
            def system_call(*args: Any, **kwargs: Any) -> Any:
                result = call(*args, **kwargs)
                if sys._getframe(1).f_code.co_filename in WATCHED:
                    tick()
                return result

            return system_call

        with pytest.MonkeyPatch.context() as patch:
            for name in SYSTEM_CALLS:
                patch.setattr(os, name, returning_then_tick(getattr(os, name)))
            sys.settrace(trace)
            try:
                save()
            except Signalled:
                pass
            else:
                return instant
            finally:
                sys.settrace(None)
        atomic.remove_own_temporaries()  # what the command line does as the run ends
        left = [name for name in files_of(directory) if name.startswith(".")]
        assert left == [], f"instant {instant}: {left}"
    raise AssertionError("the save never ran through")


def test_a_signal_at_any_instant_of_a_file_save_leaves_no_temporary(tmp_path: Path) -> None:
    def save() -> None:
        with atomic.atomic_file(tmp_path / "ids.bin") as f:
            f.write(b"0123")

    instants = interrupted_at_every_instant(save, tmp_path)
    assert instants > 50
    assert files_of(tmp_path) == ["ids.bin"]


def test_a_signal_at_any_instant_of_a_two_file_save_leaves_no_temporary(tmp_path: Path) -> None:
    def save() -> None:
        atomic.write_files([(tmp_path / "merges.txt", b"a b\n"), (tmp_path / "vocab.json", b"{}")])

    instants = interrupted_at_every_instant(save, tmp_path)
    assert instants > 50
    assert files_of(tmp_path) == ["merges.txt", "vocab.json"]


def test_a_signal_at_any_instant_of_a_scratch_directory_leaves_nothing(tmp_path: Path) -> None:
    made: List[str] = []

    def save() -> None:
        made.append(atomic.make_temporary_directory(tmp_path, ".shards.purebpe-"))

    interrupted_at_every_instant(save, tmp_path)
    assert len(made) == 1 and os.path.isdir(made[0])
    atomic.remove_temporary_directory(made[0])
    assert files_of(tmp_path) == []


def test_only_stale_temporaries_of_our_own_naming_are_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    here = atomic._origin()
    stale = tmp_path / f".purebpe.json.purebpe-{dead.pid}-h{here}-x1y2.tmp"  # ours, its writer gone
    live = tmp_path / f".purebpe.json.purebpe-{os.getppid()}-h{here}-a1b2.tmp"  # a running process
    elsewhere = tmp_path / f".purebpe.json.purebpe-{dead.pid}-h00000000-c3d4.tmp"  # another host's, young
    old_elsewhere = tmp_path / f".purebpe.json.purebpe-{dead.pid}-h00000000-e5f6.tmp"  # ... and old
    other = tmp_path / f".purebpe.json.{dead.pid}.tmp"  # another tool's naming
    for path in (stale, live, elsewhere, old_elsewhere, other):
        path.write_text("partial")
    long_ago = time.time() - atomic.STALE_SECONDS - 60
    os.utime(old_elsewhere, (long_ago, long_ago))
    OLD.save(tmp_path)
    assert not stale.exists() and not old_elsewhere.exists()
    assert live.exists() and elsewhere.exists() and other.exists()


# A writer whose pid means nothing here (another PID namespace or host): it names its
# temporary with a pid that does not run here, and its file is made to look old.
FOREIGN_WRITER = """
import os, sys
from purebpe import _atomic
os.getpid = lambda: int(sys.argv[2])
_atomic._origin_cache[:] = ["0" * 8]
with _atomic.atomic_file(sys.argv[1]) as f:
    f.write(b"first half ")
    f.flush()
    print("writing", flush=True)
    sys.stdin.readline()
    f.write(b"second half")
"""


def test_a_live_temporary_of_another_pid_namespace_is_never_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    writer = subprocess.Popen(
        [sys.executable, "-c", FOREIGN_WRITER, str(tmp_path / "out.bin"), str(dead.pid)],
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert writer.stdout is not None and writer.stdin is not None
    assert writer.stdout.readline() == b"writing\n"
    (temporary,) = [p for p in tmp_path.iterdir() if p.name.startswith(".out.bin.purebpe-")]
    long_ago = time.time() - atomic.STALE_SECONDS - 60
    os.utime(temporary, (long_ago, long_ago))
    for _ in range(3):  # saves beside it, as another container's run would make
        OLD.save(tmp_path)
        atomic.write_bytes(tmp_path / "other.bin", b"x")
    assert temporary.exists(), "a live run's temporary was removed: its lock was not honoured"
    writer.stdin.write(b"go\n")
    writer.stdin.close()
    assert writer.wait(timeout=30) == 0
    assert (tmp_path / "out.bin").read_bytes() == b"first half second half"


# --------------------------------------------------------------------------------------
# A directory with several formats: the same model, or a refusal naming the files
# --------------------------------------------------------------------------------------
def test_a_stale_file_of_another_format_never_wins(tmp_path: Path) -> None:
    OLD.save(tmp_path, "purebpe")
    NEW.save(tmp_path, "hf")
    with pytest.raises(PureBPEError, match="holds different models in purebpe.json and tokenizer.json"):
        purebpe.load(tmp_path)
    assert purebpe.load(tmp_path / "tokenizer.json") == NEW  # named, it loads


def test_several_formats_of_the_same_model_load(tmp_path: Path) -> None:
    for format in FORMATS:
        NEW.save(tmp_path, format)
    assert purebpe.load(tmp_path) == NEW
