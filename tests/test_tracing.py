"""Tracing rules (JAX1xx) beyond their own examples: positive and negative cases, one module each.

Each case marks the lines that must be reported inline (`# JAX1nn`); every other line of
the case must stay quiet for every JAX1xx rule.
"""

from __future__ import annotations

import textwrap
from typing import Optional

import pytest

from jaxlint.linter import lint_source
from jaxlint.rules import all_rules
from marks import family_marks

TRACING = {code for code in all_rules() if code.startswith("JAX1")}
marked = family_marks(r"JAX1\d\d")

SAMPLED = """
    import functools
    import jax

    @functools.partial(jax.jit, static_argnames=("dist", "buffer"))
    def act(dist, buffer, key):
        actions = dist.sample(seed=key)
        clipped = min(max(actions, -1.0), 1.0)  # JAX113
        batch = buffer.sample(4)
        return clipped, max(batch, 0.0)
    """

HANDED_LOSS = """
    import jax
    import jax.numpy as jnp
    from trainers import TRAINER

    @jax.jit
    def update(params, batch):
        def loss_fn(p):
            scale = jnp.exp(p * batch)
            return min(scale, 100.0)  # JAX113
        return TRAINER.apply_loss_fn(loss_fn=loss_fn, params=params)

    def describe(logger, batch):
        def summary(p):
            return min(jnp.exp(p * batch), 100.0)  # eager code hands it over: run on concrete values
        return logger.register(summary)
    """

# A loss differentiated in a scan body (staged), given a batch that code not seen samples: the
# batch is a tracer there. The same loss given a Python number outside `argnums` keeps it one.
GRAD_OF_SAMPLED = """
    import jax
    import jax.numpy as jnp
    from buffers import sample

    @jax.jit
    def train(params, buffer, limit):
        def loss_fn(p, batch, limit):
            reward = min(max(batch, -limit), limit)  # JAX113
            return (p * reward).sum()

        def epoch(params, _):
            batch = sample(buffer)
            return params - jax.grad(loss_fn)(params, batch, 1.0), None

        return jax.lax.scan(epoch, params, None, 2)[0]
    """

