"""What LaunchState (fastpath.c) must see between two calls, however its owners change: every
way a Python program can change what a read of ``owner.name`` gives, each followed by a call
that must show it.  LaunchState keeps its last state while nothing it read can have changed
(on CPython 3.10-3.13), so each case is made after a call that kept it.

test_fastpath.py runs `check` on this interpreter's extension; a slow test there runs this file
under each other CPython it finds, on the extension built for it:
``python launch_state_cases.py PATH_OF_THE_BUILT_EXTENSION``.  Nothing here imports torch or ttgen.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

HOOKED = "hooked"
MEMOIZED = sys.version_info < (3, 13)  # where LaunchState keeps its last state (fastpath.c's STATE_MEMO)


class Chain:
    """A HookChain as Triton's: hooks are added to ``calls``."""

    def __init__(self) -> None:
        self.calls: list[object] = []


class Knobs:
    """A knobs object as Triton's: plain class attributes, set on the instance to change them."""

    debug = False
    enter = Chain()  # (a chain on the class, as Triton's launch hooks are)

    def __init__(self) -> None:
        self.exit, self.mode = Chain(), ""


class Devices:
    def __init__(self) -> None:
        self.device = 0

    def current_device(self) -> int:
        return self.device


SETTING = {"mode": "env"}


class FromEnvironment(Knobs):
    """A knob computed on every read (Triton's env_* descriptors)."""

    @property
    def mode(self) -> str:  # type: ignore[override]
        return SETTING["mode"]

    @mode.setter
    def mode(self, value: str) -> None:
        pass


def check(native: Any) -> None:
    """Every change below shows in the next call."""
    owner, devices = Knobs(), Devices()
    state = native.LaunchState(
        devices, ((owner, "enter"), (owner, "exit")), ((owner, "debug"), (owner, "mode")), HOOKED
    )

    def expect(*values: object) -> None:
        for _ in range(2):  # (the second call: from the memo where one is kept)
            assert state() == values, (state(), values)

    expect(0, False, "")
    assert (state() is state()) == MEMOIZED  # (kept: the same tuple)
    devices.device = 1
    expect(1, False, "")
    owner.debug = True  # an instance attribute over the class's
    expect(1, True, "")
    del owner.debug
    expect(1, False, "")
    Knobs.debug = True  # the class's
    expect(1, True, "")
    Knobs.debug = False
    owner.__dict__["mode"] = "fpsan"  # the dict itself
    expect(1, False, "fpsan")
    saved = dict(owner.__dict__)
    owner.__dict__.clear()  # (Triton's knobs' scope() clears and updates it)
    owner.__dict__.update(exit=saved["exit"], mode="")
    expect(1, False, "")
    owner.__dict__.update(saved)
    expect(1, False, "fpsan")
    owner.__dict__ = {"exit": owner.exit, "mode": "other"}  # another dict
    expect(1, False, "other")
    owner.exit.calls.append(print)  # a hook added to a chain
    expect(1, HOOKED)
    owner.exit.calls.clear()
    expect(1, False, "other")
    Knobs.enter.calls.append(print)  # to the class's chain
    expect(1, HOOKED)
    Knobs.enter.calls.clear()
    expect(1, False, "other")
    owner.exit.calls = [print]  # a chain's list replaced
    expect(1, HOOKED)
    owner.exit = Chain()  # a chain replaced
    expect(1, False, "other")
    owner.enter = print  # a hook assigned in place of a chain
    expect(1, HOOKED)
    del owner.enter
    expect(1, False, "other")
    owner.__class__ = FromEnvironment  # another class, whose knob is computed on each read
    expect(1, False, "env")
    assert state() is not state()
    SETTING["mode"] = "changed"
    expect(1, False, "changed")
    owner.__class__ = Knobs
    expect(1, False, "other")
    Knobs.mode = "class"  # (shadowed by the instance's)
    expect(1, False, "other")
    del owner.mode
    expect(1, False, "class")
    del Knobs.mode
    devices.device = 0
    owner.mode = ""
    expect(0, False, "")
    for i in range(100):  # (stores the interpreter specializes once they repeat)
        owner.mode = str(i)
        expect(0, False, str(i))
    for i in range(100):
        owner.exit.calls = [print] if i % 2 else []
        expect(*((0, HOOKED) if i % 2 else (0, False, "99")))


def extension(path: str) -> ModuleType:
    """The extension built at ``path``, loaded without ttgen's package (or torch)."""
    loader = importlib.machinery.ExtensionFileLoader("ttgen.runtime._native", path)
    spec = importlib.util.spec_from_file_location("ttgen.runtime._native", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


if __name__ == "__main__":
    check(extension(sys.argv[1]))
    print("ok")
