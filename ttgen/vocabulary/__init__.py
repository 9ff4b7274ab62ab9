"""What every world of ttgen speaks, importing none of them (nor torch, Triton or libcst at import):

* `model`: the kernel model, as frozen values (the build's and the codemods', never a launcher's);
* `param_types`: a parameter's annotated type (the model's, and a launcher's specs');
* `kinds`: one table of parameter kinds and every rule of each (the build and the runtime both apply it);
* `spelling`: how a generated module spells the names its code uses (the build's);
* `options`: the launch options and Triton's defaults;
* `fingerprint`: a kernel signature's hash, computed alike at build time and at import;
* `diagnostics`: problems, printed as mypy prints them;
* `manifest` and `keys`: recorded launches, one line each, in Triton's specialization words;
* `atomic`: writing a file whole or not at all (the build's, its cache's, the codemods' and bundles');
* `on_import`: patching a module as Python imports it (`ttgen.annotations`' and ``ttgen record``'s).
"""