CASES = {
    # ---- an argument a differentiation leaves out of argnums is the caller's ------------------
    "a_grad_made_in_staged_code_given_what_code_not_seen_samples": GRAD_OF_SAMPLED,
    # ---- a function nested in a traced one, handed to code not seen, runs in the trace -------
    "a_loss_handed_to_a_method_not_seen": HANDED_LOSS,
    # ---- a draw from a traced key is traced, whatever object draws it --------------------------
    "a_sample_drawn_from_a_traced_key": SAMPLED,
    # ---- a pytree's element picked by a traced index is an array -----------------------------
    "carry_element_indexed_by_the_loop_index": """
        import jax

        def update(i, carry):
            bullets, total = carry
            j = 4 - i
            step = 1 if bullets[j, 2] else -1  # JAX101
            return bullets, total + step

        def run(bullets):
            return jax.lax.fori_loop(0, 5, update, (bullets, 0))
        """,
    # ---- tree_map's function gets leaves: a leaf of a traced tree is a traced array ----------
    "branch_on_a_leaf_in_a_jitted_tree_map": """
        import jax

        @jax.jit
        def masked_copy(new, old, mask):
            return jax.tree_util.tree_map(lambda a, b, m: a if m else b, new, old, mask)  # JAX101
        """,
    # `tree_multimap`, the spelling of a many-tree `tree_map` before JAX 0.3.16 (its CHANGELOG:
    # "jax.tree_util.tree_map is a direct replacement"), is that tree map.
    "branch_on_a_traced_closure_in_a_legacy_tree_multimap": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def clip(updates):
            g_norm = jnp.sqrt(sum(jnp.sum(x * x) for x in jax.tree_util.tree_leaves(updates)))
            trigger = g_norm < 1.0
            return jax.tree_multimap(lambda t: t if trigger else t / g_norm, updates)  # JAX101
        """,
    "branch_on_a_leafs_path_quiet": """
        import jax

        @jax.jit
        def decay(params):
            return jax.tree_util.tree_map_with_path(
                lambda path, p: p if path[-1].key == "bias" else 0.9 * p, params
            )
        """,
    # ---- fields of the module's own pytree classes ----------------------------------------------
    "array_field_of_an_annotated_pytree_parameter": """
        import dataclasses
        import jax
        import jax.numpy as jnp

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Board:
            cells: jax.Array
            turn: jax.Array
            size: int = dataclasses.field(default=3, metadata=dict(static=True))

        @jax.jit
        def play(board: Board, at):
            board = dataclasses.replace(board, cells=board.cells.at[at].set(1))
            mark = 1 if board.turn == 0 else -1  # JAX101
            if board.size > 2:
                mark = mark * 2
            return dataclasses.replace(board, turn=1 - board.turn), mark
        """,
    "number_field_of_a_dataclass_pytree_parameter": """
        import dataclasses
        from typing import Optional
        import jax
        from flax import struct

        @struct.dataclass
        class EnvState:
            row: int
            done: bool
            size: int = struct.field(pytree_node=False, default=3)
            best: Optional[int] = None
            name: str = "deep sea"

        @jax.jit
        def step(state: EnvState, x):
            if state.row > 0:  # JAX101
                x = x + 1
            x = -x if state.done else x  # JAX101
            if state.size > 2:  # a static field: a Python value
                x = x + 2
            if state.best:  # may be None: an empty pytree stays None
                x = x + 3
            if state.name:  # not a number: a string leaf cannot reach jit at all
                x = x + 4
            return x
        """,
    "number_or_none_field_where_the_code_shows_it_is_not_none": """
        from typing import Optional
        import jax
        import jax.numpy as jnp
        from flax import struct

        @struct.dataclass
        class TrainState:
            step: Optional[int] = 0
            mask: Optional[jax.Array] = None

        @jax.jit
        def update(state: TrainState, x):
            warmup = max(0.0, 1 - state.step / 100)  # JAX113
            if state.step:  # None is falsy: a bare test may be of None
                x = x + 1
            if state.mask is None:  # an identity test
                return x * warmup
            mask = state.mask
            if mask is not None:
                x = x + 2 if mask.any() else x  # JAX101
            return x
        """,
    "flax_train_state_fields": """
        from typing import Any

        import jax
        import numpy as np
        from flax.training import train_state
        from flax.training.train_state import TrainState as TS

        class TrainState(train_state.TrainState):
            batch_stats: Any = None

        @jax.jit
        def train_step(state: TrainState, batch):
            if state.step % 100 == 0:  # JAX101
                batch = batch * 2
            if state.batch_stats is None:  # None stays None
                batch = batch + 1
            out = state.apply_fn({"params": state.params}, batch)
            if state.tx is not None:  # a static field
                out = out + 1
            return out

        @jax.jit
        def eval_step(state: TS, batch):
            return batch * int(state.step)  # JAX105

        @jax.jit
        def predict(state: TS, batch):
            logits = state.apply_fn({"params": state.params}, batch)  # the model, applied
            probs = np.asarray(logits)  # JAX107
            out, updates = state.apply_fn({"params": state.params}, batch, mutable=["batch_stats"])
            if out.mean() > 0:  # JAX101
                out = -out
            return probs, out, updates
        """,
    "linen_module_applied_in_traced_code": """
        import flax.linen as nn
        import jax
        import numpy as np

        class MLP(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(3)(x)

        def make_train(config):
            network = MLP()

            @jax.jit
            def update(params, obs):
                logits = network.apply(params, obs)
                return np.asarray(logits)  # JAX107

            def evaluate(params, obs):  # eager: NumPy takes the concrete outputs
                return np.asarray(network.apply(params, obs))

            return update, evaluate

        def make_step(model: nn.Module, critic: MLP, other):
            @jax.jit
            def step(params, obs):
                actions = np.asarray(model.apply(params, obs))  # JAX107
                values = np.asarray(critic.apply(params, obs))  # JAX107
                unknown = np.asarray(other.apply(params, obs))  # not known to be a model
                return actions, values, unknown

            return step
        """,
    "differentiation_called_inside_jit_traces_abstractly": """
        import jax

        @jax.jit
        def step(x):
            def f(y):
                return y if y.sum() > 0 else -y  # JAX101
            out, pull = jax.vjp(f, x)
            return pull(out)[0]

        def eager(x):
            def g(y):  # called by `vjp` on concrete values: a Python branch works
                return y if y.sum() > 0 else -y
            out, pull = jax.vjp(g, x)
            tangent = jax.jvp(g, (x,), (x,))[1]
            return pull(out)[0] + tangent
        """,
    "number_fields_outside_dataclass_pytrees_quiet": """
        import dataclasses
        import equinox as eqx
        import jax

        class Config(eqx.Module):
            depth: int  # under filter_jit a Python number in a module is static

        @jax.tree_util.register_pytree_node_class
        @dataclasses.dataclass
        class Grid:
            rows: int  # its own tree_flatten decides what is a leaf
            def tree_flatten(self):
                return (), (self.rows,)
            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*aux)

        @eqx.filter_jit
        def run(config: Config, grid: Grid, x):
            if config.depth > 2:
                x = x + 1
            if grid.rows > 2:
                x = x + 1
            return x
        """,
    "fields_of_unknown_or_rebound_instances_quiet": """
        import dataclasses
        import jax
        import jax.numpy as jnp
        from somewhere import Config

        @dataclasses.dataclass
        class Board:
            cells: jax.Array
            turn: jax.Array

        @jax.jit
        def play(board: Board, config: Config, other):
            if config.turn == 0:  # a class of another module: its fields may be static
                return board
            board = other
            if board.turn == 0:  # no longer the annotated parameter
                return board
            return board
        """,
    "carry_item_picked_by_a_static_index_quiet": """
        import jax
        import replay

        def update(i, carry):
            pending = carry[0]  # an item of a carry of unknown structure: maybe a tuple
            if pending:
                return carry
            return carry

        def run():
            return jax.lax.fori_loop(0, 3, update, replay.initial_state())
        """,
    # ---- JAX113: builtin comparisons ----------------------------------------------------------
    "minmax_on_a_vmapped_pytree_leaf": """
        import jax
        import jax.numpy as jnp

        def update(x, limit):
            angle = jnp.arctan2(x[0], x[1])
            return min(max(angle, limit[0]), limit[1])  # JAX113

        def run(xs, limits):
            return jax.vmap(update)(xs, limits)
        """,
    "minmax_in_a_scan_body": """
        import jax
        import jax.numpy as jnp

        def cumulative_relu(xs):
            def body(carry, x):
                x = max(x, 0.0)  # JAX113
                return carry + x, x
            return jax.lax.scan(body, 0.0, xs)
        """,
    "minmax_on_static_values_quiet": """
        from functools import partial
        import jax
        import jax.numpy as jnp
        from jax.experimental import pallas as pl

        @partial(jax.jit, static_argnames=("block", "sizes"))
        def tile(x, block, sizes):
            n = x.shape[-1]
            size = min(max(pl.next_power_of_2(n), 128), 4096)
            steps = max(pl.cdiv(n, block), 1)
            biggest = max(sizes)
            ordered = sorted(sizes, reverse=True)
            ok = all(s > 0 for s in sizes) and any(d == 1 for d in x.shape)
            return x[:size] * steps * biggest * ordered[0] * ok
        """,
    "minmax_eager_and_concrete_quiet": """
        import jax
        import jax.numpy as jnp

        def report(losses):
            best = min(jnp.asarray(l) for l in losses)  # eager: concrete arrays compare
            return max(best, 0.0)

        def loss(w):
            return max(0.0, (w ** 2).sum())

        grad = jax.grad(loss)
        """,
    "sorted_and_any_over_traced_rows": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def rank(x):
            rows = sorted(x)  # JAX113
            flags = [r.sum() > 0 for r in x]
            return rows, any(flags)  # JAX113
        """,
    # ---- framework modules by their defining module's path ----------------------------------
    "flax_module_imported_from_its_defining_module": """
        import jax.numpy as jnp
        import numpy as np
        from flax.linen.module import Module, compact

        class Dropout(Module):
            rate: float

            @compact
            def __call__(self, inputs, deterministic: bool = False):
                if deterministic:
                    return inputs
                keep = jnp.ones(inputs.shape) > self.rate
                scaled = np.square(inputs)  # JAX107
                return scaled if keep else jnp.zeros_like(inputs)  # JAX101
        """,
    "truth_of_a_list_of_traced_values_quiet": """
        import jax
        import jax.numpy as jnp

        def combine(*masks):
            present = [m for m in masks if m is not None]
            if not present:
                return None
            return jnp.stack(present).all(axis=0)

        @jax.jit
        def attend(q, mask):
            return q * combine(mask, None)
        """,
    "numpy_table_indexed_by_a_tracer": """
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax import lax

        WEIGHTS = np.array([0.5, 0.25, 0.25])
        OFFSETS = np.arange(3)

        @jax.jit
        def weigh(i, x):
            return WEIGHTS[i] * x  # JAX107

        def total(xs):
            def body(k, acc):
                return acc + WEIGHTS[k] * xs[k]  # JAX107
            return lax.fori_loop(0, 3, body, 0.0)

        @jax.jit
        def fine(x):
            out = 0.0
            for k in range(3):
                out = out + WEIGHTS[k] * x  # a static loop counter
            return out + jnp.asarray(OFFSETS)[x.argmax()]

        def eager(i):
            return WEIGHTS[i]
        """,
    # ---- fields of a NamedTuple loop carry --------------------------------------------------
    "named_tuple_carry_fields_are_traced": """
        from typing import NamedTuple

        import jax
        import jax.numpy as jnp
        from jax import lax

        class State(NamedTuple):
            i: int
            total: float

        def search(x):
            def body(state):
                step = 2.0 if state.i == 1 else 1.0  # JAX101
                return state._replace(i=state.i + 1, total=state.total + step * x)

            state = State(i=0, total=0.0)
            state = state._replace(total=1.0)
            state = lax.while_loop(lambda s: s.i < 3, body, state)
            return state.total

        @jax.jit
        def accumulate(xs):
            def body(k, state):
                if state.total > 0:  # JAX101
                    return state
                return State(i=state.i, total=state.total + xs[k])
            return lax.fori_loop(0, 3, body, State(0, 0.0))

        def eager(x):
            state = State(i=1, total=x)
            if state.i == 1:  # a Python value outside any transformation
                return state._replace(i=2)
            return state

        @jax.jit
        def built_inside(x):
            state = State(i=1, total=x)
            return x * 2 if state.i == 1 else x  # a Python field of a NamedTuple built in traced code

        def other_carry(x):
            def body(carry):
                return carry
            return lax.while_loop(lambda c: c.ready, body, make(x))  # an unknown pytree: its fields may be static

        def make(x):
            return x
        """,
    "named_tuple_argument_fields_are_traced": """
        from __future__ import annotations

        import functools
        from typing import NamedTuple, Optional

        import jax

        class SegmentIds(NamedTuple):
            q: jax.Array
            kv: jax.Array

        @functools.partial(jax.jit, static_argnames=["causal"])
        def attend(logits, segment_ids: SegmentIds | None, causal: bool = False):
            mask = None
            if segment_ids is not None:
                mask = segment_ids.q[:, None] == segment_ids.kv[None, :]
            return logits if mask is None else logits + (0.0 if mask else -1e9)  # JAX101

        @jax.jit
        def first(ids: Optional[SegmentIds]):
            return 1 if ids.q[0] > 0 else 0  # JAX101

        @jax.jit
        def fine(ids: SegmentIds, n: int = 3, causal: SegmentIds = None):
            if ids is None or n > 2 or causal:  # a defaulted argument may stay a Python value
                return ids.q
            return ids.kv

        @jax.jit
        def unannotated(ids):
            return ids.q if ids.ready else ids.kv  # a pytree of unknown type: fields may be static
        """,
    "named_tuple_cond_operand_fields_are_traced": """
        from typing import NamedTuple

        import jax
        import jax.numpy as jnp
        import optax

        class PlateauState(NamedTuple):
            count: jax.Array
            cooldown: jax.Array

        def reduce_on_plateau(patience):
            def init(params):
                return PlateauState(jnp.asarray(0), jnp.asarray(0))

            def update(updates, state: PlateauState, params=None):
                def scale(state):
                    return state._replace(count=0) if state.cooldown > 0 else state  # JAX101

                new_state = state._replace(count=state.count + 1)
                new_state = jax.lax.cond(new_state.count == patience, scale, lambda s: s, new_state)
                return updates, new_state

            return optax.GradientTransformation(init, update)

        def quiet(updates, options: dict):
            def scale(options):
                return 1.0 if options else 0.0  # a branch operand of unknown type
            return jax.lax.cond(updates, scale, scale, options)
        """,
    "metadata_method_of_a_traced_container_quiet": """
        import jax
        import jax.numpy as jnp

        class Field:
            def __init__(self, value):
                self.value = value

            def ndim(self):
                return self.value.ndim

        jax.tree_util.register_pytree_node(Field, lambda f: ((f.value,), None), lambda _, c: Field(*c))

        @jax.jit
        def direction(u0):
            if u0.ndim() == 1:
                return u0
            return Field(-u0.value)
        """,
    "concreteness_probed_inside_try": """
        import contextlib
        import jax
        import numpy as np
        from jax.errors import ConcretizationTypeError

        @jax.jit
        def checked(x, n):
            try:
                if int(np.asarray(n)) <= 0:
                    raise ValueError("n must be positive")
            except TypeError:
                pass  # a tracer: checked at run time instead
            try:
                if x.sum() > 0:
                    x = -x
            except ConcretizationTypeError:
                pass
            with contextlib.suppress(TypeError):
                x = x * int(n)
            try:
                if x.mean() > 0:  # JAX101
                    x = x * 2
            except Exception:
                pass
            return x
        """,
    # A Python list or tuple takes a Python int as its index.
    "python_list_indexed_by_a_tracer": """
        import jax
        import jax.numpy as jnp

        TABLE = [1.0, 2.0, 3.0]
        PAIRS = ((0, 1), (1, 2))

        @jax.jit
        def lookup(i, x):
            total = x
            for k in range(len(TABLE)):
                total = total + TABLE[k] + PAIRS[k % 2][0]
            local = [x, 2 * x]
            return total + TABLE[i] + local[i] + jnp.asarray(TABLE)[i]  # JAX105
        """,
    # A scan's length sets the leading dimension of what it stacks: a Python int.
    "scan_length": """
        import functools
        import jax

        @jax.jit
        def run(n, x):
            return jax.lax.scan(lambda c, z: (c, z), x, (), length=n)  # JAX108

        @functools.partial(jax.jit, static_argnums=0)
        def run_static(n, x):
            return jax.lax.scan(lambda c, z: (c, c), x, None, length=n)

        @jax.jit
        def run_shape(xs):
            return jax.lax.scan(lambda c, z: (c + z, c), 0.0, xs, length=xs.shape[0])
        """,
    # What a transformation is given: a lambda bound to a name, a method through its class,
    # what a function of the module returns.
    "functions_handed_to_jit_by_name_class_or_factory": """
        import functools
        import jax
        import jax.numpy as jnp
        import numpy as np

        g = lambda i: np.zeros((3, 3))[i, :]  # JAX107
        jax.jit(g)(np.array([1, 2]))

        class Scale:
            @classmethod
            def from_factors(cls, factors):
                if bool(jnp.any(factors == 0)):  # JAX105
                    raise ValueError("scale factors must be non-zero")
                return jnp.diag(factors)

            @staticmethod
            def shape_of(x):
                if x.ndim == 1:
                    return x[None]
                return x

        jax.jit(Scale.from_factors)(jnp.ones(3))
        jax.jit(Scale.shape_of)(jnp.ones(3))

        def energy(conf, box, cutoff, runtime_validate=True):
            if runtime_validate and cutoff > 0:
                assert (jnp.diag(box) > 2 * cutoff).all()  # JAX104
            return jnp.sum(conf) * cutoff

        def to_reference(cutoff):
            return functools.partial(energy, cutoff=cutoff)

        jax.jit(to_reference(1.0))(jnp.ones(3), jnp.eye(3) * 5)

        def pair_energy(conf, cutoff):
            if (conf > cutoff).any():  # JAX101
                return jnp.sum(conf)
            return cutoff * 1.0

        class Nonbonded:
            def __init__(self, cutoff):
                self.cutoff = cutoff

            def to_reference(self):
                return functools.partial(pair_energy, cutoff=self.cutoff)

            def compiled(self):
                return jax.jit(self.to_reference())

        nonbonded = Nonbonded(1.2)
        reference = nonbonded.to_reference()
        jax.jit(reference)(jnp.ones(3))
        """,
    # A function of the module that hands its parameter to `jax.jit` transforms what it is passed.
    "wrapper_of_jit": """
        import jax
        import jax.numpy as jnp

        def compile_step(fn, donate=True):
            return jax.jit(fn, donate_argnums=0 if donate else ())

        def maybe_jit(fn, *args, **kwargs):
            return jax.jit(fn, *args, **kwargs)

        def update(x):
            if x.sum() > 0:  # JAX101
                return x * 2
            return x

        def repeat(n, x):
            if n > 1:
                return x * n
            return x

        step = compile_step(update)
        step(jnp.ones(3))
        maybe_jit(repeat, static_argnums=0)(3, jnp.ones(3))
        """,
    # A parameter defaulting to a module names it where the call leaves the default.
    "module_as_a_parameter_default": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        def to_ndc(o, xnp=np):
            return xnp.stack([o[..., 0] / o[..., 2], o[..., 1] / o[..., 2]], axis=-1)  # JAX107

        @jax.jit
        def step(o):
            return jnp.sum(to_ndc(o))

        def to_ndc_given(o, xnp=np):
            return xnp.stack([o[..., 0], o[..., 1]], axis=-1)

        @jax.jit
        def step_given(o):
            return jnp.sum(to_ndc_given(o, xnp=jnp))
        """,
    # A tracer is never an instance of another array library's class: that branch sees a host value.
    "isinstance_guard_for_another_array_library": """
        import jax
        import numpy as np
        from scipy.sparse import csr_matrix

        def row_sums(ops):
            if isinstance(ops, csr_matrix):
                return np.asarray(ops.sum(axis=-1))
            return np.asarray(ops.sum(axis=-1))  # JAX107

        def run(ops):
            return jax.lax.scan(lambda c, op: (c, row_sums(op)), 0, ops)
        """,
    # `isinstance(res, float)` is never true of a tracer: that arm sees a Python number.
    "isinstance_guard_in_a_conditional_expression": """
        import jax
        import numpy as np

        def c_idiv(a, b):
            res = a / b
            return int(res) if isinstance(res, float) else res.astype(np.int64)

        def c_round(a):
            return int(a) if a.ndim == 0 else a  # JAX105

        @jax.jit
        def face(pix, npface):
            return c_idiv(pix, npface) + c_round(pix)
        """,
    # `not train` is as static as `train` for a module flag; `not x` of an array is traced.
    "negated_module_flag": """
        import flax.linen as nn
        import jax

        class Block(nn.Module):
            @nn.compact
            def __call__(self, x, train):
                if not train:
                    return x
                return nn.Dropout(0.1, deterministic=False)(x)

        @jax.jit
        def clip(x):
            if not x.any():  # JAX101
                return x
            return -x
        """,
    # An argument annotated as a sequence stays a Python sequence of tracers: its truth is its length.
    "sequence_argument_truth": """
        from typing import Sequence

        import jax
        import jax.numpy as jnp

        @jax.jit
        def stack(arrays: Sequence[jax.Array], extra: tuple | list):
            if not arrays or not extra:
                raise ValueError("need arrays")
            if arrays[0].sum() > 0:  # JAX101
                arrays = [-a for a in arrays]
            return jnp.stack(arrays)
        """,
    # A JAX array compared with a string, bytes, `...` or a slice is a Python bool.
    "compared_with_what_no_array_compares_with": """
        import jax

        @jax.jit
        def f(x, y):
            if x == slice(None):
                y = y + 1
            if x == "same":
                y = y + 2
            if x != ...:
                y = y + 3
            if x == 1.5:  # JAX101
                y = y - 1
            return y
        """,
    # A probe whose handler leaves: what follows it runs only on concrete values.
    "code_after_a_probe_that_leaves": """
        import jax
        import numpy as np

        @jax.jit
        def checked(x, n):
            try:
                v = np.asarray(n)
            except TypeError:
                return x
            if np.any(v <= 0):
                raise ValueError("n must be positive")
            return x * 2

        @jax.jit
        def unchecked(x, n):
            try:
                v = np.asarray(n)  # JAX107
            except ValueError:
                return x
            if np.any(v <= 0):  # never runs traced: `np.asarray` raised a TypeError above
                raise ValueError("n must be positive")
            return x * 2
        """,
    "numpy_made_from_a_tracer_is_reported_once": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def bias(table, n):
            pos = np.arange(n)  # JAX107
            rel = pos[None, :] - pos[:, None]
            bucket = np.minimum(np.abs(rel), 7)
            return table[bucket]
        """,
    "pmap_static_broadcasted_arguments_quiet": """
        import jax
        import jax.numpy as jnp

        def batch(x, size, length):
            return jnp.stack([x + i for i in range(size)]) * length

        def traced_size(x, size):
            return jnp.stack([x + i for i in range(size)])  # JAX109

        out = jax.pmap(batch, static_broadcasted_argnums=(1, 2))(jnp.ones((1, 3)), 4, 2)
        bad = jax.pmap(traced_size)(jnp.ones((1, 3)), jnp.ones(1, int))
        """,
    # ---- Pallas: kernels, index maps and the bodies they stage ----------------------------------
    "pallas_kernel_branch_on_a_load": """
        from functools import partial
        import jax
        import jax.numpy as jnp
        from jax.experimental import pallas as pl

        def kernel(x_ref, o_ref, *, clip):
            x = x_ref[...]
            if clip and x_ref.shape[0] > 1:
                x = jnp.minimum(x, 1.0)
            o_ref[...] = x * 2 if x.sum() > 0 else x  # JAX101

        def double(x, clip=False):
            out = jax.ShapeDtypeStruct(x.shape, x.dtype)
            return pl.pallas_call(partial(kernel, clip=clip), out_shape=out)(x)
        """,
    "pallas_index_map_branch_on_a_grid_index": """
        import jax
        from jax.experimental import pallas as pl

        def copy_kernel(x_ref, o_ref):
            o_ref[...] = x_ref[...]

        def previous_block(i):
            return (i - 1 if i > 0 else 0,)  # JAX101

        def copy(x):
            return pl.pallas_call(
                copy_kernel,
                out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                grid=(2,),
                in_specs=[pl.BlockSpec((4,), previous_block)],
                out_specs=pl.BlockSpec((4,), lambda i: (i,)),
            )(x)
        """,
    "pallas_when_body_branch_on_a_load": """
        import jax.numpy as jnp
        from jax.experimental import pallas as pl

        def kernel(x_ref, o_ref):
            o_ref[...] = x_ref[...]

            @pl.when(pl.program_id(0) == 0)
            def _first_block():
                v = x_ref[...]
                o_ref[...] = jnp.zeros_like(v) if v[0] > 0 else v  # JAX101

        def run(x):
            return pl.pallas_call(kernel, out_shape=x, grid=(2,))(x)
        """,
    "pallas_kernel_chosen_by_a_variable": """
        from jax.experimental import pallas as pl

        def signed(x_ref, o_ref):
            o_ref[...] = x_ref[...] if x_ref[0] > 0 else -x_ref[...]  # JAX101

        def plain(x_ref, o_ref):
            o_ref[...] = x_ref[...]

        def run(x, use_sign):
            if use_sign:
                kernel = signed
            else:
                kernel = plain
            return pl.pallas_call(kernel, out_shape=x)(x)
        """,
    "pallas_references_and_descriptors_quiet": """
        from functools import partial
        import jax.numpy as jnp
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import tpu as pltpu

        def kernel(x_ref, o_ref, sem, *, block):
            if x_ref.shape[0] > block:
                o_ref[...] = x_ref[...]
            copy = pltpu.make_async_copy(x_ref, o_ref, sem)
            if copy:
                copy.start()

            def body(scratch):
                (acc_ref,) = scratch
                acc_ref[...] = x_ref[...]
                if scratch[0] is not None:
                    o_ref[...] = acc_ref[...]

            pl.run_scoped(body, (pltpu.VMEM((8,), jnp.float32),))

        def run(x):
            return pl.pallas_call(partial(kernel, block=8), out_shape=x)(x)
        """,
    # ---- results of calls the analysis knows without following them ------------------------
    "reduce_of_traced_masks": """
        import functools
        import operator
        import jax
        import jax.numpy as jnp

        @jax.jit
        def band(x, lo, hi):
            mask = functools.reduce(jnp.logical_and, [x > lo, x < hi])
            size = functools.reduce(operator.mul, x.shape, 1)
            if size > 1:
                x = x * 2
            return x if mask.all() else -x  # JAX101
        """,
    "modelled_library_norms_and_unvmapped_tests": """
        import equinox.internal as eqxi
        import jax
        import jax.numpy as jnp
        import optax

        @jax.jit
        def clip(updates, max_norm):
            norm = optax.global_norm(updates)
            scale = max_norm / norm if norm > max_norm else 1.0  # JAX101
            finite = 1.0 if eqxi.unvmap_any(jnp.isnan(norm)) else 0.0  # JAX101
            return jax.tree_util.tree_map(lambda u: u * scale * finite, updates)
        """,
    "modelled_library_counter_increment": """
        import jax
        from optax._src.numerics import safe_int32_increment

        @jax.jit
        def tick(count):
            count = safe_int32_increment(count)
            return 0 if count >= 100 else count  # JAX101
        """,
    "haiku_state_read_in_a_module": """
        import haiku as hk
        import jax.numpy as jnp

        class Warmup(hk.Module):
            def __init__(self, steps, name=None):
                super().__init__(name=name)
                self.steps = steps

            def __call__(self, x):
                count = hk.get_state("count", (), jnp.int32, init=jnp.zeros)
                hk.set_state("count", count + 1)
                if self.steps > 0:
                    return x * 0.5 if count < self.steps else x  # JAX101
                return x
        """,
    "numpy_table_where_it_is_read": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def weigh(i, x):
            table = np.array([0.5, 0.25, 0.25])
            w = table[i]  # JAX107
            table = jnp.asarray(table)
            return w * x + table[i]  # a JAX array by now
        """,
    "numpy_array_made_in_place_and_indexed": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def gather(x):
            r = np.arange(x.shape[0])[x]  # JAX107
            s = jnp.arange(x.shape[0])[x]
            t = np.arange(x.shape[0])[1]
            u = np.arange(x.shape[0])[x.shape[0] - 1]
            return r, s, t, u
        """,
    "the_call_of_an_instance_a_declared_field_or_a_late_attribute_holds": """
        import dataclasses

        import jax

        class Scale:
            def __call__(self, x):
                return x * 2.0

        @dataclasses.dataclass(frozen=True)
        class Net:
            scale: Scale

            def run(self, x):
                y = self.scale(x)
                return -y if y.sum() > 0 else y  # JAX101

        class Late:
            def __init__(self):
                self.scale = None

            def build(self):
                self.scale = Scale()

            def run(self, x):
                y = self.scale(x)
                return -y if y.sum() > 0 else y  # JAX101

        def main(x):
            late = Late()
            late.build()
            return jax.jit(Net(Scale()).run)(x), jax.jit(late.run)(x)
        """,
    "a_run_of_a_model_not_seen_given_flax_variables": """
        import functools

        import jax
        import jax.numpy as jnp
        import numpy as np

        def generate(rng, state, batch, generator, apply_fn):
            z = jax.random.normal(rng, (batch.shape[0], 8))
            variables = {"params": state.params}
            variables.update(state.extra)
            image = generator(train=False).apply(variables, (batch, z), mutable=False)
            image = np.asarray(image, jnp.float32)  # JAX107
            out, updates = generator(train=True).apply({"params": state.params}, z, mutable=["stats"])
            ok = np.asarray(updates is None)
            other = np.asarray(apply_fn(state.params, z))
            tree = np.asarray(generator().apply(state.params, z))
            return image, out, ok, other, tree

        p_generate = jax.pmap(functools.partial(generate, generator=None, apply_fn=None))

        def on_host(generator, params, batch):
            return np.asarray(generator().apply({"params": params}, batch))
        """,
    "a_list_holds_what_was_appended_to_it": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def stacked(xs, keep):
            losses = []
            for x in xs:
                losses.append(jnp.where(keep, x, 0.0))
            return np.stack(losses, axis=0)  # JAX107

        @jax.jit
        def extended(x):
            parts = [x]
            parts.extend([x * 2, x * 3])
            parts.insert(0, x - 1)
            return np.concatenate(parts)  # JAX107

        @jax.jit
        def sized(x):
            sizes = []
            for i in range(3):
                sizes.append(x.shape[0] * i)
            return jnp.zeros(np.array(sizes).sum())

        def eager(xs):
            values = []
            for x in xs:
                values.append(float(x))
            return np.stack(values)
        """,
    "a_carried_field_is_what_its_record_class_declares": """
        from typing import Generic, TypeVar
        import chex
        from chex import dataclass
        import jax
        import jax.numpy as jnp

        N = TypeVar("N")

        @dataclass(frozen=True)
        class Tree(Generic[N]):
            parents: chex.Array

            def child(self, index):
                return jnp.where(self.parents[index] > 0, 1.0, 0.0)

            def size(self):
                return self.parents.shape[0]

        @dataclass(frozen=True)
        class Node:
            q: float

        NodeTree = Tree[Node]

        @dataclass(frozen=True)
        class State:
            idx: int
            tree: NodeTree

        def backprop(tree, parent):
            def body(state: State):
                n = state.tree.child(state.idx)
                step = 2 if state.tree.size() > 4 else 1
                out = n if n > 0 else 0.0  # JAX101
                return State(idx=state.idx + step, tree=state.tree)

            return jax.lax.while_loop(lambda s: s.idx < 3, body, State(idx=parent, tree=tree))
        """,
    "a_key_popped_from_a_traced_dict_is_read_as_indexing_it": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def popped(batch, x):
            if batch.pop("mask"):  # JAX101
                x = x + 1
            return x

        @jax.jit
        def looked_up(batch, x):
            if batch.get("mask"):  # absent, it is None: no tracer
                x = x + 1
            return x

        @jax.jit
        def with_default(batch, x):
            mask = batch.get("mask", jnp.ones_like(x))  # the leaf, or the array given
            return (x if mask else 0.0) + 1  # JAX101

        @jax.jit
        def none_by_default(batch, x):
            if batch.get("mask", None):  # absent, None: no tracer
                x = x + 1
            return x
        """,
    "methods_of_instances_made_in_place_or_held_in_an_attribute": """
        import jax
        import jax.numpy as jnp

        class Critic:
            def score(self, x):
                return jnp.sum(x * x)

            def size(self, x):
                return x.shape[0]

        class Agent:
            def __init__(self, critic: Critic, policy):
                self.critic = critic
                self.policy = policy

            @jax.jit
            def act(self, x):
                if self.critic.score(x) > 1.0:  # JAX101
                    x = -x
                if Critic().score(x) > 2.0:  # JAX101
                    x = 2 * x
                if self.critic.size(x) > 3:
                    x = x[:3]
                if self.policy.score(x) > 1.0:
                    x = x + 1
                return x
        """,
}


