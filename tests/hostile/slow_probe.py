"""A function that never returns when probed; its sibling must still be decided by main()."""
import jax
import jax.numpy as jnp


def wait_until_small(x):
    while jnp.abs(x).sum() >= 0:  # expect: JAX101 inconclusive did not return within
        x = x * 0.5
    return x


@jax.jit
def step(x):
    print("tracing step")  # expect: JAX404 confirmed
    return x + 1


def main():
    for _ in range(3):
        step(jnp.ones(2))


if __name__ == "__main__":
    main()
