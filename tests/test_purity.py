"""Purity rules (JAX4xx) beyond their own examples: positive and negative cases, one module each.

Each case marks the lines that must be reported inline (`# JAX4nn`); every other line of
the case must stay quiet for every JAX4xx rule.
"""

from __future__ import annotations

import textwrap

import pytest

from jaxlint.linter import lint_source
from jaxlint.rules import all_rules
from marks import family_marks

PURITY = {code for code in all_rules() if code.startswith("JAX4")}
marked = family_marks(r"JAX4\d\d")

MASKED = """
    import jax
    import jax.numpy as jnp
    import numpy as np

    def rollout(env, actions):
        terminated = jnp.zeros(3, dtype=jnp.bool_)

        def step(carry, action):
            terminated, total = carry
            rewards, dones = env.step(action)
            rewards[terminated] = 0  # JAX401
            return (dones | terminated, total + rewards), None

        return jax.lax.scan(step, (terminated, jnp.zeros(3)), actions)

    @jax.jit
    def clipped(x, env):
        r = env.reward(x)
        r[x > 0] = 0  # JAX401
        n = env.counts(x)
        n[x.shape[0] > 2] = 0  # a Python bool: what `n` is decides
        return r

    def eager(x, env):
        r = env.reward(x)
        r[np.asarray(x) > 0] = 0  # a concrete mask, outside any trace
        return r
    """

STATIC_METHODS = """
    import jax
    import jax.numpy as jnp

    class Ops:
        @staticmethod
        def placement(grid, col):
            return jnp.roll(grid, col).sum(axis=0) > 0

        @staticmethod
        def cells(n):
            return [0] * n

    def action_mask(grid):
        mask = jax.vmap(Ops.placement, in_axes=(None, 0))(grid, jnp.arange(4))
        mask[-1:] = False  # JAX401
        first = Ops.placement(grid, 0)
        first[0] = True  # JAX401
        cells = Ops.cells(4)
        cells[0] = 1  # a list
        return mask, first, cells
    """