def test_a_carried_field_is_what_its_record_class_declares_under_jax():
    """What the tracing family says of a `while_loop` carry built from a tree the caller passes:
    its field holds a tree of tracers, whose method's result is a tracer; its shape stays a
    Python int."""
    jax = pytest.importorskip("jax")
    pytest.importorskip("chex")
    import jax.numpy as jnp

    case: dict = {}
    exec(compile(textwrap.dedent(CASES["a_carried_field_is_what_its_record_class_declares"]), "<case>", "exec"), case)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        case["backprop"](case["Tree"](parents=jnp.ones(5)), 0)


def test_a_key_popped_from_a_traced_dict_under_jax():
    """What the tracing family says of `batch.pop("mask")` in jitted code: the leaf is a tracer;
    so is what `batch.get("mask", ones)` gives, the leaf or the default."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    case: dict = {}
    exec(compile(textwrap.dedent(CASES["a_key_popped_from_a_traced_dict_is_read_as_indexing_it"]), "<case>", "exec"), case)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        case["popped"]({"mask": jnp.bool_(True)}, 1.0)
    assert float(case["looked_up"]({}, 1.0)) == 1.0
    for batch in ({}, {"mask": jnp.bool_(True)}):  # the default is a tracer too
        with pytest.raises(jax.errors.TracerBoolConversionError):
            case["with_default"](batch, 1.0)
    assert float(case["none_by_default"]({}, 1.0)) == 1.0


def test_a_list_holds_what_was_appended_to_it_under_jax():
    """What the tracing family says of `losses.append(...)` then `np.stack(losses)` in traced
    code: the list holds tracers, and NumPy refuses them; a list of shapes stays Python ints."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    case: dict = {}
    exec(compile(textwrap.dedent(CASES["a_list_holds_what_was_appended_to_it"]), "<case>", "exec"), case)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        case["stacked"]([jnp.ones(2), jnp.ones(2)], True)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        case["extended"](jnp.ones(2))
    assert case["sized"](jnp.ones(2)).shape == (6,)
    assert case["eager"]([1.0, 2.0]).shape == (2,)


