"""``tinytorch.random``: the default generator, seeding and RNG state (PyTorch's ``torch.random``),
and the sampling functions the package root exports. They are implemented in the tensor layer
(``tinytorch._tensor.random``), below the composites and the op schema that sample with them."""
from tinytorch._tensor.random import (  # noqa: F401
    Generator, bernoulli, default_generator, get_rng_state, initial_seed, manual_seed, normal, rand, rand_like,
    randint, randint_like, randn, randn_like, randperm, seed, set_rng_state,
)

__all__ = ["Generator", "bernoulli", "default_generator", "get_rng_state", "initial_seed", "manual_seed", "normal",
           "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm", "seed", "set_rng_state"]