CASES = {
    # ---- what a static method of the module's class returns ---------------------------------
    "results_of_static_methods_of_a_class_of_the_module": STATIC_METHODS,
    # ---- a traced boolean mask: no object takes one in a store ------------------------------
    "stores_under_a_traced_boolean_mask": MASKED,
    "functions_jax_example_libraries_make": """
        import jax
        import jax.numpy as jnp
        from jax.example_libraries import optimizers, stax

        init_random_params, predict = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(2))
        opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)
        step_size, schedule = 0.1, optimizers.constant(0.1)

        def loss(params, batch):
            inputs, targets = batch
            return -jnp.mean(predict(params, inputs) * targets)

        @jax.jit
        def update(i, opt_state, batch):
            params = get_params(opt_state)
            print("params", params)  # JAX404
            print("logits", predict(params, batch[0]))  # JAX404
            print("step size", schedule(0))  # a Python number from a constant schedule
            return opt_update(i, jax.grad(loss)(params, batch), opt_state)

        @jax.jit
        def rebound(opt_state):
            get_state = get_params
            get_state = len
            print("leaves", get_state(opt_state))  # bound twice here: not known
            return opt_state
        """,
    "results_of_a_method_of_an_instance_an_attribute_holds": """
        import jax
        import jax.numpy as jnp

        class Ensemble:
            def propagate(self, x, key):
                return self._post(x, jax.random.normal(key, x.shape))

            def _post(self, x, noise):
                return x + noise

            def parts(self, x):
                return [x, x]

        class ModelEnv:
            def __init__(self, model: Ensemble, other, shuffle: bool = True):
                self._model = model
                self._other = other

            @jax.jit
            def step(self, x, key, idx):
                out = self._model.propagate(x, key)
                out[idx] = out  # JAX401
                return out

            @jax.jit
            def made_here(self, x, key, idx):
                out = Ensemble().propagate(x, key)
                out[idx] = 0.0  # JAX401
                return out

            @jax.jit
            def a_list(self, x):
                parts = self._model.parts(x)
                parts[0] = x * 2
                return parts

            @jax.jit
            def not_annotated(self, x, key, i):
                out = self._other.propagate(x, key)
                out[i] = 0.0
                return out
        """,
    "field_of_a_record_rebound_to_a_declared_instance": """
        from typing import Callable, Optional

        import flax
        import jax.numpy as jnp
        from jax import lax

        @flax.struct.dataclass
        class LoopState:
            i: jnp.ndarray
            confidences: jnp.ndarray

        def advance(state: LoopState) -> LoopState:
            return state.replace(i=state.i + 1)

        def to_host(state: LoopState):
            return state

        def run(x, callback: Optional[Callable[[LoopState], LoopState]] = None, other=None):
            def body(state: LoopState) -> LoopState:
                if callback is not None:
                    state = callback(state)
                confidences = state.confidences
                confidences[:, state.i] = 1.0  # JAX401
                return state.replace(i=state.i + 1, confidences=confidences)

            def body2(state: LoopState) -> LoopState:
                state = advance(state)
                confidences = state.confidences
                confidences[:, state.i] = 1.0  # JAX401
                return state

            def body3(state: LoopState) -> LoopState:
                state = other(state)
                state = to_host(state)
                confidences = state.confidences
                confidences[:, state.i] = 1.0  # rebound to values of unknown type
                return state

            def cond(state):
                return state.i < 3

            return lax.while_loop(cond, body, LoopState(jnp.int32(0), x))
        """,
    "items_of_a_list_of_jax_arrays": """
        import jax.numpy as jnp
        import numpy as np

        def excite(pos, mos, n, i, v, fetch):
            mos = [jnp.reshape(mo, (n, -1)) for mo in mos]
            alpha = mos[0][..., :n].copy()
            alpha[..., i] = v  # JAX401
            pair = (jnp.zeros(3), jnp.ones(3))
            first = pair[0]
            first[i] = v  # JAX401
            mos[1] = jnp.ones(3)  # a list item replaced: the list is Python's
            rest = mos[1:]
            rest[0] = v
            hosts = [np.zeros(3) for _ in range(2)]
            hosts[0][i] = v  # a NumPy array takes item assignment
            tables = {"a": jnp.zeros(3)}
            tables["a"] = v
            mixed = [jnp.zeros(3), [0.0, 1.0]]
            mixed[1][0] = v
            mos = fetch(pos)
            mos[0][i] = v  # rebound to what a call returned: not known
            return alpha, first, rest, hosts, tables, mixed, mos
        """,
    # Past `if isinstance(m, jax.Array): return ...`, `m` is no JAX array (a tracer is one).
    "store_after_the_jax_branch_has_left": """
        import jax

        def set_entry(m, i, value):
            if isinstance(m, jax.Array):
                return m.at[i].set(value)
            m[i] = value
            return m

        def set_other(m, i, value):
            if isinstance(m, jax.Array):
                value = value * 2
            m[i] = value  # JAX401
            return m.at[i].get()

        @jax.jit
        def step(m):
            return set_entry(m, 0, 1.0) + set_other(m, 1, 2.0)
        """,
    "copy_of_a_traced_dict_is_not_an_array": """
        import jax

        @jax.jit
        def shift(forcing, change):
            forcing = forcing.copy()  # a dict has `.copy` too: no sign of an array
            forcing["sst"] = forcing["sst"] + change
            return forcing

        @jax.jit
        def bump(x, i):
            y = x.reshape(-1)  # only arrays have `.reshape`
            y[i] = 1.0  # JAX401
            return y
        """,
    # ---- JAX401: in-place updates -----------------------------------------------------------
    "arrays_known_through_every_binding_step": """
        import jax.numpy as jnp

        def parenthesised(x):
            (x).at[0].set(1.0)  # JAX403
            y = x * 2
            y[0] = 3.0  # JAX401
            return y

        def rotated(n):
            a = jnp.zeros(3)
            b = a
            for _ in range(n):
                c = b
                b = a
                c[0] = 1.0  # JAX401
            return b

        def read_in_an_annotation(x):
            def inner(v: x) -> x:
                return v
            x = jnp.ones(2)
            x[1] = 0.0  # JAX401
            return inner

        def containers(n):
            table = {}
            rows = [0] * n
            table["a"] = 1
            rows[0] = table
            return rows
        """,
    "print_through_a_class_body_alias": """
        import jax

        class ns:
            p = print

        @jax.jit
        def shows(x):
            ns.p(x)  # JAX404
            return x
        """,
    "inplace_loop_eager": """
        import jax.numpy as jnp

        def one_hot_counts(labels, k):
            counts = jnp.zeros(k)
            for y in labels:
                counts[y] = counts[y] + 1  # JAX401
            return counts
        """,
    "inplace_what_reaches_the_store": """
        import jax.numpy as jnp
        import numpy as np

        def coords(points, ndim):
            if isinstance(points, tuple):
                parts = jnp.broadcast_arrays(*points)
                points = jnp.empty(parts[0].shape + (len(points),))
                for j, item in enumerate(parts):
                    points[..., j] = item  # JAX401
            else:
                points = np.asarray(points).copy()
                points[..., 0] = 0.0  # a NumPy copy on this path
            return points

        def rebound_later(n):
            x = jnp.zeros(n)
            x[0] = 1.0  # JAX401
            x = np.zeros(n)
            x[0] = 1.0  # NumPy from here on
            return x

        def either(flag, n):
            y = jnp.zeros(n) if flag else np.zeros(n)
            z = jnp.zeros(n)
            if flag:
                z = np.zeros(n)
            y[0] = 1.0  # perhaps NumPy
            z[0] = 1.0  # perhaps NumPy
            return y, z

        def converted(a, indices, dtype):
            a = jnp.asarray(a).astype(dtype)
            if not indices:
                a[indices] = 0.0  # JAX401
            return a
        """,
    "inplace_read_only_view_where_it_is_written": """
        import jax.numpy as jnp
        import numpy as np

        def to_host(x):
            host = np.asarray(jnp.tanh(x))
            host[0] = 0.0  # JAX401
            host = np.array(host)
            host[1] = 0.0  # a NumPy copy by now
            return host
        """,
    "inplace_items_of_jax_arrays": """
        import jax.numpy as jnp
        import numpy as np

        def orthonormal(a, xs):
            q, r = jnp.linalg.qr(a)
            q[:, 0] = 0.0  # JAX401
            first, *rest = jnp.split(a, 3)
            rest[0] = first  # a starred target is a list
            for row in jnp.zeros((3, 2)):
                row[0] = 1.0  # JAX401
            for i, row in enumerate(jnp.zeros((3, 2))):
                row[i] = 1.0  # JAX401
            for row in np.zeros((3, 2)):
                row[0] = 1.0  # rows of a NumPy array
            for i, (u, v) in enumerate(zip(xs, xs)):
                u[0] = 1  # unknown items
            lo, hi = np.split(np.arange(4), 2)
            lo[0] = 1  # NumPy
            return q
        """,
    "inplace_results_of_transformed_functions": """
        import jax
        import jax.numpy as jnp

        def dense(a, n):
            idx = jnp.arange(n)
            m = jax.vmap(lambda i: jnp.sum(a[i] * idx))(idx)
            m[0] += 1.0  # JAX401
            return m

        def _row(x):
            return jnp.tanh(x)

        def rows(xs):
            out = jax.jit(jax.vmap(_row))(xs)
            first = jax.vmap(_row)(xs)
            first[0] = 0.0  # JAX401
            return out, first

        def lists(xs):
            res = jax.vmap(lambda x: [x, x])(xs)
            res[0] = xs  # vmap gives back the function's list
            return res
        """,
    "inplace_shown_by_at_updates_across_lines": """
        import jax.numpy as jnp

        def continued(buffer, i):
            y = buffer \\
                .at[i].get()
            buffer[i] = y  # JAX401
            return buffer

        def commented(buffer, i):
            y = (buffer  # the buffer
                 .at[i].get())
            buffer[i] = y  # JAX401
            return buffer

        def unrelated(table, i):
            table = {}
            table[i] = 1.0  # a dict
            return table
        """,
    "inplace_shown_by_at_updates": """
        import jax.numpy as jnp
        import pandas as pd

        def buffer_set(buffer, item, x, pred=True):
            if pred is not True:
                x = jnp.where(pred, x, buffer.at[item].get())
            buffer[item] = x  # JAX401
            return buffer

        def apply_at(a, indices, fn):
            a[indices] = fn(a.at[indices].get())  # JAX401
            return a

        def rebound_parameter(a, i):
            if i > 0:
                a = a.at[i].set(0.0)
            a = list(a)
            a[0] = 1.0  # a list by now
            return a

        def frame(df: pd.DataFrame):
            df.at[0, "a"] = 1  # pandas: `.at` without an update method
            df["b"] = 2
            return df
        """,
    "inplace_at_a_traced_index": """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def augment(cost):
            def body(val):
                remaining, index, seen, count = val
                j = remaining[index]
                seen[j] = True  # JAX401
                return remaining, index + 1, seen, count - 1

            def cond(val):
                return val[3] > 0

            n = cost.shape[0]
            return lax.while_loop(cond, body, (jnp.arange(n), 0, jnp.zeros(n, bool), n))

        @jax.jit
        def relabel(params, xs):
            out = {}
            for k in params:
                out[k] = params[k] * 2  # keys of a dict are static
            slots = [None] * 3
            for j in range(3):
                slots[j] = xs  # a static loop index
            return out, slots

        def eager(x, i):
            items = [0, 1]
            items[i] = x  # eager: `i` is a Python integer
            return items
        """,
    "print_in_a_cond_branch": """
        import jax
        from jax import lax

        def _report(state):
            print("no step size found")  # JAX404
            jax.debug.callback(lambda: print("on the host"))
            return state

        def diagnose(failed, state):
            return lax.cond(failed, _report, lambda s: s, state)

        def cond_print(condition, message, **kwargs):
            lax.cond(condition, lambda _: print(message.format(**kwargs)), lambda _: None, None)  # JAX404

        def pick(i, x):
            return lax.switch(i, [lambda v: v, lambda v: (print("second"), v)[1]], x)  # JAX404

        def loop(x):
            def body(i, v):
                print("tracing the body")  # a loop body: the one print is the trace's
                return v
            return lax.fori_loop(0, 3, body, x)
        """,
    "unread_at_update_across_lines": """
        import jax.numpy as jnp

        def split(x, i):
            y = (x.  # JAX403
                 at[i].set(0.0))
            return x

        def returned(x):
            return x.at[0].set(1.0)
        """,
    "unread_at_update": """
        import jax
        import jax.numpy as jnp

        def forgot_return(x, i):
            x = x.at[i].set(0.0)  # JAX403
            return None

        def unused_copy(x):
            doubled = x.at[0].multiply(2)  # JAX403
            return x * 2

        def chained(x):
            x = x.at[0].set(1.0)
            x = x.at[1].set(2.0)
            return x

        def read_on_one_path(x, flag):
            y = x.at[0].set(1.0)
            if flag:
                return y
            return x

        def by_name(x):
            y = x.at[0].set(1.0)
            return locals()["y"]

        def test_update_runs():
            y = jnp.zeros(3).at[0].set(1.0)
        """,
    "unread_at_update_on_every_path": """
        import jax.numpy as jnp

        def overwritten_before_read(x):
            y = x.at[0].set(1.0)
            print(y)
            y = y.at[1].set(2.0)  # JAX403
            y = jnp.zeros(3)
            return y

        def loop_never_returned(x, idx):
            out = jnp.zeros(3)
            for i in idx:
                out = out.at[i].add(x)  # JAX403
            return x

        def loop_returned(x, idx):
            out = jnp.zeros(3)
            for i in idx:
                out = out.at[i].add(x)
            return out

        def read_later_by_a_closure(x):
            def get():
                return y

            y = x.at[0].set(1.0)
            return get

        def read_in_the_handler(x, risky):
            try:
                y = x.at[0].set(1.0)
                risky()
            except ValueError:
                return y
            return x

        def chained(x):
            a = b = x.at[0].set(1.0)
            return b

        def read_in_finally(x, log):
            try:
                y = x.at[0].set(1.0)
                return x
            finally:
                log(y)

        def read_after_the_loop_on_one_path(x, idx, flag):
            out = x
            for i in idx:
                out = out.at[i].set(0.0)
                if flag:
                    break
            else:
                return x
            return out
        """,
    "nnx_object_updated_in_staged_code": """
        import jax
        import optax
        from flax import nnx

        class Net(nnx.Module):
            def __init__(self, rngs):
                self.dense = nnx.Linear(2, 2, rngs=rngs)

        net = Net(nnx.Rngs(0))
        optimizer = nnx.Optimizer(net, optax.sgd(0.1), wrt=nnx.Param)
        history = []

        @jax.jit
        def step(x):
            net.dense.kernel.value = net.dense.kernel.value * 0.5  # JAX407
            return x

        @nnx.jit
        def nnx_step(net, optimizer, x):
            optimizer.update(net, nnx.grad(lambda m: m.dense(x).sum())(net))
            return x

        def epoch(xs):
            def body(carry, x):
                optimizer.update(net, nnx.grad(lambda m: m.dense(x).sum())(net))  # JAX407
                return carry, x

            return jax.lax.scan(body, 0, xs)
        """,
    "nnx_module_updating_itself_called_in_staged_code": """
        import jax
        import jax.numpy as jnp
        from flax import nnx

        class Count(nnx.Variable):
            pass

        class Counter(nnx.Module):
            def __init__(self):
                self.count = Count(jnp.array(0))

            def __call__(self):
                self.count.value += 1

            def read(self):
                return self.count.value

        class Scale(nnx.Module):
            def __init__(self):
                self.w = nnx.Param(jnp.ones(()))

            def __call__(self, x):
                return x * self.w.value

        counter = Counter()
        scale = Scale()

        @jax.jit
        def step(x):
            counter()  # JAX407
            return scale(x) + counter.read()

        @nnx.jit
        def nnx_step(counter, x):
            counter()
            return x

        def eager(x):
            counter()
            return x
        """,
    "nnx_module_inheriting_a_call_that_updates_it": """
        import jax
        import jax.numpy as jnp
        from flax import nnx

        class Count(nnx.Variable):
            pass

        class Counter(nnx.Module):
            def __init__(self):
                self.count = Count(jnp.array(0))

            def __call__(self):
                self.count.value += 1

        class Tally(Counter):
            def read(self):
                return self.count.value

        tally = Tally()

        @jax.jit
        def step(x):
            tally()  # JAX407
            return x + tally.read()
        """,
    "experiment_trackers_in_staged_code": """
        import jax
        import jax.numpy as jnp
        import mlflow
        import wandb
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter()

        @jax.jit
        def step(w, x):
            loss = jnp.mean((x @ w) ** 2)
            mlflow.log_metric("loss", loss)  # JAX405
            writer.add_scalar("loss", loss)  # JAX405
            wandb.log({"lr": 0.1, "width": x.shape[1]})  # static values, on purpose
            return loss

        def loop(w, xs):
            for i, x in enumerate(xs):
                loss = float(step(w, x))
                wandb.log({"loss": loss})
                writer.add_scalar("loss", loss, i)
        """,
    "inplace_after_converting_a_parameter": """
        import jax.numpy as jnp
        import numpy as np

        def swap_gates(weights, n):
            weights = jnp.asarray(weights)
            for i in range(n):
                weights[i] = 0.0  # JAX401
            return weights

        def before(weights):
            weights[0] = 1.0  # still the caller's value: a NumPy array, perhaps
            weights = jnp.asarray(weights)
            return weights

        def conditional(weights, flag):
            if flag:
                weights = jnp.asarray(weights)
            weights[0] = 1.0  # JAX401: a JAX array where `flag` holds (test_jax_on_some_paths runs it)

        def back_to_numpy(weights):
            weights = jnp.asarray(weights)
            weights = np.array(weights)
            weights[0] = 1.0
        """,
    "inplace_on_flax_results": """
        import flax.linen as nn

        class Net(nn.Module):
            @nn.compact
            def __call__(self, x, cache):
                x = nn.Dense(4)(x)
                x[:, 0] = 0.0  # JAX401
                h = nn.relu(x)
                h[h > 1] = 1.0  # JAX401
                state = Custom()(x)
                state[0] = h  # a module of this file may return a list
                cache["h"] = h  # a dict
                return h

        class Custom(nn.Module):
            def __call__(self, x):
                return [x]
        """,
    "inplace_on_a_where_result": """
        import jax.numpy as jnp

        def clamp_status(f_k, f_next, ngev, maxgrad):
            status = jnp.array(0)
            status = jnp.where(f_k - f_next < 1e-6, 4, status)
            status[ngev >= maxgrad] = 3  # JAX401
            return status

        def indices(mask):
            rows = jnp.where(mask)  # one argument: a tuple of index arrays
            rows = list(rows)
            rows[0] = rows[0] + 1
            return rows
        """,
    "array_like_parameter_is_not_known_a_jax_array": """
        from jax._src.typing import Array, ArrayLike

        def fill(x: ArrayLike, y: Array):
            x[0] = 1.0  # a NumPy array is array-like too
            y[0] = 1.0  # JAX401
        """,
    "inplace_on_a_helper_result": """
        import numpy as np
        import jax.numpy as jnp

        def init_state(n):
            return jnp.ones(n)

        def init_host(n):
            return np.ones(n)

        def maybe_state(n, host):
            if host:
                return np.ones(n)
            return jnp.ones(n)

        def count_up(n):
            for i in range(n):
                yield jnp.full(3, i)
            return jnp.zeros(3)

        def main():
            state = init_state(4)
            state[0] = 0.0  # JAX401
            host = init_host(4)
            host[0] = 0.0
            either = maybe_state(4, True)
            either[0] = 0.0
            gen = count_up(2)
            gen[0] = 0
            mean, var = jnp.zeros(3), jnp.ones(3)
            var[0] = 2.0  # JAX401
            a, b = np.zeros(3), jnp.ones(3)
            a[0] = 1.0
        """,
    "inplace_random_and_slices": """
        import jax
        import jax.numpy as jnp

        def noisy(key):
            x = jax.random.normal(key, (4, 4))
            x[:2] *= 0.5  # JAX401
            x[1:3, 0] -= 1.0  # JAX401
            y = x.reshape(16)
            y[0] = 0.0  # JAX401
            return x, y
        """,
    "inplace_module_global": """
        import jax.numpy as jnp

        TABLE = jnp.zeros(8)

        def mark(i):
            TABLE[i] = 1.0  # JAX401
        """,
    "inplace_traced_ellipsis": """
        import jax

        @jax.jit
        def clear_last(x):
            x[..., -1] = 0.0  # JAX401
            return x
        """,
    "inplace_traced_parameter_used_as_array": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def normalise(x, stats):
            x[0] = 0.0  # JAX401
            stats[0] = x.mean()  # a traced list or dict: not known to be an array
            return x / jnp.linalg.norm(x), stats
        """,
    "inplace_annotated_parameter": """
        import jax

        def reset(x: jax.Array, i: int):
            x[i] = 0.0  # JAX401
            return x
        """,
    "inplace_before_an_at_update": """
        import numpy as np
        import jax.numpy as jnp

        def shift(vel, i, v):
            vel[i] = v  # JAX401
            vel = vel.at[i + 1].set(v)
            return vel

        def on_one_path(vel, i, v, flag):
            vel[i] = v  # `.at` on one path only: `vel` may be a NumPy array
            if flag:
                vel = vel.at[i + 1].set(v)
            return vel

        def converted_between(vel, i, v):
            vel[i] = v  # rebound before its `.at`: another value
            vel = jnp.asarray(vel)
            return vel.at[i + 1].set(v)

        def host(i, v):
            vel = np.zeros(3)
            vel[i] = v  # known to be a NumPy array here
            return vel.at[i + 1].set(v)
        """,
    "inplace_parameter_passed_as_a_sequence_quiet": """
        import jax
        import jax.numpy as jnp
        from jax import lax

        @jax.jit
        def stacked(xs, ys):
            total = lax.stack(xs) + jnp.concatenate(ys)
            xs[0] = total[0]  # a traced list: `stack` takes one
            ys[0] = jnp.float32(ys)[0]
            return xs, ys

        @jax.jit
        def summed(xs):
            total = jnp.sum(xs)
            xs[0] = total  # JAX401
            return xs
        """,
    "inplace_numpy_quiet": """
        import numpy as np
        import jax.numpy as jnp

        def build(n):
            buf = np.zeros(n)
            for i in range(n):
                buf[i] = i
            out = jnp.asarray(buf)
            host = np.array(out)  # a copy: writable
            host[0] = 1.0
            return out, host
        """,
    "inplace_mixed_bindings_quiet": """
        import numpy as np
        import jax.numpy as jnp

        def f(flag):
            if flag:
                x = jnp.zeros(3)
            else:
                x = np.zeros(3)
            x[0] = 1.0  # may be NumPy: not known
            return x
        """,
    "inplace_dict_and_list_quiet": """
        import jax
        import jax.numpy as jnp

        def sgd(params, grads, lr=0.1):
            for k in params:
                params[k] -= lr * grads[k]
            layers = [jnp.ones(3), jnp.ones(3)]
            layers[0] = jnp.zeros(3)
            return params, layers

        @jax.jit
        def update(state, batch):
            state["step"] = state["step"] + 1
            state["hist"][0] = batch.mean()
            return state
        """,
    "inplace_parameter_unknown_quiet": """
        def fill(buffer, i, v):
            buffer[i] = v  # unknown type
            return buffer
        """,
    "inplace_attribute_mixed_quiet": """
        import numpy as np
        import jax.numpy as jnp

        class Buffer:
            def __init__(self, n):
                self.data = jnp.zeros(n)

            def to_host(self):
                self.data = np.asarray(self.data).copy()

            def put(self, i, v):
                self.data[i] = v  # NumPy after `to_host`: not known
        """,
    "inplace_pytest_raises_quiet": """
        import pytest
        import jax.numpy as jnp

        def test_immutable():
            x = jnp.zeros(3)
            with pytest.raises(TypeError):
                x[0] = 1.0
        """,
    # ---- JAX402 -------------------------------------------------------------------------------
    "at_assign_attribute": """
        import jax.numpy as jnp

        class Grid:
            def __init__(self):
                self.cells = jnp.zeros((4, 4))

            def set(self, i, j):
                self.cells.at[i, j] = 1.0  # JAX402
        """,
    "at_assign_pandas_quiet": """
        import pandas as pd

        def tag(frame, i):
            frame.at[i, "tag"] = "x"
            return frame
        """,
    # ---- JAX403 -------------------------------------------------------------------------------
    "discarded_updates": """
        import jax
        import jax.numpy as jnp
        import optax

        def step(params, grads, opt_state, x):
            optimizer = optax.adam(1e-3)
            optimizer.update(grads, opt_state, params)  # JAX403
            optax.apply_updates(params, grads)  # JAX403
            x.at[0].add(1.0)  # JAX403
            jnp.nan_to_num(x)  # JAX403
            return params
        """,
    "discarded_quiet": """
        import jax
        import jax.numpy as jnp

        def step(x, model, opt):
            x = x.at[0].add(1.0)
            jax.block_until_ready(x)
            x.block_until_ready()
            opt.update(model, x)  # not an Optax transformation: NNX optimisers update in place
            jax.debug.print("{}", x)
            return x

        def test_smoke():
            jnp.clip(jnp.ones(3), 0, 1)  # a test checks that this runs

        def check_fixed_value(name, value):
            try:
                jnp.asarray(value)  # checks that the value converts
            except Exception as exc:
                raise TypeError(f"invalid value for {name}") from exc

        def normalise(x):
            try:
                jnp.clip(x, 0, 1)  # JAX403
            except TypeError:
                pass  # a handler that goes on: the result was wanted
            return x
        """,
    # ---- JAX404 -------------------------------------------------------------------------------
    "print_variants": """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def helper(v):
            print("helper sees", v)  # JAX404
            return v * 2

        @jax.jit
        def f(x):
            print(f"x = {x}")  # JAX404
            print("mean: {}".format(x.mean()))  # JAX404
            print("sum: %s" % x.sum())  # JAX404
            y = helper(x)
            def body(i, acc):
                print(i)  # JAX404
                return acc + i
            return lax.fori_loop(0, 3, body, y)

        g = jax.jit(lambda x: print(x) or x)  # JAX404
        """,
    "print_quiet": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(x):
            print("tracing f for", x.shape, x.dtype, len(x))
            print(f"compiling with ndim={x.ndim}")
            return x

        @jax.vmap
        def g(x):
            print("vmap runs the body on every call with", x.shape)
            return x

        @jax.grad
        def h(x):
            print("a grad tracer shows its primal value", x)
            return x ** 2

        def eager(x):
            print("eager", x)
            return jnp.sum(x)
        """,
    "print_under_vmap": """
        import jax

        @jax.vmap
        def g(x):
            print("vmap runs the body on every call, but shows a tracer", x)  # JAX404
            return x
        """,
    # ---- JAX405 -------------------------------------------------------------------------------
    "logging_variants": """
        import logging

        import jax

        logger = logging.getLogger(__name__)

        @jax.jit
        def f(x):
            logging.info("x=%s", x)  # JAX405
            logger.debug(f"norm {jax.numpy.linalg.norm(x)}")  # JAX405
            logger.info("shape %s", x.shape)
            return x
        """,
    # ---- JAX406 -------------------------------------------------------------------------------
    "global_quiet_outside_jit": """
        import jax

        calls = 0

        def count():
            global calls
            calls += 1

        @jax.jit
        def f(x):
            return x + 1
        """,
    # ---- JAX407 -------------------------------------------------------------------------------
    "outer_state_variants": """
        import collections
        import jax
        import jax.numpy as jnp

        cache = {}
        history = collections.deque(maxlen=10)

        class Stats:
            pass

        stats = Stats()

        @jax.jit
        def f(x):
            y = jnp.sin(x)
            cache["last"] = y  # JAX407
            history.append(y)  # JAX407
            stats.last = y  # JAX407
            return y

        def make_step():
            losses = []

            @jax.jit
            def step(w):
                loss = jnp.sum(w ** 2)
                losses.append(loss)  # JAX407
                return w - 0.1 * w

            return step, losses
        """,
    "outer_state_scan_leak": """
        import jax
        import jax.numpy as jnp

        def rollout(xs):
            states = []

            def body(c, x):
                c = c + x
                states.append(c)  # JAX407
                return c, c

            jax.lax.scan(body, 0.0, xs)
            return states
        """,
    "outer_state_argument_of_the_enclosing_function": """
        import jax

        def make_incrementer(total, shapes):
            @jax.jit
            def increment(x):
                total[0] += x  # JAX407
                shapes.append(x.shape)  # what tracing learns, recorded by design
                return total[0]

            return increment
        """,
    "outer_state_quiet": """
        import jax
        import jax.numpy as jnp
        from jax.experimental import io_callback

        seen = []

        def on_host(x):
            seen.append(x)
            return x

        @jax.jit
        def f(x, refs):
            io_callback(on_host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
            local = {}
            local["x"] = x
            refs[0] = x  # JAX408 (an argument, not an outer object)
            return local["x"]

        def kernel(x_ref, o_ref):
            def body(i, c):
                o_ref[i] = x_ref[i] * 2  # a kernel's reference argument
                return c
            jax.lax.fori_loop(0, 4, body, 0)
        """,
    # ---- JAX408 -------------------------------------------------------------------------------
    "argument_mutation_quiet": """
        import jax
        from flax import nnx

        @jax.jit
        def step(state, x):
            state["x"] = x
            return state

        @nnx.jit
        def train(model, batch):
            model.steps.value += 1
            model.cache = batch
        """,
    # ---- JAX409 -------------------------------------------------------------------------------
    "host_read_quiet_outside": """
        import time

        import jax

        def timed(f, x):
            start = time.perf_counter()
            out = jax.jit(f)(x)
            return out, time.perf_counter() - start
        """,
    # ---- JAX410 -------------------------------------------------------------------------------
    "stale_global_bound_only_after_the_def": """
        import jax
        import jax.numpy as jnp
        from jax.tree_util import Partial

        def global_fun(y, z):
            def my_fun(x, y, z):
                return x * (y + z) * jnp.ones(3)
            fun = Partial(lambda x: my_fun(x, *args))  # JAX410
            return fun(3.0)

        global_fun_jit = jax.jit(global_fun)

        args = (2.0, 3.0)
        r1 = global_fun_jit(*args)
        args = (4.0, 5.0)
        r2 = global_fun_jit(*args)

        @jax.jit
        def scaled(x):
            return x * SCALE

        SCALE = 1.0
        SCALE = float(SCALE)  # nothing called in between: the first trace sees this one
        print(scaled(jnp.ones(2)))
        """,
    "stale_global_main_block": """
        import jax
        import jax.numpy as jnp

        LR = 0.1

        @jax.jit
        def update(w, g):
            return w - LR * g  # JAX410

        if __name__ == "__main__":
            print(update(jnp.ones(2), jnp.ones(2)))
            LR = 0.01
            print(update(jnp.ones(2), jnp.ones(2)))
        """,
    "global_rebound_before_any_call_quiet": """
        import jax
        import jax.numpy as jnp

        LR = 0.1

        @jax.jit
        def update(w, g):
            return w - LR * g

        if __name__ == "__main__":
            LR = 0.01
            print(update(jnp.ones(2), jnp.ones(2)))
        """,
    "global_rebound_after_the_last_call_quiet": """
        import jax
        import jax.numpy as jnp

        model_scale = 1.0
        apply = jax.jit(lambda x: x * model_scale)

        def accuracy(x):
            return apply(x).mean()

        accuracy(jnp.ones(2))
        model_scale = 2.0
        print(model_scale * 3)
        """,
    "stale_enclosing_local": """
        import jax

        def run():
            a = 10

            def loss(x):
                return x * a  # JAX410

            g = jax.jit(loss)
            first = g(1.0)
            a = 20
            return first, g(1.0)

        def before_the_first_call():
            a = 10

            def loss(x):
                return x * a

            a = 20
            g = jax.jit(loss)
            return g(1.0), g(2.0)

        def jitted_again():
            a = 10

            def loss(x):
                return x * a  # JAX410

            g = jax.jit(loss)
            first = g(1.0)
            a = 20
            g = jax.jit(loss)
            return first, g(1.0)

        def defined_again():
            a = 10

            def loss(x):
                return x * a

            g = jax.jit(loss)
            first = g(1.0)
            a = 20

            def loss(x):
                return x * a

            g = jax.jit(loss)
            return first, g(1.0)

        def probe(fun, x):
            python_runs = True

            def wrapped(x):
                assert python_runs
                return fun(x)

            g = jax.jit(wrapped)
            first = g(x)
            python_runs = False
            return first, g(x)
        """,
    "stale_global_quiet": """
        import jax

        SCALE = 2.0
        SCALE = SCALE * 2  # both before the function: frozen value is the final one

        @jax.jit
        def f(x):
            return x * SCALE
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_purity_case(name):
    source = textwrap.dedent(CASES[name])
    found = {(f.start.row, f.code) for f in lint_source(source, f"{name}.py", PURITY)}
    assert found == marked(source)


KERNEL_REFERENCES = """
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_ref, o_ref, scratch):
    scratch[...] = x_ref[...] * 2
    scratch.at[1][...] = x_ref[1] * 3
    o_ref.at[0].set(scratch[0])
    o_ref.at[1].set(scratch[1])