def test_a_probe_for_concreteness_inside_try_runs_its_handler_under_jax():
    """What the tracing family says of `try: int(x) except TypeError:`: under jit the tracer's
    error is a `TypeError`, so the handler runs and the function compiles."""
    jax = pytest.importorskip("jax")
    import numpy as np

    def checked(x, n):
        try:
            if int(np.asarray(n)) <= 0:
                raise ValueError("n must be positive")
        except TypeError:
            return x
        return x * 2

    assert float(jax.jit(checked)(1.0, 3)) == 1.0  # traced: the handler ran
    assert float(checked(1.0, 3)) == 2.0

    case: dict = {}  # the quiet function of the case that leaves its probe, as linted
    exec(compile(textwrap.dedent(CASES["code_after_a_probe_that_leaves"]), "<case>", "exec"), case)
    assert float(case["checked"](1.0, 3)) == 1.0  # jitted: the handler left, the check after it never ran
    assert float(case["checked"].__wrapped__(1.0, 3)) == 2.0
    with pytest.raises(jax.errors.TracerArrayConversionError):  # at the probe: what follows it never runs
        case["unchecked"](1.0, 3)
    for error in (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
                  jax.errors.TracerIntegerConversionError, jax.errors.TracerArrayConversionError):
        assert issubclass(error, TypeError)


