"""The manifest: which launches to precompile, one line each, sorted, diff-friendly.

Recorded (``ttgen record``, or ``TTGEN_RECORD=path``: see ttgen/runtime/record.py) or written by
hand, in one format::

    kernel MODULE:NAME TARGET PARAM=TOKEN... [| OPTION=VALUE...]
    tune MODULE:NAME TARGET PARAM=TOKEN... -> NAME=VALUE...
    call MODULE:NAME PARAM=VALUE...

``MODULE:NAME`` is the kernel as its module defines it; ``TARGET`` the GPU (``cuda:90``).  A
``kernel`` line is one compiled binary: every parameter of the kernel in order, each a token of
ttgen/vocabulary/keys.py (``x=*fp32:16 n=i32:16 BLOCK=1024``; ``?tuple`` for a value it has no
word for: such a line records what was seen, and ``ttgen bundle`` leaves it out), then the
launch options Triton was given that differ from its defaults (an autotuned config's
included).  A ``tune`` line is one autotune choice: the values of the autotune key's parameters
and the dtypes of the tensors (what Triton's Autotuner keys on), and after ``->`` the chosen
config (its parameters and options).  A ``call`` line is what ``ttgen annotate`` reads shapes
from, and ``ttgen bundle`` skips: the sizes of one launch, every parameter in order, a tensor as
its shape and strides (``x=[4,8]:[8,1]``), an int as its value, None as ``None``, anything else
``?``; one line per distinct launch.  A manifest may have none (recorded before ttgen had them).
``#`` starts a comment line.
"""

from __future__ import annotations

import fcntl
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ttgen.vocabulary import keys
from ttgen.vocabulary.options import non_default

if TYPE_CHECKING:  # imported where used: a launcher's bundle lookup reads no manifest file
    from ttgen.vocabulary.diagnostics import Diagnostic

HEADER = """\
# ttgen manifest: the launches to precompile, one per line; `ttgen bundle` builds them.
#   kernel MODULE:NAME TARGET PARAM=TOKEN... [| OPTION=VALUE...]
#   tune MODULE:NAME TARGET PARAM=TOKEN... -> NAME=VALUE...
#   call MODULE:NAME PARAM=VALUE...  (the sizes of a launch, for ttgen annotate)
"""

# A word: unquoted characters and quoted strings (a str constant may hold spaces).
_WORD = re.compile(r"""(?:[^\s'"]|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")+""")
_KERNEL = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
_NAME = re.compile(r"[A-Za-z_]\w*")
_SIZES = re.compile(r"\[(\d+(?:,\d+)*)?\]:\[(\d+(?:,\d+)*)?\]")  # a call line's tensor: [4,8]:[8,1]
_INT = re.compile(r"-?\d+")

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Entry:
    kind: str  # "kernel", "tune" or "call"
    kernel: str  # "module:name"
    target: str  # "cuda:90" ("" on a call line)
    params: Pairs  # (parameter, token); on a call line (parameter, call_word)
    settings: Pairs  # kernel: the options Triton is given; tune: the chosen config
    line: int = field(default=0, compare=False)  # where a parsed entry was (1-based)

    @property
    def key(self) -> str:
        """What the bundle looks the entry up by: the target and the launch's key (for a
        ``tune`` line, the autotune key only: the choice is the value)."""
        text = f"{self.target} {words(self.params)}".rstrip()
        return f"{text} | {words(self.settings)}" if self.kind == "kernel" and self.settings else text

    @property
    def choice(self) -> str:
        return words(self.settings)

    def text(self) -> str:
        if self.kind == "call":
            return f"call {self.kernel} {words(self.params)}".rstrip()
        tail = f" -> {self.choice}" if self.kind == "tune" else ""
        return f"{self.kind} {self.kernel} {self.key}{tail}"

    def retargeted(self, target: str) -> Entry:
        return Entry(self.kind, self.kernel, target, self.params, self.settings, self.line)


def words(pairs: Pairs) -> str:
    """``name=value name=value``."""
    return " ".join(f"{name}={value}" for name, value in pairs)


def kernel_entry(kernel: str, target: str, names: Iterable[str], tokens: Iterable[str], options: dict[str, object]) -> Entry:
    """A ``kernel`` line: the options written are those that differ from Triton's defaults,
    however the launch passed them (a config passes them all), so that one binary is one line."""
    settings = tuple((k, keys.literal(v)) for k, v in sorted(non_default(options).items()))
    return Entry("kernel", kernel, target, tuple(zip(names, tokens)), settings)


def call_entry(kernel: str, names: Iterable[str], values: Iterable[object]) -> Entry:
    """A ``call`` line: the sizes of one launch (every parameter's value, in order)."""
    return Entry("call", kernel, "", tuple((name, call_word(value)) for name, value in zip(names, values)), ())


def call_word(value: object) -> str:
    """A value as a call line writes it: a tensor's shape and strides, an int, None or ``?``."""
    if value is None:
        return "None"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    shape, stride = getattr(value, "shape", None), getattr(value, "stride", None)
    if shape is not None and callable(stride):  # a torch tensor (a descriptor has no stride())
        strides = stride()
        if all(isinstance(n, int) for n in (*shape, *strides)) and len(shape) == len(strides):
            return f"[{','.join(map(str, shape))}]:[{','.join(map(str, strides))}]"
    return "?"