def double(x):
    if hasattr(pltpu, "TensorCoreMesh"):  # JAX 0.11 on
        mesh = pltpu.TensorCoreMesh(axis_name="core", num_cores=1)
    else:
        mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)
    run = pl.kernel(
        body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
        scratch_types=[pltpu.VMEM(x.shape, x.dtype)], interpret=True,
    )
    return run(x)


def copy(x):
    def kernel(x_ref, o_ref):
        o_ref.at[0].set(x_ref[0])
        o_ref.at[1].set(x_ref[1])

    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x)


def discarded(x):
    x.at[0].set(1.0)  # JAX403
    return x
"""


def test_stores_through_kernel_references_are_not_updates(cli, make_files):
    """A `pl.kernel` body takes references, as a `pallas_call` kernel does; `ref.at[i].set(v)`
    and `ref.at[i][...] = v` store through them, while `.at[...].set` on an array is discarded."""
    make_files({"kernels.py": KERNEL_REFERENCES})
    result = cli("check", "--output-format", "json", "kernels.py")
    found = [(f["code"], f["location"]["row"]) for f in result.json]
    assert found == [("JAX403", KERNEL_REFERENCES.splitlines().index("    x.at[0].set(1.0)  # JAX403") + 1)]


@pytest.mark.filterwarnings("ignore:pltpu.create_tensorcore_mesh is deprecated:DeprecationWarning")
def test_stores_through_kernel_references_run_under_jax():
    """What the quiet kernel cases rest on: a reference's `.at[i].set(v)` writes and returns
    None, in a `pl.kernel` body and in a `pallas_call` kernel alike."""
    jnp = pytest.importorskip("jax.numpy")
    namespace: dict = {}
    exec(compile(KERNEL_REFERENCES, "kernels.py", "exec"), namespace)
    x = jnp.ones((2, 4))
    assert namespace["double"](x).tolist() == [[2.0] * 4, [3.0] * 4]
    assert namespace["copy"](x).tolist() == x.tolist()


HIJAX_STEP = """\
import jax
import jax.numpy as jnp
from flax import nnx

