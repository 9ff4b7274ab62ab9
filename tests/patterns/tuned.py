"""Autotune configs that are not a literal list."""

import json
import os

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401

from .configs_helpers import block_configs, warps_configs

CONFIGS = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 4096})]


def keep(config):
    return config.kwargs["BLOCK"] <= 1024


def looped_configs():
    configs = []
    for block in [32, 64]:
        for warps in [2, 4]:
            configs.append(triton.Config({"BLOCK": block}, num_warps=warps))
    return configs


def own_config(block, n_warps=4):
    return triton.Config({"BLOCK": block}, num_warps=n_warps, num_stages=stages(2))


def stages(n):
    return n + 1


def configs_from_file(path):
    with open(path) as handle:
        return [triton.Config(**entry) for entry in json.load(handle)]


@triton.autotune(configs=warps_configs(), key=["n"])
@triton.jit
def warps_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


@triton.autotune(configs=block_configs(), key=["n"])
@triton.jit
def helper_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


@triton.autotune(configs=looped_configs(), key=["n"])
@triton.jit
def looped_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


@triton.autotune(configs=list(filter(keep, CONFIGS)), key=["n"])
@triton.jit
def filtered_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


@triton.autotune(configs=[own_config(32, n_warps=2), own_config(64)], key=["n"])
@triton.jit
def own_helper_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


@triton.autotune(configs=configs_from_file(os.path.join(os.path.dirname(__file__), "configs.json")), key=["n"])
@triton.jit
def file_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


def widen(configs, named_args, **kwargs):
    """Configs of the kernel's parameters built from the ones written (FlagGems' Ascend outer).
    Triton passes the arguments given by position in ``named_args``, the others in ``kwargs``."""
    n = {**named_args, **kwargs}["n"]
    return [triton.Config({"BLOCK": c.kwargs["SIZE"], "EVEN": n % c.kwargs["SIZE"] == 0}) for c in configs]


@triton.autotune(configs=[triton.Config({"SIZE": 4}), triton.Config({"SIZE": 8})], key=["n"],
                 prune_configs_by={"early_config_prune": widen})
@triton.jit
def pruned_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int],
                  EVEN: tl.constexpr[bool]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)
    else:
        tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 3, mask=offs < n)
