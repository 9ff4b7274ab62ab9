"""A small kernel library as a team has it before adopting ttgen: kernels without annotations,
and wrapper functions that launch them with kernel[grid](...), from the kernels' own module
(kernels.py) and from another (ops.py).  tests/codemods/test_adopt.py takes a copy of it
through ttgen record, annotate and migrate."""