nnx.var_defaults(hijax=True)


class Counter(nnx.Module):
    def __init__(self):
        self.count = nnx.Variable(jnp.zeros(()))


@jax.jit
def step(counter, x):
    counter.count[...] = counter.count[...] + x


def run():
    counter = Counter()
    step(counter, 1.0)
    return float(counter.count[...])
"""


@pytest.mark.parametrize("hijax", [True, False])
def test_a_jitted_write_to_a_hijax_nnx_object_reaches_the_caller(hijax, cli, make_files):
    """With NNX variables made hijax, an NNX object `jax.jit` is given is the caller's own: the
    write reaches it (or, in a Flax that wants `ref=True` for that, is refused loudly), and JAX408
    is quiet. Without, the function writes a copy, silently: reported."""
    source = HIJAX_STEP if hijax else HIJAX_STEP.replace("nnx.var_defaults(hijax=True)", "")
    make_files({"step.py": source})
    found = [(f["code"], f["location"]["row"]) for f in cli("check", "--output-format", "json", "step.py").json]
    assert found == ([] if hijax else [("JAX408", source.splitlines().index("    counter.count[...] = counter.count[...] + x") + 1)])


@pytest.mark.parametrize("hijax", [True, False])
def test_a_jitted_write_to_a_hijax_nnx_object_reaches_the_caller_under_jax(hijax):
    pytest.importorskip("jax")
    nnx = pytest.importorskip("flax.nnx")
    if not hasattr(nnx, "var_defaults"):
        pytest.skip("this Flax has no hijax variables")
    source = HIJAX_STEP if hijax else HIJAX_STEP.replace("nnx.var_defaults(hijax=True)", "")
    namespace: dict = {}
    exec(compile(source, "step.py", "exec"), namespace)
    try:
        seen = namespace["run"]()
    except Exception as exc:  # a Flax that keeps hijax variables without `ref=True` immutable in a trace
        assert hijax and type(exc).__name__ == "ImmutableVariableError", exc
    else:
        assert seen == (1.0 if hijax else 0.0)  # hijax: the caller's own; else a silent copy
    finally:
        nnx.var_defaults(hijax=False)  # the switch is global: leave it as it was


def test_an_enclosing_local_is_frozen_in_the_trace_under_jax():
    """What JAX410 says of a local the enclosing function rebinds between two calls of a jit of
    a nested function: the second call runs the program traced with the old value, as does a
    new jit of the same function, while a function defined anew sees the new value."""
    jax = pytest.importorskip("jax")
    a = 10

    def loss(x):
        return x * a

    g = jax.jit(loss)
    assert float(g(1.0)) == 10.0
    a = 20
    assert float(g(1.0)) == 10.0  # stale
    assert float(jax.jit(loss)(1.0)) == 10.0  # JAX caches the trace with the function

    def loss(x):
        return x * a  # noqa: JAX410

    assert float(jax.jit(loss)(1.0)) == 20.0  # a new function is traced anew


def test_a_global_bound_after_the_def_is_frozen_at_the_first_call_under_jax():
    """What JAX410 says of a global bound only after the jitted function, then bound again after a
    call: the second call keeps the value of the first, read through a `Partial` as directly."""
    pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(textwrap.dedent(CASES["stale_global_bound_only_after_the_def"]), "case.py", "exec"), namespace)
    assert namespace["r1"].tolist() == namespace["r2"].tolist() == [15.0] * 3  # not 27.0: `args` was frozen
    assert namespace["global_fun"](0, 0).tolist() == [27.0] * 3


def test_a_global_rebound_before_the_first_call_is_traced_with_its_new_value_under_jax():
    """A global rebound before any call, or after the last, is never stale: JAX reads it at the
    first call, and nothing runs the function after the second binding."""
    pytest.importorskip("jax")
    before: dict = {"__name__": "__main__"}
    exec(compile(textwrap.dedent(CASES["global_rebound_before_any_call_quiet"]), "case.py", "exec"), before)
    assert before["update"](before["jnp"].ones(2), before["jnp"].ones(2)).tolist() == pytest.approx([0.99, 0.99])
    stale: dict = {"__name__": "__main__"}
    exec(compile(textwrap.dedent(CASES["stale_global_main_block"]), "case.py", "exec"), stale)
    assert stale["update"](stale["jnp"].ones(2), stale["jnp"].ones(2)).tolist() == pytest.approx([0.9, 0.9])  # 0.1 kept


def test_a_jax_array_takes_the_isinstance_branch_under_jax():
    """What JAX401 says of a store past `if isinstance(m, jax.Array): return m.at[i].set(v)`: a
    tracer is a `jax.Array`, so under jit the store is never reached; a list still takes it."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def set_entry(m, i, value):
        if isinstance(m, jax.Array):
            return m.at[i].set(value)
        m[i] = value
        return m

    assert float(jax.jit(lambda m: set_entry(m, 0, 1.0))(jnp.zeros(2))[0]) == 1.0
    assert set_entry([0.0, 0.0], 1, 2.0) == [0.0, 2.0]


