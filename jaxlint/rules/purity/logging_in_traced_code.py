"""JAX405: logging a traced value inside jit-compiled code."""

from __future__ import annotations

from jaxlint.rule import JaxDemo, Rule, register
from jaxlint.rules.purity import PURITY_LIMITATIONS, PURITY_LIMITS


@register
class LoggingInTracedCode(Rule):
    code = "JAX405"
    name = "logging-in-traced-code"
    summary = "Logging a traced value inside staged code happens once, at trace time"
    what = """
        Checks for `logging` and `absl.logging` calls, and experiment-tracker calls
        (`wandb.log`, `mlflow.log_metric`, `tf.summary.scalar`, ...), whose arguments show a
        traced value inside code staged by `jax.jit`, `jax.pmap` or a `lax` control-flow
        primitive. The record is written once, while JAX traces the function, and holds a tracer
        instead of the value.
        """
    decisions = """
        - Logging calls are module functions and logger methods such as `log.info(...)`.
        - Tracker calls are `wandb.log`, `mlflow.log_metric`, `tf.summary.scalar`, and a
          TensorBoard `SummaryWriter`'s `add_scalar`/`scalar`.
        """
    why = """
        The body of a staged function runs once, while JAX traces it. The log record is
        written on the first call only and holds a tracer instead of the value; later calls
        log nothing. Use `jax.debug.print` or `jax.debug.callback(lambda v: log.info(...), x)`
        to log runtime values on every call. Logging static information (shapes, settings)
        while tracing is fine and not reported.
        """
    bad = (
        """
        import logging

        import jax
        import jax.numpy as jnp
        from jax import lax

        log = logging.getLogger("rollout")

        @jax.jit
        def rollout(x0):
            def body(x, t):
                log.info("step %s state %s", t, x)  # JAX405
                return 0.9 * x + 0.1, x
            return lax.scan(body, x0, jnp.arange(5))
        """,
        """
        from absl import logging
        import jax

        @jax.jit
        def update(w, g):
            logging.info("grad %s", g)  # JAX405
            return w - g
        """,
        """
        import jax
        import jax.numpy as jnp
        import wandb
        from flax.metrics import tensorboard

        writer = tensorboard.SummaryWriter("/tmp/logs")

        @jax.jit
        def train_step(w, x, step):
            loss = jnp.mean((x @ w) ** 2)
            wandb.log({"loss": loss})  # JAX405
            writer.scalar("loss", loss, step)  # JAX405
            return w - 0.1 * jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)
        """,
    )
    good = (
        """
        import logging

        import jax

        log = logging.getLogger(__name__)

        @jax.jit
        def update(w, g):
            log.info("compiling update for %s", w.shape)
            jax.debug.callback(lambda v: log.info("grad %s", v), g)
            return w - g
        """,
    )
    demo = JaxDemo(
        """
        import logging

        import jax
        import jax.numpy as jnp

        log = logging.getLogger("jaxlint_demo")

        class Count(logging.Handler):
            records = 0

            def emit(self, record):
                Count.records += 1

        @jax.jit
        def update(w, g):
            log.warning("grad %s", g)
            return w - g

        def demo():
            log.addHandler(Count())
            update(jnp.ones(2), jnp.ones(2))
            first = Count.records
            update(jnp.ones(2), jnp.ones(2))
            return first, Count.records
        """,
        "trace-time-only",
    )

    limitations = PURITY_LIMITATIONS
    limits = (
        "Only `logging` and `absl.logging` calls and the known experiment trackers (`wandb`,"
        " `mlflow`, `tf.summary`, TensorBoard) are recognised.",
    ) + PURITY_LIMITS

    def check(self, module, report):
        effects = module.effects
        for node in effects.staged_calls():
            if effects.is_logging_call(node) and (
                any(effects.shows_traced(arg) for arg in node.args)
                or any(effects.shows_traced(k.value) for k in node.keywords if k.arg != "exc_info")
            ):
                report(
                    node,
                    "Logging a traced value inside staged code happens once, while tracing, and records "
                    "a tracer; use `jax.debug.print` or `jax.debug.callback` to log on every call",
                )
