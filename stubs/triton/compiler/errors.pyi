import ast

from ..errors import TritonError

class CompilationError(TritonError):
    source_line_count_max_in_message: int
    src: str | None
    node: ast.AST
    error_message: str | None
    def __init__(self, src: str | None, node: ast.AST, error_message: str | None = None) -> None: ...