def test_print_fix_is_offered_and_unsafe():
    source = textwrap.dedent(
        """
        import jax

        @jax.jit
        def f(x):
            print("x", x)
            return x
        """
    )
    (finding,) = lint_source(source, "a.py", {"JAX404"})
    assert finding.fix is not None and finding.fix.applicability == "unsafe"
    assert finding.fix.edits[0].content == 'jax.debug.print("x {}", x)'


def test_in_place_fix_safety_depends_on_the_binding():
    source = textwrap.dedent(
        """
        import jax.numpy as jnp

        X = jnp.zeros(3)

        def local():
            x = jnp.zeros(3)
            x[0] = 1.0

        def parameter(x: "jax.Array"):
            x[0] = 1.0

        def global_name():
            X[0] = 1.0
        """
    )
    fixes = {f.start.row: f.fix for f in lint_source(source, "a.py", {"JAX401"})}
    assert fixes[8].applicability == "safe"
    assert 14 not in fixes or fixes[14] is None or fixes[14].applicability == "unsafe"
    assert fixes[14] is None  # a global: rebinding it would make it local


def test_in_place_fix_on_a_loop_target_is_unsafe():
    source = textwrap.dedent(
        """
        import jax.numpy as jnp

        def rows(m):
            out = jnp.zeros((2, 2))
            for row in out:
                row[0] = 1.0
            out[0] = 2.0
            return out
        """
    )
    fixes = {f.start.row: f.fix.applicability for f in lint_source(source, "a.py", {"JAX401"})}
    assert fixes == {7: "unsafe", 8: "safe"}


def test_items_of_jax_arrays_are_jax_arrays_under_jax():
    """What JAX401 says of unpacked and iterated JAX arrays: each item is a JAX array, immutable."""
    jnp = pytest.importorskip("jax.numpy")
    q, _ = jnp.linalg.qr(jnp.eye(2))
    first, *rest = jnp.split(jnp.arange(3.0), 3)
    (row, *_) = jnp.zeros((2, 2))
    for item in (q, first, row, next(iter(jnp.zeros((2, 2))))):
        with pytest.raises(TypeError, match="immutable"):
            item[0] = 1.0
    assert isinstance(rest, list)


def test_items_of_a_list_of_jax_arrays_are_jax_arrays_under_jax():
    """What JAX401 says of `mos = [jnp.reshape(...) for ...]` then `mos[0][i] = v`: the list is
    Python's (its items can be replaced), each item is an immutable JAX array."""
    jnp = pytest.importorskip("jax.numpy")
    mos = [jnp.reshape(m, (2, -1)) for m in (jnp.zeros(4), jnp.ones(4))]
    mos[1] = jnp.zeros((2, 2))
    alpha = mos[0][..., :1].copy()
    for item in (mos[0], alpha, (jnp.zeros(3), jnp.ones(3))[0]):
        with pytest.raises(TypeError, match="immutable"):
            item[0] = 1.0


