from .compiler import (
    ASTSource as ASTSource,
    CompiledKernel as CompiledKernel,
    IRSource as IRSource,
    LazyDict as LazyDict,
    compile as compile,
    get_cache_key as get_cache_key,
    make_backend as make_backend,
)
from .errors import CompilationError as CompilationError