def test_comparisons_and_type_tests_that_give_python_bools_under_jax():
    """What the tracing family says of `x == slice(None)` (strings, bytes and `...` likewise) and
    of `int(res) if isinstance(res, float) else ...` in traced code: both compile."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import numpy as np
    from typing import Sequence

    seen = []

    @jax.jit
    def f(x):
        for other in (slice(None), "same", b"same", ...):
            seen.append(type(x == other))
        res = x / 2
        return int(res) if isinstance(res, float) else res.astype(np.int32)

    assert f(jnp.ones(3)).dtype == jnp.int32
    assert seen == [bool] * 4

    def stack(arrays: Sequence[jax.Array]):  # as in the case `sequence_argument_truth`
        if not arrays:
            raise ValueError("need arrays")
        return jnp.stack(arrays)

    nn = pytest.importorskip("flax.linen")

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            if not train:
                return x
            return x * 2

    block = Block()
    assert float(jax.jit(lambda x: block.apply({}, x, False))(jnp.ones(()))) == 1.0  # `train` stays a bool

    assert jax.jit(stack)((jnp.ones(2), jnp.zeros(2))).shape == (2, 2)  # a tuple's truth: its length
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda x: 1 if x == 1.5 else 0)(1.5)  # noqa: JAX101


def test_a_run_of_a_model_given_flax_variables_is_traced_under_jax():
    """What JAX107 says of `generator(train=False).apply({"params": p}, x)` in a pmapped or jitted
    function, the generator a class the function is given: the run returns a tracer, which
    `np.asarray` refuses; eagerly it returns an array NumPy takes."""
    jax = pytest.importorskip("jax")
    nn = pytest.importorskip("flax.linen")
    import functools

    import jax.numpy as jnp
    import numpy as np

    class Generator(nn.Module):
        train: bool = True

        @nn.compact
        def __call__(self, z):
            return nn.Dense(2)(z)

    z = jnp.ones((1, 3))
    params = Generator().init(jax.random.key(0), z)["params"]

    def generate(params, z, generator):
        return np.asarray(generator(train=False).apply({"params": params}, z), np.float32)  # noqa: JAX107

    assert generate(params, z, Generator).shape == (1, 2)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.jit(functools.partial(generate, generator=Generator))(params, z)


def test_what_jit_is_given_by_name_class_or_factory_is_traced_under_jax():
    """What the discovery of traced functions rests on: a lambda bound to a name, a class method
    through its class and what a factory returns are traced by `jax.jit`, the arguments a
    `partial` fixes are Python values, and a Python test on a traced value fails."""
    jax = pytest.importorskip("jax")
    import functools

    import jax.numpy as jnp

    seen = []

    class Scale:
        @classmethod
        def from_factors(cls, factors):
            seen.append(type(factors).__name__)
            return bool(jnp.any(factors == 0))  # noqa: JAX105

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(Scale.from_factors)(jnp.ones(3))
    assert seen and "Tracer" in seen[0]

    def energy(conf, cutoff):
        seen.append(type(cutoff).__name__)
        return bool((conf > 2 * cutoff).all())

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit((lambda c: functools.partial(energy, cutoff=c))(1.0))(jnp.ones(3))
    assert seen[-1] == "float"  # the fixed argument stays a Python value
    g = lambda x: bool(x.sum() > 0)  # noqa: JAX105
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(g)(jnp.ones(3))


def test_a_loss_handed_to_a_method_not_seen_runs_in_the_trace_under_jax():
    """What JAX113 says of `min(jnp.exp(...), 100.0)` in a loss that a jitted step hands to a
    trainer's method: the trainer calls it under `jax.grad`, in the trace; handed over by eager
    code, it runs on concrete values."""
    jax = pytest.importorskip("jax")
    import sys
    import types

    class Trainer:
        def apply_loss_fn(self, loss_fn, params):
            return jax.grad(loss_fn)(params)

    class Logger:
        def register(self, fn):
            return fn(0.5)

    trainers = types.ModuleType("trainers")
    trainers.TRAINER = Trainer()
    sys.modules["trainers"] = trainers
    try:
        namespace: dict = {}
        exec(textwrap.dedent(HANDED_LOSS), namespace)
        with pytest.raises(jax.errors.TracerBoolConversionError):
            namespace["update"](1.0, 2.0)
        assert float(namespace["describe"](Logger(), 2.0)) > 1.0
    finally:
        del sys.modules["trainers"]


def test_a_grad_made_in_staged_code_given_what_code_not_seen_samples_under_jax():
    """What JAX113 says of `min(max(batch, -limit), limit)` in a loss a scan body differentiates:
    the batch code not seen samples there is a tracer, and `limit`, a Python float the grad does
    not differentiate, stays one (its comparison is not reported)."""
    jax = pytest.importorskip("jax")
    import sys
    import types

    buffers = types.ModuleType("buffers")
    buffers.sample = lambda buffer: buffer * 2.0
    sys.modules["buffers"] = buffers
    try:
        namespace: dict = {}
        exec(textwrap.dedent(GRAD_OF_SAMPLED), namespace)
        with pytest.raises(jax.errors.TracerBoolConversionError):
            namespace["train"](jax.numpy.ones(()), jax.numpy.ones(()), 1.0)
    finally:
        del sys.modules["buffers"]


def test_a_sample_drawn_from_a_traced_key_is_a_tracer_under_jax():
    """What JAX113 says of `max(dist.sample(seed=key), -1.0)`: the draw is traced; a sample a
    buffer takes of its own host data, given a count, is a Python value."""
    jax = pytest.importorskip("jax")

    class Normal:  # a distribution the jitted code is handed: its `sample` draws from the key
        def sample(self, seed):
            return jax.random.normal(seed, ())

    class Buffer:
        def sample(self, n):
            return float(n)

    namespace: dict = {}
    exec(textwrap.dedent(SAMPLED), namespace)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        namespace["act"](Normal(), Buffer(), jax.random.key(0))
    source = textwrap.dedent(SAMPLED).replace("min(max(actions, -1.0), 1.0)", "actions.clip(-1.0, 1.0)")
    exec(source, namespace)
    namespace["act"](Normal(), Buffer(), jax.random.key(0))


def test_a_python_list_indexed_by_a_tracer_fails_under_jax():
    """What JAX105 says of `TABLE[i]` with `i` traced; an array made of the table takes it."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    table = [1.0, 2.0, 3.0]
    with pytest.raises(jax.errors.TracerIntegerConversionError):
        jax.jit(lambda i: table[i])(1)  # noqa: JAX105
    with pytest.raises(jax.errors.TracerIntegerConversionError):
        jax.jit(lambda i, x: (x, 2 * x)[i])(1, jnp.ones(2))  # noqa: JAX105
    assert float(jax.jit(lambda i: jnp.asarray(table)[i])(1)) == 2.0