def test_a_field_of_a_record_a_callback_returns_refuses_item_assignment_under_jax():
    """What JAX401 says of `state = callback(state)` (declared to return the record) then
    `state.confidences[:, i] = v` in a `while_loop` body."""
    jax = pytest.importorskip("jax")
    flax = pytest.importorskip("flax")
    jnp = jax.numpy

    @flax.struct.dataclass
    class LoopState:
        i: jax.Array
        confidences: jax.Array

    def callback(s):
        return s.replace(i=s.i)

    def body(state):
        state = callback(state)
        confidences = state.confidences
        confidences[:, state.i] = 1.0  # noqa: JAX401
        return state

    with pytest.raises(TypeError, match="immutable"):
        jax.lax.while_loop(lambda s: s.i < 3, body, LoopState(jnp.int32(0), jnp.zeros((2, 3))))


def test_a_method_of_an_instance_an_attribute_holds_returns_a_jax_array_under_jax():
    """What JAX401 says of `out = self._model.propagate(x, key)` then `out[idx] = out`, where
    `__init__(self, model: Ensemble)` stores its annotated parameter: JAX refuses the store."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    class Ensemble:
        def propagate(self, x, key):
            return x + jax.random.normal(key, x.shape)

    class ModelEnv:
        def __init__(self, model: Ensemble):
            self._model = model

        def step(self, x, key, idx):
            out = self._model.propagate(x, key)
            out[idx] = out  # noqa: JAX401
            return out

    env = ModelEnv(Ensemble())
    with pytest.raises(TypeError, match="immutable|does not support item assignment"):
        jax.jit(env.step)(jnp.zeros(3), jax.random.key(0), jnp.arange(3))


def test_results_of_transformed_functions_are_jax_arrays_under_jax():
    """What JAX401 says of `jax.vmap(f)(x)`, even called eagerly: a JAX array when `f` returns one,
    and the function's own list when it returns a list."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    m = jax.vmap(lambda i: jnp.sum(i * jnp.arange(3)))(jnp.arange(3))
    with pytest.raises(TypeError, match="immutable"):
        m[0] += 1.0
    res = jax.vmap(lambda x: [x, x])(jnp.ones(2))
    res[0] = jnp.zeros(2)
    assert isinstance(res, list)


def test_messages_name_the_object():
    source = textwrap.dedent(
        """
        import jax

        captured = []

        @jax.jit
        def f(x):
            captured.append(x)
            return x
        """
    )
    (finding,) = lint_source(source, "a.py", {"JAX407"})
    assert "`captured`" in finding.message and "tracer" in finding.message


def test_a_tracer_stored_into_an_enclosing_argument_is_not_a_running_total_under_jax():
    """What JAX407 says of `total[0] += x` in a jitted closure over an argument of the function
    around it: the write happens while tracing only, so the total does not grow, and what it
    holds afterwards is a leaked tracer."""
    jax = pytest.importorskip("jax")

    def make_incrementer(total):
        @jax.jit
        def increment(x):
            total[0] += x
            return total[0]

        return increment

    total = [0.0]
    increment = make_incrementer(total)
    assert float(increment(1.0)) == float(increment(1.0)) == 1.0
    assert isinstance(total[0], jax.core.Tracer)


def test_a_traced_value_stored_in_a_global_under_grad_or_vmap_leaks_under_jax(cli, make_files):
    """What JAX406 says of a global or nonlocal given a traced value under `jax.grad` or
    `jax.vmap`: the body runs on every call, but the name keeps a tracer, and using it later
    raises `UnexpectedTracerError`. A Python value stored there (a count) is left alone."""
    source = """
        import jax
        import jax.numpy as jnp

        last = None
        calls = 0


        def loss(w):
            global last, calls
            y = jnp.sum(w ** 2)
            last = y
            calls = calls + 1
            return y


        grad_loss = jax.grad(loss)


        def batched(xs):
            seen = None

            def one(x):
                nonlocal seen
                seen = x * 2
                return x + 1

            return jax.vmap(one)(xs), seen
        """
    make_files({"leak.py": source})
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX406", "leak.py")
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX406", 12), ("JAX406", 25)]
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<leak>", "exec"), namespace)
    namespace["grad_loss"](jax.numpy.ones(3))
    with pytest.raises(jax.errors.UnexpectedTracerError):
        namespace["last"] + 1
    _, seen = namespace["batched"](jax.numpy.ones(3))
    with pytest.raises(jax.errors.UnexpectedTracerError):
        seen + 1


def test_a_tracer_smuggled_out_of_an_inner_trace_leaks_under_jax(cli, make_files):
    """What JAX406 says of a nonlocal written by a function traced on its own (differentiated by
    `jax.jvp`/`jax.vjp`, `jax.grad` inside a jitted function, a `lax.scan` body): the tracer it
    stores outlives that trace, and using it raises `UnexpectedTracerError`. Quiet: a helper run
    in the enclosing trace, a static shape recorded by a body, a value the body closes over, and
    a Python `if` in a function `jax.jvp` differentiates (its primals are concrete)."""
    source = """\
        import jax
        import jax.numpy as jnp


        def tangent(f, x):
            return jax.jvp(f, (x,), (1.0,))[1]


        def through_jvp(x):
            def inner(y):
                nonlocal x
                x = y * 2
                return x
            tangent(inner, x)
            return x + 1


        def through_vjp(x):
            out = None
            def g(y):
                nonlocal out
                out = jnp.sin(y)
                return out
            jax.vjp(g, x)
            return out + 1


        @jax.jit
        def grad_in_jit(w):
            aux = None
            def loss(p):
                nonlocal aux
                aux = p * 2
                return jnp.sum(p ** 2)
            g = jax.grad(loss)(w)
            return g, aux


        @jax.jit
        def scan_in_jit(xs, w):
            last = None
            shape = None
            closed = None
            def body(c, x):
                nonlocal last, shape, closed
                last = c + x
                shape = c.shape
                closed = w
                return c + x, None
            c, _ = jax.lax.scan(body, 0.0, xs)
            return c, last, shape, closed


        @jax.jit
        def helper_in_jit(x):
            total = 0.0
            def add(v):
                nonlocal total
                total = total + v
            add(x)
            return total


        def branchy(y):
            if y > 0:
                return y * 2
            return y


        def jvp_of_branchy():
            return jax.jvp(branchy, (1.0,), (1.0,))
        """
    make_files({"smuggle.py": source})
    out = cli("check", "--no-cache", "--output-format", "json", "smuggle.py")
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [
        ("JAX406", 12), ("JAX406", 22), ("JAX406", 33), ("JAX406", 46),
    ]
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<smuggle>", "exec"), namespace)
    ones = jax.numpy.ones(3)
    for call in (
        lambda: namespace["through_jvp"](1.0),
        lambda: namespace["through_vjp"](1.0),
        lambda: namespace["grad_in_jit"](ones),
        lambda: namespace["scan_in_jit"](ones, 2.0),
    ):
        with pytest.raises(jax.errors.UnexpectedTracerError):
            call()
    quiet = textwrap.dedent(source).replace("        last = c + x\n", "")  # the quiet writes alone
    exec(compile(quiet, "<quiet>", "exec"), namespace)
    c, last, shape, closed = namespace["scan_in_jit"](ones, 2.0)
    assert (float(c), last, shape, float(closed)) == (3.0, None, (), 2.0)
    assert float(namespace["helper_in_jit"](1.0)) == 1.0
    assert float(namespace["jvp_of_branchy"]()[1]) == 2.0


def test_traced_index_into_a_list_raises_under_jax():
    """What JAX401 says of a traced index: a list cannot take it, a dict cannot hash it."""
    jax = pytest.importorskip("jax")

    def into_list(i, carry):
        items = [0.0, 0.0, 0.0]
        items[i] = carry
        return carry

    def into_dict(i, carry):
        table = {}
        table[i] = carry
        return carry

    for body in (into_list, into_dict):
        with pytest.raises(TypeError):
            jax.lax.fori_loop(0, 3, body, 1.0)


def test_results_of_static_methods_refuse_item_assignment_under_jax():
    """What JAX401 says of what a static method returns, called or mapped by `jax.vmap`: a JAX
    array, immutable even eagerly; the list the other one returns takes the store."""
    jax = pytest.importorskip("jax")
    source = textwrap.dedent(STATIC_METHODS)
    grid = jax.numpy.ones((3, 4))
    for line in ("mask[-1:] = False", "first[0] = True"):
        namespace: dict = {}
        # Each store on its own: the other one is left out, so the error is the one in view.
        other = "first[0] = True" if line.startswith("mask") else "mask[-1:] = False"
        exec(source.replace(other, "pass"), namespace)
        with pytest.raises(TypeError):
            namespace["action_mask"](grid)
    namespace = {}
    exec(source.replace("mask[-1:] = False", "pass").replace("first[0] = True", "pass"), namespace)
    assert namespace["action_mask"](grid)[2] == [1, 0, 0, 0]


