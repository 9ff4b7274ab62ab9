"""How a generated launcher module spells the names its code relies on (`Spelling`): the
build step picks it (ttgen.generate.emit.Names), and the kinds' texts (`kinds`) write with it.
Launchers never import it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Spelling:
    """How a generated module spells the names its code relies on: its module aliases, the
    builtins it uses (each its own name, or an alias where a kernel or a parameter takes the
    name) and its dtype aliases."""

    torch: str = "_torch"
    typing: str = "_typing"
    rt: str = "_rt"
    renamed: dict[str, str] = field(default_factory=dict)  # builtin or dtype alias -> its name here

    def builtin(self, name: str) -> str:
        return self.renamed.get(name, name)

    def dtype(self, dtype: str) -> str:
        alias = f"_{dtype}"
        return self.renamed.get(alias, alias)
