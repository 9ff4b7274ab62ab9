"""Build-time diagnostics, printed the way mypy prints them.

``path:line:col: error: message  [code]`` followed by the source line and a caret, so editors and
CI log viewers that understand mypy's output link straight to the problem.
"""

from __future__ import annotations

from dataclasses import dataclass


class BuildError(Exception):
    """Raised while parsing one file; carries the diagnostic that describes it."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    column: int
    severity: str  # "error" or "warning"
    message: str
    code: str
    source_line: str = ""

    def render(self) -> str:
        head = f"{self.path}:{self.line}:{self.column}: {self.severity}: {self.message}  [{self.code}]"
        if not self.source_line.strip():
            return head
        text = self.source_line.rstrip("\n").expandtabs(8)
        caret = " " * (self.column - 1) + "^"
        return f"{head}\n    {text}\n    {caret}"


def at(
    path: str, source: str, line: int, column: int, message: str, code: str, severity: str = "error"
) -> Diagnostic:
    """A diagnostic for 1-based ``line``/``column`` in ``source``, quoting that line."""
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return Diagnostic(path, line, column, severity, message, code, text)