def test_stores_under_a_traced_boolean_mask_raise_under_jax():
    """What JAX401 says of `x[mask] = v` with a traced boolean mask, whatever `x` is: a JAX array
    is immutable, NumPy cannot read the tracer, a list cannot take it as an index, a dict
    cannot hash it; the scan carry made by `jnp.zeros(3, dtype=jnp.bool_)` is such a mask."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    import numpy as np

    class Env:
        def __init__(self, make):
            self.make = make

        def step(self, action):
            return self.make(), action > 0

        def reward(self, x):
            return self.make()

        def counts(self, x):
            return self.make()

    namespace: dict = {}
    exec(textwrap.dedent(MASKED), namespace)
    for make in (lambda: jnp.ones(3), lambda: np.ones(3), lambda: [1.0, 2.0, 3.0], dict):
        with pytest.raises(TypeError):
            namespace["rollout"](Env(make), jnp.ones((2, 3)))
        with pytest.raises(TypeError):
            namespace["clipped"](jnp.ones(3), Env(make))
    assert list(namespace["eager"](np.ones(3), Env(lambda: np.ones(3)))) == [0.0, 0.0, 0.0]


def test_only_jax_arrays_have_at_updates_and_they_refuse_item_assignment():
    """What JAX401 reads from `x.at[i].get()`: NumPy arrays have no `.at`, a JAX array that has
    one refuses item assignment, eagerly as under `jit`."""
    jnp = pytest.importorskip("jax.numpy")
    import numpy as np

    assert not hasattr(np.zeros(3), "at")

    def buffer_set(buffer, item, x):
        x = jnp.where(False, x, buffer.at[item].get())
        buffer[item] = x  # noqa: JAX401
        return buffer

    with pytest.raises(TypeError, match="immutable"):
        buffer_set(jnp.zeros(3), 0, 1.0)


# The 64-bit dtype constructors truncate without `jax_enable_x64`, and say so.
@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")
def test_functions_that_take_a_sequence_first_take_a_list_under_jax():
    """Why passing a value first to `jnp.stack` (and the others of `SEQUENCE_FIRST_ARGUMENT`) does
    not show it to be an array, while `jnp.sum` does."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from jaxlint.analysis.knowledge.array_api import SEQUENCE_FIRST_ARGUMENT

    xs = [jnp.ones(2), jnp.zeros(2)]
    calls = {  # a list first, then the other arguments it needs
        "jax.numpy.select": ([jnp.ones(2, bool), jnp.zeros(2, bool)], xs),
        "jax.numpy.ravel_multi_index": ([jnp.ones(2, jnp.int32), jnp.zeros(2, jnp.int32)], (3, 3)),
        "jax.numpy.linalg.multi_dot": ([jnp.ones((2, 2))] * 2,),
        "jax.lax.concatenate": (xs, 0),
    }
    namespaces = {"jax.numpy": jnp, "jax.numpy.linalg": jnp.linalg, "jax.lax": jax.lax}
    for name in sorted(SEQUENCE_FIRST_ARGUMENT):
        namespace, _, attr = name.rpartition(".")
        function = getattr(namespaces[namespace], attr)
        assert isinstance(function(*calls.get(name, (xs,))), jax.Array), name

    @jax.jit
    def summed(items):
        return jnp.sum(items)

    with pytest.raises(TypeError):
        summed(xs)


def test_a_store_before_an_at_update_fails_whatever_the_array():
    """What JAX401 reads from a later `.at[...]` on the same value: a JAX array refuses the store,
    and anything else has no `.at`."""
    jnp = pytest.importorskip("jax.numpy")
    import numpy as np

    def shift(vel, i, v):
        vel[i] = v  # noqa: JAX401
        return vel.at[i + 1].set(v)

    with pytest.raises(TypeError, match="immutable"):
        shift(jnp.zeros(3), 0, 1.0)
    with pytest.raises(AttributeError):
        shift(np.zeros(3), 0, 1.0)


def test_a_store_before_an_at_update_through_the_cli(cli, make_files):
    make_files({
        "constraints.py": """
            import jax

            def settle(vel, a0, a1, v0, v1):
                vel[a0] = v0
                vel = vel.at[a1].set(v1)
                return vel

            def settle_maybe(vel, a0, a1, v0, v1, flag):
                vel[a0] = v0
                if flag:
                    vel = vel.at[a1].set(v1)
                return vel
            """,
    })
    out = cli("check", "--no-cache", "--output-format", "json", "constraints.py")
    assert out.code == 1
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX401", 5)]