def test_a_traced_scan_length_fails_under_jax():
    """What JAX108 says of `lax.scan(..., length=n)` with `n` traced; a static one runs."""
    jax = pytest.importorskip("jax")
    import functools

    def run(n, x):
        return jax.lax.scan(lambda c, z: (c, c), x, None, length=n)  # noqa: JAX108

    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(run)(3, 1.0)
    assert jax.jit(functools.partial(run, 3))(1.0)[1].shape == (3,)


def test_what_a_wrapper_of_jit_is_passed_is_traced_under_jax():
    """What following wrappers rests on: `compile_step(update)` jits `update` (a Python `if` on
    its argument fails), and the keywords a wrapper forwards (`static_argnums`) reach the jit."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def compile_step(fn):
        return jax.jit(fn)

    def maybe_jit(fn, *args, **kwargs):
        return jax.jit(fn, *args, **kwargs)

    def update(x):
        return x * 2 if x.sum() > 0 else x  # noqa: JAX101

    def repeat(n, x):
        return x * n if n > 1 else x

    with pytest.raises(jax.errors.TracerBoolConversionError):
        compile_step(update)(jnp.ones(3))
    assert maybe_jit(repeat, static_argnums=0)(3, jnp.ones(3)).tolist() == [3.0] * 3


def test_a_module_default_is_the_module_under_jax():
    """What following a module default rests on: `xnp=np` left to its default is NumPy, which
    refuses a tracer; `xnp=jnp` passed by the caller traces."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import numpy as np

    def to_ndc(o, xnp=np):
        return xnp.stack([o[..., 0], o[..., 1]], axis=-1)

    o = jnp.ones((4, 3))
    assert jax.jit(lambda o: to_ndc(o, xnp=jnp))(o).shape == (4, 2)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.jit(lambda o: to_ndc(o))(o)


def test_a_tracer_is_no_instance_of_another_array_library():
    """What the branch reading rests on: a traced row is no SciPy sparse matrix, so the sparse
    branch is left to host values, and the other branch's `np.asarray` fails under `lax.scan`."""
    jax = pytest.importorskip("jax")
    sparse = pytest.importorskip("scipy.sparse")
    import numpy as np

    seen = []

    def row_sums(ops, convert):
        seen.append(isinstance(ops, sparse.csr_matrix))
        if isinstance(ops, sparse.csr_matrix) or convert:
            return np.asarray(ops.sum(axis=-1))  # noqa: JAX107
        return ops.sum(axis=-1)

    rows = jax.numpy.ones((2, 3, 3))
    jax.lax.scan(lambda c, op: (c, row_sums(op, False)), 0, rows)
    assert seen == [False]
    assert np.asarray(row_sums(sparse.csr_matrix(np.ones((3, 3))), False)).shape == (3, 1)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.lax.scan(lambda c, op: (c, row_sums(op, True)), 0, rows)


