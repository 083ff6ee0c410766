"""The package's layers: every import points down the declared order, and no module imports
itself back in a circle.

:data:`LAYERS` is the order, bottom first, as ``docs/architecture.md`` draws it (a test
below checks that the drawing matches). A name stands for a module or a whole subpackage;
names of parts still to come may be listed before they exist. Every import of a purebpe
module is an edge: at module level, inside a function, or under ``if TYPE_CHECKING:``. An
edge may stay inside its layer or point to a lower one; one that points up fails, unless it
is an import inside a function (or for type checking only) named in :data:`ALLOWED_UP`
with its reason. Imports inside functions are reported too, so that none hides a cycle:
each must point down or be allowed.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

import pytest

import purebpe

PACKAGE = Path(purebpe.__file__).parent
ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"

#: The layers, bottom first: ``(layer name, the modules and subpackages in it)``.
LAYERS: List[Tuple[str, Tuple[str, ...]]] = [
    (
        "foundation",
        ("errors", "bytemap", "_atomic", "_workers", "progress", "specials", "pypy_nursery", "_lazy"),
    ),
    ("core", ("core",)),
    ("trainers", ("trainers",)),
    ("pretokenize", ("pretokenize", "normalizers", "pre_tokenizers")),
    ("model", ("model", "vocab", "wordcounts")),
    ("pipeline", ("models", "decoders", "processors")),
    ("ranks", ("tiktoken_compat",)),
    ("formats", ("formats",)),
    ("tokenizer", ("word_encoder", "token_tables", "encoding_sink", "tokenizer")),
    ("hf", ("hf",)),
    ("files", ("files",)),
    ("corpus", ("corpus", "readers")),
    ("counting", ("counting", "cluster", "corpus_encoding", "document_encoding")),
    ("training", ("training_options", "training", "superbpe", "wakong", "gpu")),
    ("api", ("purebpe",)),
    ("apps", ("cli", "__main__", "compat", "testing")),
]

#: The imports that may point up: ``(importer, imported): reason``. Each is inside a
#: function (or for type checking only), so it runs after both modules are loaded.
ALLOWED_UP: Dict[Tuple[str, str], str] = {
    ("purebpe.model", "purebpe.tokenizer"): (
        "BPEModel.tokenizer(): a convenience pointing at the layer built on the model"
    ),
    ("purebpe.model", "purebpe.formats"): (
        "BPEModel.save(): a convenience for purebpe.formats.save, which reads and writes models"
    ),
    ("purebpe.tokenizer", "purebpe.files.detect"): (
        "Tokenizer.from_file(): a convenience for purebpe.files, which builds tokenizers from files"
    ),
}


class Edge(NamedTuple):
    importer: str
    imported: str
    line: int
    #: ``"module"``, ``"function"`` or ``"typing"`` (under ``if TYPE_CHECKING:``).
    kind: str


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(node: ast.AST, importer: str, is_package: bool) -> List[str]:
    """The purebpe modules an import statement names (``from . import x`` names ``.x``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == "purebpe"]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = importer.split(".")
        if not is_package:
            base.pop()
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "purebpe":
        return []
    # ``from .pkg import name``: where ``name`` is a submodule, the edge is to it (``from ..
    # import decoders`` imports purebpe.decoders, not the package root); else to ``pkg``.
    found = []
    for alias in node.names:
        submodule = f"{target}.{alias.name}"
        found.append(submodule if module_exists(submodule) else target)
    return sorted(set(found))


def module_exists(module: str) -> bool:
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def edges_of(path: Path, source: Optional[str] = None) -> Iterator[Edge]:
    """The imports of purebpe modules in the module at ``path`` (or in ``source``, as if
    it were that module)."""
    importer = module_name(path)
    is_package = path.name == "__init__.py"
    if source is None:
        source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))

    def walk(node: ast.AST, kind: str) -> Iterator[Edge]:
        for child in ast.iter_child_nodes(node):
            child_kind = kind
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                child_kind = "function"
            elif isinstance(child, ast.If) and is_type_checking(child.test) and kind == "module":
                # The body only; an ``else`` branch runs.
                for statement in child.body:
                    yield from walk_statement(statement, "typing")
                for statement in child.orelse:
                    yield from walk_statement(statement, kind)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in imported_modules(child, importer, is_package):
                    yield Edge(importer, target, child.lineno, child_kind)
            yield from walk(child, child_kind)

    def walk_statement(statement: ast.stmt, kind: str) -> Iterator[Edge]:
        wrapper = ast.Module(body=[statement], type_ignores=[])
        yield from walk(wrapper, kind)

    yield from walk(tree, "module")


def all_edges() -> List[Edge]:
    return [edge for path in sorted(PACKAGE.rglob("*.py")) for edge in edges_of(path)]


def layer_of(module: str) -> Optional[int]:
    """The index in :data:`LAYERS` of the layer holding ``module`` (its longest listed prefix)."""
    best: Optional[Tuple[int, int]] = None  # (length of the matching name, layer)
    relative = module.split(".")[1:] or ["purebpe"]
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            parts = name.split(".")
            if relative[: len(parts)] == parts and (best is None or len(parts) > best[0]):
                best = (len(parts), index)
    return None if best is None else best[1]


