"""A small, correct training loop: jit once, static hyper-parameters, functional updates. Clean."""

from functools import partial

import jax
import jax.numpy as jnp


def loss(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2)


@partial(jax.jit, static_argnames=("lr",))
def train_step(params, x, y, lr=0.1):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


@jax.jit
def add_bias_at(x, i, value):
    return x.at[i].set(value)  # arrays are immutable: `.at[...]` returns an updated copy


def main():
    key = jax.random.key(42)
    x_key, w_key = jax.random.split(key)
    x = jax.random.normal(x_key, (32, 3))
    y = x @ jnp.array([1.0, -2.0, 0.5]) + 0.3
    params = {"w": jax.random.normal(w_key, (3,)), "b": jnp.zeros(())}
    for _ in range(100):
        params = train_step(params, x, y)
    print(loss(params, x, y), add_bias_at(jnp.zeros(3), 1, 2.0))


if __name__ == "__main__":
    main()
