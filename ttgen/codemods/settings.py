"""What a user sets that the codemods' output depends on: the line length their project sets, and
the comment that keeps a call site as it is (here, apart from the layout and the rewrite, so
that migrate's command line and the codemods' cache keys import no libcst)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

DEFAULT = 88  # black's line length, and ruff's
# the comment that keeps a call site as it is (on its first line, or alone on the line above)
KEEP = "# ttgen: keep"


def line_length(path: Path) -> int:
    """The line length of the project ``path`` is in: black's ``line-length`` in the nearest
    pyproject.toml above it, else ruff's (88, black's and ruff's, where neither is set or the
    file cannot be read), as black and ruff find their settings."""
    toml = _toml()
    for folder in path.resolve().parents:
        config = folder / "pyproject.toml"
        if config.is_file():
            try:
                tool = toml.loads(config.read_text()).get("tool", {}) if toml is not None else {}
            except (OSError, UnicodeDecodeError, ValueError):  # (tomllib.TOMLDecodeError is a ValueError)
                return DEFAULT
            for name in ("black", "ruff"):
                found = tool.get(name, {}).get("line-length") if isinstance(tool.get(name), dict) else None
                if isinstance(found, int):
                    return found
            return DEFAULT
    return DEFAULT


def _toml() -> ModuleType | None:
    """Python's TOML reader (3.11+), or on 3.10 tomli where it is installed (black, mypy and
    pytest need it there): ttgen depends on neither."""
    for name in ("tomllib", "tomli"):
        try:
            return importlib.import_module(name)
        except ImportError:
            pass
    return None