def describe(edge: Edge) -> str:
    importer_layer = LAYERS[layer_of(edge.importer) or 0][0]
    imported_layer = LAYERS[layer_of(edge.imported) or 0][0]
    return (
        f"{edge.importer} (layer {importer_layer}), line {edge.line}, imports {edge.imported} "
        f"(layer {imported_layer}) at {edge.kind} level"
    )


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(
        module_name(path) for path in PACKAGE.rglob("*.py") if layer_of(module_name(path)) is None
    )
    assert unplaced == [], f"add these to LAYERS (and docs/architecture.md): {unplaced}"


def test_no_import_points_up() -> None:
    upward = []
    for edge in all_edges():
        here, there = layer_of(edge.importer), layer_of(edge.imported)
        assert here is not None and there is not None, describe(edge)
        if there <= here:
            continue
        key = (edge.importer, edge.imported)
        if edge.kind != "module" and key in ALLOWED_UP:
            continue
        upward.append(describe(edge))
    assert upward == []


def test_the_allowed_upward_imports_are_still_needed() -> None:
    found = {(edge.importer, edge.imported) for edge in all_edges() if edge.kind != "module"}
    assert sorted(set(ALLOWED_UP) - found) == []


def test_no_module_level_cycle() -> None:
    """Edges inside a layer are allowed; they must not close a circle."""
    graph: Dict[str, Set[str]] = {}
    for edge in all_edges():
        if edge.kind == "module" and edge.imported != edge.importer:
            graph.setdefault(edge.importer, set()).add(edge.imported)
    # A package's own ``from . import sub`` is not a cycle: drop edges from a package into
    # its own submodules, then look for a circle by depth-first search.
    for importer, targets in graph.items():
        graph[importer] = {t for t in targets if not t.startswith(importer + ".")}
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(module: str) -> Optional[List[str]]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            assert cycle is None, " -> ".join(cycle)


def test_the_walk_sees_every_kind_of_import() -> None:
    """The walker itself: module level, inside functions and methods, under TYPE_CHECKING,
    relative and absolute; and an upward edge is reported."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "from ..errors import PureBPEError\n"
        "import purebpe.tokenizer\n"
        "if TYPE_CHECKING:\n"
        "    from .model import BPEModel\n"
        "from .. import specials, __version__\n"
        "class A:\n"
        "    def f(self):\n"
        "        from ..cli import main\n"
    )
    probe = PACKAGE / "formats" / "_layers_probe.py"  # read from ``source``, not written
    edges = list(edges_of(probe, source))
    assert [(e.imported, e.kind) for e in edges] == [
        ("purebpe.errors", "module"),
        ("purebpe.tokenizer", "module"),
        ("purebpe.formats.model", "typing"),
        ("purebpe", "module"),
        ("purebpe.specials", "module"),
        ("purebpe.cli", "function"),
    ]
    assert layer_of("purebpe.formats._layers_probe") == layer_of("purebpe.formats")
    assert layer_of("purebpe.tokenizer") > layer_of("purebpe.formats")  # type: ignore[operator]


def drawn_layers() -> List[Tuple[str, List[str]]]:
    """The layers as ``docs/architecture.md`` draws them, bottom first: each row of the
    diagram between the ``layers:`` markers is ``layer │ modules``, top layer first."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = re.search(r"<!-- layers: begin -->(.*?)<!-- layers: end -->", text, re.S)
    assert block, f"{ARCHITECTURE}: no '<!-- layers: begin -->' ... '<!-- layers: end -->' block"
    rows = []
    for line in block.group(1).splitlines():
        cells = [cell.strip() for cell in line.split("\u2502")]  # "│"
        if len(cells) == 2 and re.fullmatch(r"[a-z_]+", cells[0]) and cells[0] != "layer":
            rows.append((cells[0], cells[1].split()))
    return rows[::-1]


def test_the_architecture_page_draws_these_layers() -> None:
    drawn = drawn_layers()
    declared = [(name, list(modules)) for name, modules in LAYERS]
    assert drawn == declared


def test_import_purebpe_loads_nothing_until_a_name_is_used() -> None:
    """The public names are imported on first use (so that the command starts light), and
    each is what its module defines."""
    probe = (
        "import sys, purebpe\n"
        "print(sorted(m for m in sys.modules if m.startswith('purebpe.')))\n"
        "purebpe.Tokenizer\n"
        "print('purebpe.tokenizer' in sys.modules, 'purebpe.trainers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["['purebpe._lazy']", "True False"]
    assert sorted(purebpe.__all__) == sorted(purebpe._LAZY) and set(purebpe.__all__) <= set(dir(purebpe))
    for name, module in purebpe._LAZY.items():
        assert getattr(purebpe, name) is getattr(importlib.import_module(f"purebpe.{module}"), name)
    with pytest.raises(AttributeError, match="no attribute 'Tokeniser'"):
        purebpe.Tokeniser  # noqa: B018