def test_pmap_static_broadcasted_arguments_are_python_values_under_jax():
    """`static_broadcasted_argnums` hands `pmap`'s function the Python value: `range(size)` works;
    without it the same argument is a tracer and `range` raises."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def batch(x, size):
        return jnp.stack([x + i for i in range(size)])

    x = jnp.ones((1, 3))
    assert jax.pmap(batch, static_broadcasted_argnums=(1,))(x, 4).shape == (1, 4, 3)
    with pytest.raises(TypeError):
        jax.pmap(batch)(x, jnp.ones(1, int))


def test_numpy_table_indexed_by_a_tracer_fails_under_jax():
    """What JAX107 says of `table[i]` with a NumPy table and a traced index."""
    jax = pytest.importorskip("jax")
    import numpy as np

    table = np.array([0.5, 0.25, 0.25])
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.jit(lambda i: table[i])(1)  # noqa: JAX107


def test_numpy_array_made_in_place_and_indexed_by_a_tracer_fails_under_jax():
    """What JAX107 says of `np.arange(n)[x]` with a traced `x`; a static index works."""
    jax = pytest.importorskip("jax")
    import numpy as np

    x = jax.numpy.array([0, 1, 2])
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.jit(lambda x: np.arange(x.shape[0])[x])(x)  # noqa: JAX107
    assert int(jax.jit(lambda x: np.arange(x.shape[0])[x.shape[0] - 1])(x)) == 2


def test_branching_on_a_carry_element_at_the_loop_index_fails_under_jax():
    """What JAX101 says of `bullets[j, 2]` with `j` computed from a `fori_loop` index."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def update(i, carry):
        bullets, total = carry
        step = 1 if bullets[4 - i, 2] else -1  # noqa: JAX101
        return bullets, total + step

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.lax.fori_loop(0, 5, update, (jnp.ones((5, 3)), 0))


def test_branching_on_a_tree_map_leaf_fails_under_jit_and_on_a_path_does_not():
    """What JAX101 says of a `tree_map` function that branches on a leaf of a traced tree."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    tree = {"w": jnp.ones(2), "bias": jnp.zeros(2)}
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda t, m: jax.tree_util.tree_map(lambda a, k: a if k else -a, t, m))(tree, {"w": True, "bias": False})  # noqa: JAX101
    by_path = jax.jit(lambda t: jax.tree_util.tree_map_with_path(lambda p, a: a if p[-1].key == "bias" else 0.9 * a, t))
    assert float(by_path(tree)["w"][0]) == pytest.approx(0.9)


def test_branching_on_an_array_field_of_a_pytree_argument_fails_under_jax():
    """What JAX101 says of `board.turn == 0` for a dataclass pytree argument of a jitted function;
    a static field of it is a Python value."""
    jax = pytest.importorskip("jax")
    import dataclasses
    import jax.numpy as jnp

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Board:
        turn: jax.Array
        size: int = dataclasses.field(default=3, metadata=dict(static=True))

    def by_size(board: Board):
        return board.turn * 2 if board.size > 2 else board.turn

    def by_turn(board: Board):
        return 1 if board.turn == 0 else -1  # noqa: JAX101

    assert int(jax.jit(by_size)(Board(jnp.int32(1)))) == 2
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(by_turn)(Board(jnp.int32(0)))


def test_branching_on_a_number_field_of_a_dataclass_pytree_fails_under_jax():
    """What JAX101 says of `state.row > 0` for a dataclass pytree argument whose field is
    annotated `int`: the leaf is traced as a scalar array; a static field stays a Python value."""
    jax = pytest.importorskip("jax")
    import dataclasses

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class EnvState:
        row: int
        size: int = dataclasses.field(default=3, metadata=dict(static=True))

    def by_size(state: EnvState, x):
        return x + 2 if state.size > 2 else x

    def by_row(state: EnvState, x):
        return x + 1 if state.row > 0 else x  # noqa: JAX101

    assert int(jax.jit(by_size)(EnvState(1), 1)) == 3
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(by_row)(EnvState(1), 1)


def test_arithmetic_on_a_number_or_none_field_fails_under_jax_where_it_holds_a_number():
    """What JAX113 says of `max(0.0, 1 - state.step / 100)` for a field declared `Optional[int]`:
    None stays None (a bare truth test of it is fine), a number is a traced leaf, and arithmetic
    on None would fail in Python anyway."""
    pytest.importorskip("flax")
    import jax
    from flax import struct

    @struct.dataclass
    class TrainState:
        step: Optional[int] = 0

    def warmup(state: TrainState, x):
        return x * max(0.0, 1 - state.step / 100)  # noqa: JAX113

    def maybe(state: TrainState, x):
        return x + 1 if state.step else x

    assert int(jax.jit(maybe)(TrainState(step=None), 1)) == 1
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(warmup)(TrainState(step=3), 1.0)


def test_a_train_states_step_is_traced_under_jit():
    """What JAX101 says of `state.step % 100 == 0` for Flax's `TrainState`: `step` is a leaf,
    traced under `jit`; `apply_fn` and `tx` are static fields, and what `apply_fn` returns is
    traced (JAX107 on `np.asarray` of it)."""
    pytest.importorskip("flax")
    optax = pytest.importorskip("optax")
    import jax
    import jax.numpy as jnp
    import numpy as np
    from flax.training import train_state

    state = train_state.TrainState.create(apply_fn=lambda p, x: x * p["w"], params={"w": jnp.ones(2)}, tx=optax.sgd(0.1))

    def apply(state: train_state.TrainState, x):
        out = state.apply_fn(state.params, x)
        return out + 1 if state.tx is not None else out

    def logged(state: train_state.TrainState, x):
        return x * 2 if state.step % 100 == 0 else x  # noqa: JAX101

    def on_host(state: train_state.TrainState, x):
        return np.asarray(state.apply_fn(state.params, x))  # noqa: JAX107

    assert jax.jit(apply)(state, jnp.ones(2)).shape == (2,)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(logged)(state, jnp.ones(2))
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.jit(on_host)(state, jnp.ones(2))


def test_a_linen_modules_outputs_are_traced_under_jit():
    """What JAX107 says of `np.asarray(network.apply(params, obs))` in a jitted function, where
    `network` is an instance of a Linen module class: the outputs are tracers; eagerly, arrays."""
    pytest.importorskip("flax")
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import numpy as np

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(3)(x)

    network = MLP()
    params = network.init(jax.random.key(0), jnp.ones(2))

    def outputs(params, obs):
        return np.asarray(network.apply(params, obs))  # noqa: JAX107

    assert outputs(params, jnp.ones(2)).shape == (3,)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.jit(outputs)(params, jnp.ones(2))


def test_a_differentiation_inside_jit_runs_its_function_on_abstract_tracers():
    """What JAX101 says of a branch in a function `jax.vjp` calls inside a jitted function: the
    primals are the jit's tracers; called eagerly, `vjp` runs it on concrete values."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def f(y):
        return y if y.sum() > 0 else -y  # noqa: JAX101

    def pulled(x):
        out, pull = jax.vjp(f, x)
        return pull(out)[0]

    assert pulled(jnp.ones(3)).shape == (3,)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(pulled)(jnp.ones(3))


def test_branching_on_a_named_tuple_carry_field_fails_under_jax():
    """What JAX101 says of `state.i == 1` in a loop body whose carry is a NamedTuple."""
    jax = pytest.importorskip("jax")
    from typing import NamedTuple

    class State(NamedTuple):
        i: int
        total: float

    def body(state):
        step = 2.0 if state.i == 1 else 1.0  # noqa: JAX101
        return state._replace(i=state.i + 1, total=state.total + step)

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.lax.while_loop(lambda s: s.i < 3, body, State(0, 0.0))