@dataclass(frozen=True)
class Sizes:
    """A tensor on a call line."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]


def call_value(word: str) -> Sizes | int | None | str:
    """A call line's value: `Sizes`, an int, None, or ``"?"``."""
    sizes = _SIZES.fullmatch(word)
    if sizes is not None:
        shape, strides = (tuple(int(n) for n in group.split(",")) if group else () for group in sizes.groups())
        return Sizes(shape, strides)
    return None if word == "None" else int(word) if _INT.fullmatch(word) else word


class Malformed(ValueError):
    """A line that is not an entry: ``args`` are (message, 1-based column)."""


def parse_line(text: str) -> Entry:
    words = [(m.group(), m.start() + 1) for m in _WORD.finditer(text)]
    if len(words) >= 2 and words[0][0] == "call":
        return _parse_call(words)
    if len(words) < 3 or words[0][0] not in ("kernel", "tune"):
        raise Malformed("expected 'kernel MODULE:NAME TARGET PARAM=TOKEN...' or 'tune ... -> CHOICE'", 1)
    (kind, _), (kernel, kernel_at), (target, target_at) = words[:3]
    if not _KERNEL.fullmatch(kernel):
        raise Malformed(f"expected MODULE:NAME (examples.kernels.vector_add:add_kernel), got {kernel!r}", kernel_at)
    try:
        keys.target_arch(target)
    except ValueError as exc:
        raise Malformed(str(exc), target_at) from None
    separator = "->" if kind == "tune" else "|"
    rest = [w for w, _ in words[3:]]
    head = words[3:][: rest.index(separator)] if separator in rest else words[3:]
    tail = words[3 + len(head) + 1:] if separator in rest else []
    if kind == "tune" and not tail:
        raise Malformed("a tune line ends with '-> NAME=VALUE...': the chosen config", len(text.rstrip()) + 1)
    params = _parse_pairs(head, token=True)
    settings = _parse_pairs(tail, token=False)
    return Entry(kind, kernel, target, params, settings)


def _parse_call(words: list[tuple[str, int]]) -> Entry:
    (kernel, kernel_at) = words[1]
    if not _KERNEL.fullmatch(kernel):
        raise Malformed(f"expected MODULE:NAME (examples.kernels.vector_add:add_kernel), got {kernel!r}", kernel_at)
    params = _parse_pairs(words[2:], token=True)
    for (name, value), (_, column) in zip(params, words[2:]):
        sizes = call_value(value)
        if sizes not in (None, "?") and not isinstance(sizes, int) and (
                not isinstance(sizes, Sizes) or len(sizes.shape) != len(sizes.strides)):
            raise Malformed(f"{name}: expected [SHAPE]:[STRIDES] ([4,8]:[8,1]), an int, None or ?, got {value!r}",
                            column + len(name) + 1)
    return Entry("call", kernel, "", params, ())


def _parse_pairs(words: list[tuple[str, int]], token: bool) -> Pairs:
    pairs: list[tuple[str, str]] = []
    for word, column in words:
        name, equals, value = word.partition("=")
        if not equals or not _NAME.fullmatch(name) or not value:
            raise Malformed(f"expected NAME=VALUE, got {word!r}", column)
        if not token and not keys.is_literal(value):
            raise Malformed(f"{name}: expected a literal (4, True, 'gelu', None), got {value!r}", column + len(name) + 1)
        if any(name == seen for seen, _ in pairs):
            raise Malformed(f"{name} is given twice", column)
        pairs.append((name, value))
    return tuple(pairs)


def read(path: Path) -> tuple[list[Entry], list[Diagnostic]]:
    """The entries of a manifest file, and a located error for each line that is not one."""
    from ttgen.vocabulary.diagnostics import Diagnostic

    entries: list[Entry] = []
    problems: list[Diagnostic] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return [], [Diagnostic(str(path), 0, 0, "error", f"cannot read: {exc.strerror}", "manifest")]
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            entry = parse_line(line)
        except Malformed as exc:
            message, column = exc.args
            problems.append(Diagnostic(str(path), number, column, "error", message, "manifest", line))
            continue
        entries.append(Entry(entry.kind, entry.kernel, entry.target, entry.params, entry.settings, number))
    return entries, problems


def error(path: Path, entry: Entry, message: str) -> Diagnostic:
    """A located error for an entry that parsed but does not fit its kernel."""
    from ttgen.vocabulary.diagnostics import Diagnostic

    return Diagnostic(str(path), entry.line, 1, "error", message, "manifest", entry.text())


def add(path: Path, entries: Iterable[Entry]) -> None:
    """Merge ``entries`` into the manifest at ``path``: comment lines first, as they were, then
    every entry once, sorted.  Locked, so that processes recording at once lose nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8", newline="\n") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        file.seek(0)
        lines = file.read().splitlines()
        comments = [line for line in lines if line.lstrip().startswith("#")] or HEADER.splitlines()
        known = {line for line in lines if line.strip() and not line.lstrip().startswith("#")}
        merged = sorted(known | {entry.text() for entry in entries})
        file.seek(0)
        file.truncate()
        file.write("\n".join(comments + merged) + "\n")
