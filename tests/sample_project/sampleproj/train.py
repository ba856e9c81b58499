"""Training: loss, a jitted step and the loop."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from sampleproj import model, optim
from sampleproj.data import NoiseSource, batches
from sampleproj.model import Batch, Config, Params


def loss_fn(params: Params, batch: Batch) -> jax.Array:
    return jnp.mean((model.apply(params, batch.x) - batch.y) ** 2)


@functools.partial(jax.jit, static_argnames=("cfg",))
def train_step(params: Params, batch: Batch, cfg: Config):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    print("loss", loss)
    return optim.sgd(params, grads, cfg.lr), loss


@functools.partial(jax.jit, static_argnames=("cfg",))
def clipped_step(params: Params, batch: Batch, cfg: Config):
    grads = jax.grad(loss_fn)(params, batch)
    return optim.sgd(params, optim.clip_grads(grads, cfg.clip), cfg.lr)


def evaluate(params: Params, batch: Batch) -> jax.Array:
    return jax.jit(lambda p, b: loss_fn(p, b))(params, batch)


TRACKER = optim.Tracker()


@jax.jit
def tracked_loss(params: Params, batch: Batch):
    loss = loss_fn(params, batch)
    TRACKER.record(loss)
    return loss


def train(key, data: Batch, cfg: Config, steps: int, batch_size: int):
    init_key, noise_key = jax.random.split(key)
    params = model.init(init_key, cfg)
    losses = []
    for _ in range(steps):
        for batch in batches(data, batch_size):
            batch = Batch(batch.x + 0.01 * jax.random.normal(noise_key, batch.x.shape), batch.y)
            params, loss = train_step(params, batch, cfg)
            losses.append(loss)
    return params, jnp.stack(losses)


def noisy_batches(key, data: Batch, batch_size: int, rate: float):
    """Augmented batches: shared noise from one source, then dropout."""
    source = NoiseSource(key)
    for batch in batches(data, batch_size):
        yield Batch(batch.x + 0.01 * source.draw(batch.x.shape), batch.y)
