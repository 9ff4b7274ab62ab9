"""Adopting ttgen in an existing library: three commands that edit a user's source.

* ``record`` (``ttgen record``): run a workload; its kernel launches go into a manifest.
* ``observed`` and ``infer``: what a manifest says each parameter received, and the one
  annotation (if any) that keeps Triton's specialization of all of it.
* ``annotate`` (``ttgen annotate``): write those annotations into kernel modules (libcst).
* ``migrate`` (``ttgen migrate``): rewrite ``kernel[grid](...)`` call sites into launcher
  ``run()`` calls where the rewrite is provably the same call (libcst).
* ``runner``: the codemods' files in, a diff or the written files and one line per note out.
"""
