from typing import NamedTuple

import jax


class Transition(NamedTuple):
    reward: jax.Array
    done: jax.Array
