"""Config builders in another module of the package, as real libraries keep them."""

import triton


def warps_configs():
    return [triton.Config({}, num_warps=2**i) for i in range(3)]


def block_configs(block_name="BLOCK"):
    return [
        triton.Config({block_name: 64}, num_warps=2),
        triton.Config({block_name: 128}, num_warps=4),
    ]