def test_branching_on_a_named_tuple_argument_field_fails_under_jax():
    """What JAX101 says of a field of a NamedTuple argument of a jitted function."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from typing import NamedTuple

    class Ids(NamedTuple):
        q: jax.Array

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda ids: 1 if ids.q[0] > 0 else 0)(Ids(jnp.arange(3)))  # noqa: JAX101


def test_branching_on_a_named_tuple_cond_operand_field_fails_under_jax():
    """What JAX101 says of a field of a NamedTuple a `lax.cond` branch receives."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from typing import NamedTuple

    class State(NamedTuple):
        cooldown: jax.Array

    def scale(state):
        return state._replace(cooldown=state.cooldown - 1) if state.cooldown > 0 else state  # noqa: JAX101

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.lax.cond(True, scale, lambda s: s, State(jnp.asarray(1)))


def _pallas_copy(kernel, **specs):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    x = jnp.ones(8)
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True, **specs)(x)


def test_branching_on_a_loaded_reference_fails_in_a_pallas_kernel():
    """What JAX101 says of `x_ref[...]` in a kernel: a load is a traced array."""
    jax = pytest.importorskip("jax")

    def kernel(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = x * 2 if x.sum() > 0 else x  # noqa: JAX101

    with pytest.raises(jax.errors.TracerBoolConversionError):
        _pallas_copy(kernel)


def test_writing_through_a_reference_works_in_a_pallas_kernel():
    """Why stores into a kernel's references are not reported: that is how it returns results."""
    pytest.importorskip("jax")

    def kernel(x_ref, o_ref):
        if x_ref.shape[0] > 1:
            o_ref[...] = x_ref[...] * 2

    assert float(_pallas_copy(kernel)[0]) == 2.0


def test_branching_on_a_grid_index_fails_in_an_index_map():
    """What JAX101 says of a Python `if` on a grid index inside a BlockSpec's index map."""
    jax = pytest.importorskip("jax")
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    with pytest.raises(jax.errors.TracerBoolConversionError):
        _pallas_copy(
            kernel,
            grid=(2,),
            in_specs=[pl.BlockSpec((4,), lambda i: (i - 1 if i > 0 else 0,))],  # noqa: JAX101
            out_specs=pl.BlockSpec((4,), lambda i: (i,)),
        )


def test_branching_on_a_load_fails_in_a_pl_when_body():
    """What JAX101 says of a branch inside `@pl.when`: the body is staged where it is defined."""
    jax = pytest.importorskip("jax")
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

        @pl.when(pl.program_id(0) == 0)
        def _():
            v = x_ref[...]
            o_ref[...] = v * 0 if v[0] > 0 else v  # noqa: JAX101

    with pytest.raises(jax.errors.TracerBoolConversionError):
        _pallas_copy(kernel, grid=(1,))


def test_reducing_traced_masks_gives_a_tracer():
    """What JAX101 says of `functools.reduce(jnp.logical_and, masks)` under jit."""
    jax = pytest.importorskip("jax")
    import functools
    import jax.numpy as jnp

    def band(x):
        mask = functools.reduce(jnp.logical_and, [x > 0, x < 2])
        return x if mask.all() else -x  # noqa: JAX101

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(band)(jnp.ones(3))


@pytest.mark.parametrize("name", sorted(CASES))
def test_tracing_case(name):
    source = textwrap.dedent(CASES[name])
    found = {(f.start.row, f.code) for f in lint_source(source, f"{name}.py", TRACING)}
    assert found == marked(source)


def test_builtin_comparison_through_the_cli(cli, make_files):
    make_files({
        "norm.py": """
            import jax
            import jax.numpy as jnp

            @jax.jit
            def normalize(x):
                var = jnp.var(x)
                return x / jnp.sqrt(max(0.0, var) + 1e-5)
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX113", "norm.py")
    assert out.code == 1
    (finding,) = out.json
    assert (finding["code"], finding["name"]) == ("JAX113", "builtin-comparison-on-tracer")
    assert finding["location"] == {"row": 8, "column": 25}


def test_named_tuple_carry_through_the_cli(cli, make_files):
    make_files({
        "search.py": """
            from typing import NamedTuple

            from jax import lax

            class State(NamedTuple):
                i: int
                a: float

            def search(start):
                def body(state):
                    a = start if state.i == 1 else state.a * 2.0
                    return state._replace(i=state.i + 1, a=a)
                return lax.while_loop(lambda s: s.i < 5, body, State(0, 1.0))
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX101", "search.py")
    assert out.code == 1
    (finding,) = out.json
    assert (finding["code"], finding["name"]) == ("JAX101", "traced-if")
    assert finding["location"] == {"row": 12, "column": 22}


def test_pallas_kernel_through_the_cli(cli, make_files):
    make_files({
        "kernels.py": """
            import jax
            import jax.numpy as jnp
            from jax.experimental import pallas as pl
            from jax.experimental.pallas import tpu as pltpu

            def kernel(x_ref, o_ref):
                x = x_ref[...]
                o_ref[...] = x
                o_ref[0] = x[0] * 2 if x[0] > 0 else x[0]

            def scoped_kernel(x_ref, o_ref):
                def body(buffers):
                    first, second = buffers
                    slot = first.at[pl.program_id(0)]
                    slot[...] = x_ref[...]
                    o_ref[...] = second[...]
                pl.run_scoped(body, [pltpu.VMEM((8,), jnp.float32), pltpu.VMEM((8,), jnp.float32)])

            def double(x):
                out = jax.ShapeDtypeStruct(x.shape, x.dtype)
                return pl.pallas_call(kernel, out_shape=out)(x), pl.pallas_call(scoped_kernel, out_shape=out)(x)
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "ALL", "kernels.py")
    assert out.code == 1
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX101", 10)]


def test_equinox_sources_linted_as_a_package(cli, make_files):
    """Inside Equinox's own package, `from .._module import Module` is `equinox.Module`."""
    make_files({
        "equinox/__init__.py": "",
        "equinox/_module.py": "class Module:\n    pass\n",
        "equinox/nn/__init__.py": "",
        "equinox/nn/_activations.py": """
            import jax.numpy as jnp

            from .._module import Module

            class LeakyReLU(Module):
                slope: float = 0.01

                def __call__(self, x):
                    return x if x >= 0 else self.slope * x
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX101", "equinox")
    assert out.code == 1
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX101", 10)]


def test_numpy_array_made_in_place_and_indexed_from_the_cli(cli, make_files):
    source = textwrap.dedent(CASES["numpy_array_made_in_place_and_indexed"])
    make_files({"gather.py": source})
    out = cli("check", "--output-format", "json", "--select", "JAX1", "--isolated", "--no-cache")
    assert {(f["location"]["row"], f["code"]) for f in out.json} == marked(source)


def test_jax_traces_the_counter_increment_to_an_array():
    jax = pytest.importorskip("jax")
    pytest.importorskip("optax")
    namespace: dict = {}
    exec(textwrap.dedent(CASES["modelled_library_counter_increment"]), namespace)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        namespace["tick"](jax.numpy.int32(3))


def test_numpy_raises_where_it_is_made_from_a_tracer():
    """What reporting `np.arange(n)` alone rests on: NumPy raises there, so the NumPy arrays made
    from its result never meet a tracer."""
    jax = pytest.importorskip("jax")
    case: dict = {}
    exec(compile(textwrap.dedent(CASES["numpy_made_from_a_tracer_is_reported_once"]), "<case>", "exec"), case)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        case["bias"](jax.numpy.ones(8), 3)
    assert case["bias"].__wrapped__(jax.numpy.ones(8), 3).shape == (3, 3)


def test_the_legacy_tree_multimap_case_under_jax():
    """What JAX101 says of a branch on a traced closure in `jax.tree_multimap`'s function: JAX
    0.3.16 removed the name, its CHANGELOG naming `jax.tree_util.tree_map` the direct
    replacement; run with that, the branch raises."""
    jax = pytest.importorskip("jax")
    source = textwrap.dedent(CASES["branch_on_a_traced_closure_in_a_legacy_tree_multimap"])
    namespace: dict = {}
    exec(source.replace("jax.tree_multimap", "jax.tree_util.tree_map"), namespace)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        namespace["clip"]({"w": jax.numpy.ones(3)})
