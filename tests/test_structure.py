"""The folder list is the architecture: each world of ttgen is a package, and its imports say
which worlds it stands on.  Every import of the package's own modules is read with ``ast`` (at
module level, in functions and under ``if TYPE_CHECKING:`` alike: a type is a dependency too).

* ``vocabulary``: what every world speaks; imports no other world (and, at import, no torch,
  Triton or libcst: reading a manifest or a kernel model needs none of them);
* ``runtime``: what generated launchers import; stands on the vocabulary alone (never libcst);
* ``generate``: source -> launchers; stands on the vocabulary alone (never torch or Triton);
* ``bundle``: compiles a manifest; stands on the vocabulary and the runtime;
* ``codemods``: edits a user's source; stands on the vocabulary and the generator;
* ``dispatch``: routes ``kernel[grid](...)`` to launchers; stands on the vocabulary, the runtime and
  the generator (which builds a launcher on first use).

No file imports itself back through others (no circles), and the top of ``ttgen/`` holds only
the CLI, the package's face, the module kernel sources import (``ttgen.annotations``, which
stands on the vocabulary alone) and the one mypy loads (``ttgen.mypy_plugin``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ttgen"

# world -> the worlds it may import (besides itself)
ALLOWED = {
    "vocabulary": set(),
    "runtime": {"vocabulary"},
    "generate": {"vocabulary"},
    "bundle": {"vocabulary", "runtime"},
    "codemods": {"vocabulary", "generate"},
    "dispatch": {"vocabulary", "runtime", "generate"},
    "cli": {"vocabulary", "runtime", "generate", "bundle", "codemods", "dispatch"},
    "__main__": {"cli"},
    "__init__": set(),
    "annotations": {"vocabulary"},
    "mypy_plugin": {"vocabulary"},
}
TOP = {"__init__.py", "__main__.py", "cli.py", "annotations.py", "mypy_plugin.py", "py.typed"}
# Third-party packages a world must not import anywhere, and those it must not import at import time.
NEVER = {"runtime": {"libcst"}, "generate": {"torch", "triton"}, "vocabulary": {"libcst"}}
NOT_AT_IMPORT = {"vocabulary": {"torch", "triton", "libcst"}}


def _modules() -> dict[str, Path]:
    found = {}  # (a compiled extension is its stub: ttgen/runtime/_native.pyi)
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyi")]):
        parts = ("ttgen", *path.relative_to(PACKAGE).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module of ttgen that importing ``name`` runs last (its own file)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """``(imported name, line, at module level)`` for every import statement of ``path``."""
    tree = ast.parse(path.read_text())
    top_level = {id(node) for node in tree.body}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:  # `from pkg import module` imports the module
                name = f"{base}.{alias.name}"
                found.append((name if name in MODULES else base, node.lineno, id(node) in top_level))
    return found


def _world(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


def _arrows() -> dict[str, set[str]]:
    arrows: dict[str, set[str]] = {module: set() for module in MODULES}
    for module, path in MODULES.items():
        for name, _, _ in _imports(module, path):
            target = _resolve(name) if name.startswith("ttgen") else None
            if target is not None and target != module:
                arrows[module].add(target)
    return arrows


def test_the_top_of_the_package_holds_only_the_cli_the_face_and_the_worlds() -> None:
    files = {p.name for p in PACKAGE.iterdir() if p.is_file() and not p.name.endswith((".so", ".pyd"))}
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert files <= TOP, f"move {sorted(files - TOP)} into the world it belongs to"
    assert folders <= set(ALLOWED), f"{sorted(folders - set(ALLOWED))}: a world this test does not know"


def test_each_world_imports_only_the_worlds_below_it() -> None:
    wrong = []
    for module, targets in _arrows().items():
        world = _world(module)
        for target in sorted(targets):
            other = _world(target)
            if other not in (world, "__init__") and other not in ALLOWED[world]:  # (the face: __version__)
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports across worlds that the layering forbids:\n" + "\n".join(wrong)


def test_no_import_circles() -> None:
    arrows = _arrows()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(arrows[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(arrows):
        if module not in index:
            visit(module)
    assert not circles, f"import circles: {circles}"


def test_third_party_imports_stay_in_their_worlds() -> None:
    wrong = []
    for module, path in MODULES.items():
        world = _world(module)
        for name, line, top_level in _imports(module, path):
            root = name.split(".")[0]
            if root in NEVER.get(world, ()) or top_level and root in NOT_AT_IMPORT.get(world, ()):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {name}")
    assert not wrong, "\n".join(wrong)


def test_the_checks_see_the_arrows_they_judge() -> None:
    """A negative control: the reader finds known arrows, so the tests above are not empty."""
    arrows = _arrows()
    assert "ttgen.vocabulary.kinds" in arrows["ttgen.generate.emit"]
    assert "ttgen.runtime.core" in arrows["ttgen.runtime.launcher"]
    assert "ttgen.runtime.live" in arrows["ttgen.bundle.compile"]


def test_a_launcher_s_import_never_loads_the_build_s_modules() -> None:
    """``import ttgen.runtime`` (what every launcher module does first) creates the classes of
    the vocabulary it uses, not those of the build's kernel model or spelling: each frozen
    dataclass costs a launcher's start a fraction of a millisecond."""
    code = "import sys, ttgen.runtime; print(' '.join(m for m in sys.modules if m.startswith('ttgen')))"
    loaded = set(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                cwd=PACKAGE.parent).stdout.split())
    assert "ttgen.vocabulary.kinds" in loaded  # (the check reads what it judges)
    build = {m for m in loaded if _world(m) in ("generate", "codemods", "bundle")}
    assert not build and not loaded & {"ttgen.vocabulary.model", "ttgen.vocabulary.spelling"}, sorted(loaded)
