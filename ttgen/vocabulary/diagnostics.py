"""Build-time diagnostics, printed the way mypy prints them.

``path:line:col: error: message  [code]`` followed by the source line and a caret, so editors and
CI log viewers that understand mypy's output link straight to the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


class BuildError(Exception):
    """Raised while parsing one file; carries the diagnostic that describes it."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int  # 0 for a problem with the path itself, not a place in a file
    column: int
    severity: str  # "error" or "warning"
    message: str
    code: str
    source_line: str = ""

    def render(self) -> str:
        """An error with the source line and a caret under the place; a warning on one line
        (a library of unannotated kernels gets one line per kernel, not a screen each), even
        where its message quotes source that spans lines."""
        where = f"{self.path}:{self.line}:{self.column}" if self.line else self.path  # 0: no line
        message = " ".join(part.strip() for part in _LINE_BREAK.split(self.message))  # source it quotes
        head = f"{where}: {self.severity}: {message}  [{self.code}]"
        if not self.source_line.strip() or self.severity == "warning":
            return head
        line = self.source_line.rstrip("\r\n")
        # The caret's indent is the width of the quoted text before it, shown the same way.
        caret = " " * len(_shown(line[: self.column - 1])) + "^"
        return f"{head}\n    {_shown(line)}\n    {caret}"


def _shown(text: str) -> str:
    """``text`` fit for a terminal: tabs expanded, control characters escaped."""
    visible = "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in text)
    return visible.expandtabs(8)


def at(
    path: str, source: str, line: int, column: int, message: str, code: str, severity: str = "error"
) -> Diagnostic:
    """A diagnostic for 1-based ``line``/``column`` in ``source``, quoting that line."""
    lines = source_lines(source)
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return Diagnostic(path, line, column, severity, message, code, text)


@lru_cache(maxsize=1)
def source_lines(source: str) -> tuple[str, ...]:
    """The lines of ``source`` as Python numbers them: str.splitlines also breaks at form feeds,
    which Python takes for whitespace.  (Kept for the last source: a module's diagnostics each
    quote a line of it.)"""
    return tuple(_LINE_BREAK.split(source))


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
