"""A tiny MLP trained with plain JAX: pytree dataclasses for parameters, batches and state."""