def test_array_flow_through_the_cli(cli, make_files):
    make_files({
        "interp.py": """
            import jax.numpy as jnp
            import numpy as np

            def coords(points):
                if isinstance(points, tuple):
                    points = jnp.empty((3, len(points)))
                    for j, item in enumerate(points):
                        points[..., j] = item
                else:
                    points = np.asarray(points).copy()
                    points[..., 0] = 0.0
                return points

            def buffer_set(buffer, item, x):
                x = jnp.where(False, x, buffer.at[item].get())
                buffer[item] = x
                return buffer
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX401", "interp.py")
    assert out.code == 1
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX401", 9), ("JAX401", 17)]


def test_unread_update_on_every_path_through_the_cli(cli, make_files):
    make_files({
        "scatter.py": """
            import jax.numpy as jnp

            def scatter(x, idx, reset):
                out = jnp.zeros(3)
                for i in idx:
                    out = out.at[i].add(x)
                if reset:
                    out = jnp.zeros(3)
                    return out
                out = out.at[0].set(1.0)
                out = jnp.ones(3)
                return out
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX403", "scatter.py")
    assert out.code == 1
    # the loop's sum is lost on both paths: rebound, or only fed to an update that is lost; the
    # name's dead updates are one finding, at the first, naming the others
    assert [(f["code"], f["location"]["row"]) for f in out.json] == [("JAX403", 7)]
    assert "so are its later updates on line 11;" in out.json[0]["message"]


def test_a_chain_of_dead_updates_is_one_finding_per_name(cli, make_files):
    make_files({
        "layout.py": """
            import jax
            import jax.numpy as jnp

            @jax.jit
            def reset(x, idx):
                mask = jnp.zeros_like(x)
                mask = mask.at[idx].set(1)
                mask = mask.at[0].set(0)
                mask = mask.at[1].set(0)
                other = x.at[idx].set(2)
                return x
            """,
    })
    out = cli("check", "--output-format", "json", "--select", "JAX403", "layout.py")
    assert out.code == 1
    assert [(f["location"]["row"], f["message"].split("`")[1]) for f in out.json] == [(8, "mask"), (11, "other")]
    assert "later updates on lines 9, 10;" in out.json[0]["message"]


def test_print_in_an_untaken_cond_branch_runs_under_jax(capsys):
    """What JAX404 says of a `lax.cond` branch: JAX traces it, and prints, though it is not taken."""
    jax = pytest.importorskip("jax")

    def never(x):
        print("branch that does not run")  # noqa: JAX404
        return x

    def taken(x):
        jax.debug.print("taken branch")
        return x

    jax.lax.cond(True, taken, never, 1.0)
    jax.jit(lambda x: jax.lax.switch(0, [taken, never], x))(1.0)
    out = capsys.readouterr().out
    assert out.count("branch that does not run") == 2
    assert out.count("taken branch") == 2


def test_an_update_assigned_and_not_returned_leaves_the_callers_array():
    """What JAX403 says of `x = x.at[i].set(v)` never read again: the caller's array is unchanged."""
    jnp = pytest.importorskip("jax.numpy")

    def reset_slot(buffer, i):
        buffer = buffer.at[i].set(0.0)  # noqa: F841

    buffer = jnp.ones(3)
    reset_slot(buffer, 1)
    assert float(buffer[1]) == 1.0


def test_nnx_object_updated_in_a_scan_body_raises_under_flax():
    """What JAX407 says of an NNX object updated from a plain `lax.scan` body: Flax refuses."""
    jnp = pytest.importorskip("jax.numpy")
    jax = pytest.importorskip("jax")
    nnx = pytest.importorskip("flax.nnx")
    metrics = nnx.MultiMetric(loss=nnx.metrics.Average("loss"))

    def body(carry, x):
        metrics.update(loss=(x ** 2).mean())  # noqa: JAX407
        return carry, None

    with pytest.raises(Exception) as info:
        jax.lax.scan(body, 0, jnp.ones((2, 2)))
    assert type(info.value).__name__ == "TraceContextError"


def test_nnx_module_that_updates_itself_called_in_jit_raises_under_flax():
    """What JAX407 says of `counter()` inside plain `jax.jit`, `counter` an outer NNX module whose
    `__call__` updates its own variable: Flax refuses; under `nnx.jit`, passed in, it works."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    nnx = pytest.importorskip("flax.nnx")

    class Counter(nnx.Module):
        def __init__(self):
            self.count = nnx.Variable(jnp.array(0))

        def __call__(self):
            self.count[...] += 1

    counter = Counter()

    def step(x):
        counter()  # noqa: JAX407
        return x

    with pytest.raises(Exception) as info:
        jax.jit(step)(jnp.ones(()))
    assert type(info.value).__name__ == "TraceContextError"
    nnx.jit(lambda c, x: (c(), x)[1])(counter, jnp.ones(()))
    assert int(counter.count[...]) == 1


def test_names_before_at_updates():
    """The names a module's text shows before `.at[`, across whitespace and line continuations;
    a comment in between leaves any name possible."""
    from jaxlint.analysis.effects.at_text import names_before_at

    assert names_before_at("y = a.at[0].get() + b . at [1].get() + c\\\n  .at[2].get()") == {"a", "b", "c"}
    assert names_before_at("y = (a  # note\n  .at[0].get())") is None
    assert names_before_at("y = x + 1") == frozenset()


def test_at_call_lines():
    """Where `.at[` lies in a module's text, token by token across lines."""
    from jaxlint.analysis.effects.at_text import at_call_lines

    assert at_call_lines("a = 1\nx.at[1]\ny = (z.\n  at[2])\n\nq. # c\n at [3]") == [(2, 2), (3, 4), (6, 7)]
    assert at_call_lines("x = 1") == []


def test_a_module_that_only_updates_arrays_it_was_given_is_linted(cli, make_files):
    """A module that never imports JAX but uses its `.at[...]` update syntax on arrays it receives
    is linted; one with neither is not."""
    make_files({
        "hands.py": """
            def sort_hands(state):
                hands = state.hand.flatten()[::-1]
                hands.at[8].set(hands[9])
                return hands
            """,
        "plain.py": """
            def f(xs):
                xs[0] = 1
                return xs
            """,
    })
    found = cli("check", "--no-cache", "--output-format", "json", ".").json
    assert [(f["code"], f["filename"].rsplit("/", 1)[-1], f["location"]["row"]) for f in found] == [
        ("JAX403", "hands.py", 4)
    ]


def test_item_store_into_a_copied_dict_runs_under_jit():
    """`.copy()` is no sign of an array: a dict argument copied and updated traces fine."""
    jax = pytest.importorskip("jax")

    @jax.jit
    def shift(forcing, change):
        forcing = forcing.copy()
        forcing["sst"] = forcing["sst"] + change
        return forcing

    assert float(shift({"sst": jax.numpy.ones(2)}, 1.0)["sst"][0]) == 2.0


def test_nnx_module_updating_itself_called_in_staged_code_from_the_cli(cli, make_files):
    source = textwrap.dedent(CASES["nnx_module_updating_itself_called_in_staged_code"])
    make_files({"counter.py": source})
    out = cli("check", "--output-format", "json", "--select", "JAX4", "--isolated", "--no-cache")
    assert {(f["location"]["row"], f["code"]) for f in out.json} == marked(source)


def test_an_attribute_set_on_a_pytree_argument_is_missing_for_the_caller_under_jax(cli, make_files):
    """What JAX408 says of `cpt.c = ...` in a jitted function that reads `cpt.c` itself, when
    the caller reads `cpt.c` on the object it passed: jit set it on a rebuilt copy, so the
    caller's object has no `c`. Quiet: a caller that reads only what it set, or that sets the
    attribute itself before reading it."""
    source = """\
        import jax
        import jax.numpy as jnp


        @jax.tree_util.register_pytree_node_class
        class Params:
            def __init__(self, a, b):
                self.a = a
                self.b = b

            def tree_flatten(self):
                return (self.a, self.b), None

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)


        @jax.jit
        def predict(t, params):
            params.out = params.a * t
            return params.out + params.b


        def caller_reads(t, params):
            y = predict(t, params)
            print(hasattr(params, "out"))
            return y, params.out


        def caller_reads_its_own(t, params):
            y = predict(t, params)
            return y, params.a


        def caller_sets_it_again(t, params):
            y = predict(t, params)
            params.out = y
            return params.out
        """
    make_files({"setattr_arg.py": source})
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX408", "setattr_arg.py")
    assert [(f["location"]["row"], "line 28" in f["message"]) for f in out.json] == [(21, True)]
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<setattr_arg>", "exec"), namespace)
    params = namespace["Params"](jax.numpy.ones(2), jax.numpy.ones(2))
    with pytest.raises(AttributeError):
        namespace["caller_reads"](1.0, params)
    namespace["caller_reads_its_own"](1.0, params)
    namespace["caller_sets_it_again"](1.0, params)


def test_print_under_vmap_shows_a_tracer_not_the_values_under_jax(cli, make_files, capsys):
    """What JAX404 says of `print` in a function `jax.vmap` maps without `jit`: it runs, but what
    it shows is a batch tracer, not the numbers. Quiet: the same `print` under `jax.grad`, whose
    tracer shows its primal value."""
    source = """\
        import jax
        import jax.numpy as jnp


        def scaled(x):
            print("value", x)
            return x * 2


        def mapped(xs):
            return jax.vmap(scaled)(xs)


        def squared(x):
            print("value", x)
            return x ** 2


        def differentiated(x):
            return jax.grad(squared)(x)
        """
    make_files({"shown.py": source})
    out = cli("check", "--no-cache", "--output-format", "json", "--select", "JAX404", "shown.py")
    assert [f["location"]["row"] for f in out.json] == [6]
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<shown>", "exec"), namespace)
    capsys.readouterr()
    namespace["mapped"](jax.numpy.array([1.25, 2.5, 3.75]))
    shown = capsys.readouterr().out
    assert "Tracer" in shown and "1.25" not in shown
    namespace["differentiated"](1.25)
    assert "1.25" in capsys.readouterr().out


def test_a_discarded_conversion_checks_the_value_under_jax():
    """What JAX403 leaves alone in a `try` whose handler raises: the dropped `jnp.asarray(value)`
    is the check itself, and JAX raises for a value it cannot convert."""
    jnp = pytest.importorskip("jax.numpy")
    jnp.asarray(1.5)
    with pytest.raises(TypeError):
        jnp.asarray("abc")


ALIASED_GRID = {
    "world/__init__.py": "",
    "world/types.py": """
        from typing import TypeAlias

        import jax
        import numpy as np

        GridState: TypeAlias = jax.Array
        HostGrid = np.ndarray
    """,
    "world/grid.py": """
        import jax

        from .types import GridState, HostGrid

        def vertical_line(grid: GridState, x, y, length, tile):
            grid[y : y + length, x] = tile  # JAX401
            return grid

        def host_line(grid: HostGrid, x, y, length, tile):
            grid[y : y + length, x] = tile
            return grid
    """,
}


def test_an_annotation_a_project_module_aliases_to_a_jax_array(cli, make_files):
    """`GridState: TypeAlias = jax.Array` in one module of the package makes a parameter
    annotated `GridState` in another a JAX array, as the same alias in its own module would;
    an alias of `np.ndarray` says a NumPy array, which takes item assignment."""
    make_files(ALIASED_GRID)
    result = cli("check", "--output-format", "json", "--select", "JAX401", "world/grid.py")
    found = [(f["code"], f["location"]["row"]) for f in result.json]
    grid = textwrap.dedent(ALIASED_GRID["world/grid.py"]).splitlines()
    assert found == [("JAX401", next(i for i, line in enumerate(grid, 1) if "# JAX401" in line))]


def test_an_annotation_a_project_module_aliases_to_a_jax_array_under_jax():
    """What JAX401 says of `grid[y : y + n, x] = tile` on a `jax.Array`: JAX refuses it."""
    jax = pytest.importorskip("jax")
    grid = jax.numpy.zeros((4, 4))
    with pytest.raises(TypeError, match="immutable|does not support item assignment"):
        grid[0:2, 1] = 1.0


MADE_IN_A_HELPER_MODULE = {
    "world/__init__.py": "",
    "world/grid.py": """
        import jax.numpy as jnp
        import numpy as np

        def empty_world(height, width):
            return jnp.zeros((height, width), dtype=jnp.uint8)

        def room(height, width):
            grid = empty_world(height, width)
            return grid.at[0, :].set(1)

        def host_room(height, width):
            return np.zeros((height, width), dtype=np.uint8)
    """,
    "world/empty.py": """
        import jax

        from .grid import host_room, room

        def generate(height, width):
            grid = room(height, width)
            grid[height - 2, width - 2] = 3  # JAX401
            host = host_room(height, width)
            host[height - 2, width - 2] = 3
            return grid, host
    """,
}


def test_what_a_function_of_another_project_module_returns_is_a_jax_array(cli, make_files):
    """`room(...)` imported from `world.grid`, every `return` of which gives a JAX array, returns
    one, as a function of the module itself would; `host_room`, which returns a NumPy array,
    does not."""
    make_files(MADE_IN_A_HELPER_MODULE)
    result = cli("check", "--output-format", "json", "--select", "JAX401", "world/empty.py")
    found = [(f["code"], f["location"]["row"]) for f in result.json]
    empty = textwrap.dedent(MADE_IN_A_HELPER_MODULE["world/empty.py"]).splitlines()
    assert found == [("JAX401", next(i for i, line in enumerate(empty, 1) if "# JAX401" in line))]


def test_print_of_what_jax_example_libraries_make_shows_tracers_under_jax():
    """What JAX404 says of `print(get_params(opt_state))` in a jitted update: the optimizer's
    function returns the traced parameters, printed once while tracing."""
    jax = pytest.importorskip("jax")
    import contextlib
    import io

    from jax.example_libraries import optimizers

    opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)

    @jax.jit
    def update(i, opt_state, grads):
        print("params", get_params(opt_state))  # noqa: JAX404
        return opt_update(i, grads, opt_state)

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        state = opt_init(jax.numpy.ones(3))
        for i in range(3):
            state = update(i, state, jax.numpy.ones(3))
    assert out.getvalue().count("params") == 1 and "Tracer" in out.getvalue()
