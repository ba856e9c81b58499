"""Recompilation rules (JAX5xx) beyond their own examples: positive and negative cases, and options.

Each case marks the lines that must be reported inline (`# JAX5nn`); every other line must
stay quiet for every JAX5xx rule.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from jaxlint.linter import lint_source
from jaxlint.rules import all_rules
from marks import family_marks

RECOMPILATION = {code for code in all_rules() if code.startswith("JAX5")}
marked = family_marks(r"JAX5\d\d")

CASES = {
    "ragged_batches_from_a_loader": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def step(w, x):
            return w - 0.1 * jnp.mean(x @ w)

        def train_while(w, x, rng):
            start = 0
            while start < len(x):
                size = int(rng.integers(16, 64))
                w = step(w, x[start:start + size])  # JAX501
                start += size
            return w

        def batches(x, y, rng):
            start = 0
            while start < len(x):
                size = int(rng.integers(16, 64))
                yield x[start:start + size], y[start:start + size]
                start += size

        def kept(x, threshold):
            for chunk in np.array_split(x, 4):
                yield chunk[chunk.sum(axis=1) > threshold]

        def train_loader(w, x, y, rng, threshold):
            for xb, yb in batches(x, y, rng):
                w = step(w, xb)  # JAX501
            for xb in kept(x, threshold):
                w = step(w, xb)  # JAX501
            return w
        """,
    "fixed_batches_and_loaders_not_shown": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def step(w, x):
            return w - 0.1 * jnp.mean(x @ w)

        def fixed(x, bs, rng):
            order = rng.permutation(len(x))
            for i in range(0, len(x) - bs + 1, bs):
                yield x[order[i:i + bs]]

        def sized(x, rng):
            size = int(rng.integers(16, 64))
            for i in range(0, len(x) - size + 1, size):
                yield x[i:i + size]

        def noisy(x, rng):
            for i in range(0, len(x), 32):
                yield x[i:i + 32] + rng.normal(size=(32, 1))

        def train(w, x, rng, loader):
            for xb in fixed(x, 32, rng):
                w = step(w, xb)
            for xb in sized(x, rng):
                w = step(w, xb)
            for xb in noisy(x, rng):
                w = step(w, xb)
            for xb in loader:
                w = step(w, xb)
            for xb in loader.batches(rng):
                w = step(w, xb)
            return w
        """,
    "batch_bounds_through_names": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(w, x):
            return w - 0.1 * jnp.mean(x @ w)

        def fixed(w, x, batch_size, num_batches):
            for i in range(num_batches):
                start = i * batch_size
                end = (i + 1) * batch_size  # the bounds named: still `batch_size` long
                w = step(w, x[start:end])
            for start in range(0, len(x), batch_size):
                end = start + batch_size
                w = step(w, x[start:end])
            return w

        def growing(w, x, batch_size, num_batches):
            for i in range(num_batches):
                start = 0
                end = (i + 1) * batch_size
                w = step(w, x[start:end])  # JAX501
            for i in range(num_batches):
                start = i * batch_size
                batch_size = batch_size * 2  # rebound between the two bounds
                end = start + batch_size
                w = step(w, x[start:end])  # JAX501
            return w
        """,
    "jit_rebuilt_in_a_callback": """
        import jax
        import jax.numpy as jnp

        def evaluate(params, x):
            score = jax.jit(lambda x: jnp.sum(params * x))  # JAX502
            return score(x)

        def report(params, x):
            summary = jax.jit(lambda x: jnp.mean(params * x))  # called once per run: quiet
            return summary(x)

        def train(params, x, steps, eval_fn, final_fn, other_fn):
            for _ in range(steps):
                params = params - 0.1 * x
                eval_fn(params, x)  # the callback runs on every step
            other_fn = print
            for _ in range(steps):
                other_fn(params)  # rebound: not the function handed in
            return final_fn(params, x)

        def run(params, x):
            return train(params, x, 10, eval_fn=evaluate, final_fn=report, other_fn=report)
        """,
    # ---- JAX501 -------------------------------------------------------------------------------
    "jit_on_instances_and_wrappers": """
        import equinox as eqx
        import jax
        from flax import nnx

        def loss(w, x):
            return (x @ w).sum()

        class Evaluator:
            def __init__(self, scale):
                self.score = jax.jit(lambda w, x: scale * loss(w, x))  # JAX502
                self.plain = jax.jit(loss)  # a module-level function: JAX's cache is shared

        def evaluate(w, x):
            return Evaluator(2.0).score(w, x) + Evaluator(1.0).plain(w, x)

        @eqx.filter_jit
        def predict(model, x):
            return model(x)

        def main(w, model, data):
            for x in data:
                evaluate(w, x)
                eqx.filter_jit(predict)(model, x)  # the same function: one cache
                nnx.jit(predict)(model, x)  # JAX502
                eqx.filter_jit(lambda m, v: m(v))(model, x)  # JAX502
        """,
    "data_dependent_lengths": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def score(x):
            return (x ** 2).sum()

        def prune(x, steps):
            for _ in range(steps):
                score(x)  # JAX501
                x = x[x > x.mean()]
            return x

        def by_count(x, data):
            for step in range(10):
                n = int((data[step] > 0).sum())
                score(x[:n])  # JAX501

        def fixed_mask(batches, keep):
            for batch in batches:
                score(batch * keep)  # a fixed mask multiplies: one shape
                score(jnp.array([b for b in batch]))  # no filter
        """,
    "unrolled_over_a_static_parameter": """
        from functools import partial

        import jax
        import jax.numpy as jnp

        @partial(jax.jit, static_argnums=1)
        def rollout(x, n):
            for _ in range(n):  # JAX503
                x = jnp.tanh(x) * 0.5
            return x

        @partial(jax.jit, static_argnums=1)
        def short(x, n):
            for _ in range(n):
                x = jnp.tanh(x)
            return x

        def unknown(x, n):
            return rollout(x, n)

        def main(x):
            rollout(x, 3)
            rollout(x, 2000)
            short(x, 3)
        """,
    "growing_list_passed_as_a_pytree": """
        import jax

        @jax.jit
        def total(xs):
            return sum(x.sum() for x in xs)

        def run(batches):
            history = []
            for b in batches:
                history.append(b)
                total(history)  # JAX501

        def window(batches):
            for b in batches:
                recent = []
                recent.append(b)
                total(recent)  # a new list of one element each time
        """,
    "augmented_assignment_grows_only_sequences": """
        import functools

        import jax

        @functools.partial(jax.jit, static_argnums=(2,))
        def run_chunk(i0, state, n_steps):
            return state + i0 * n_steps

        @jax.jit
        def total(xs):
            return sum(x.sum() for x in xs)

        def train(niter, state, chunk=50):
            i = 0
            while i <= niter:
                n = min(chunk, niter + 1 - i)
                state = run_chunk(i, state, n)  # an int counter: the same (scalar) shape
                i += n
            seen = 0.0
            for b in range(niter):
                seen += b
                total(seen)
            return state

        def collect(batches, first):
            xs = []
            ys = list(first)
            zs = [b for b in first]
            for b in batches:
                xs += [b]
                ys += batches
                zs += (b,)
                total(xs)  # JAX501
                total(ys)  # JAX501
                total(zs)  # JAX501

        def extend(batches, acc):
            for b in batches:
                acc += [b]
                total(acc)  # JAX501
        """,
    "jit_of_new_objects_even_equal_ones": """
        import functools

        import jax
        from elsewhere import HashablePartial

        class Keyed:
            def __init__(self, c):
                self.c = c

            def __eq__(self, other):
                return isinstance(other, Keyed) and self.c == other.c

            def __hash__(self):
                return hash(self.c)

            def __call__(self, x):
                return x * self.c

        class Plain:
            def __init__(self, c):
                self.c = c

            def __call__(self, x):
                return x * self.c

        def f(c, x):
            return c * x

        def run(xs):
            for x in xs:
                jax.jit(HashablePartial(f, 2))(x)  # JAX502
                jax.jit(Keyed(2))(x)  # JAX502
                jax.jit(Plain(2))(x)  # JAX502
                jax.jit(functools.partial(f, 2))(x)  # JAX502
        """,
    "growing_list_stack": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def summarize(history):
            return history.mean(axis=0)

        def run(xs):
            history = []
            for x in xs:
                history.append(x)
                summarize(jnp.stack(history))  # JAX501
        """,
    "growing_append_and_vstack": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def score(buf):
            return buf.sum()

        def run(rows):
            buf = jnp.zeros((0, 3))
            seq = jnp.zeros(0)
            tokens = [0]
            for row in rows:
                buf = jnp.vstack([buf, row])
                seq = jnp.append(seq, 1.0)
                tokens = tokens + [1]
                score(buf)  # JAX501
                score(seq)  # JAX501
                score(jnp.asarray(tokens))  # JAX501
        """,
    "prefix_and_suffix_slices": """
        import jax

        @jax.jit
        def fit(h):
            return h.mean()

        def walk(series, bounds):
            for t in range(3, len(series)):
                fit(series[:t])  # JAX501
                fit(series[t:])  # JAX501
                fit(series[-t:])  # JAX501
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                fit(series[lo:hi])  # JAX501
        """,
    "sized_constructors": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(x):
            return x.sum()

        def bucket(n):
            return 16

        def run(xs, d):
            for i in range(10):
                f(jnp.arange(i + 1))  # JAX501
                f(jnp.zeros((i + 1, d)))  # JAX501
                f(jnp.linspace(0, 1, i + 2))  # JAX501
                f(jnp.arange(i, i + 10))  # a window of fixed length
                f(jnp.zeros(bucket(i)))  # a bucketing helper
                f(jnp.zeros(max(i, 4)))
                f(jnp.ones(len(xs[i])))  # not known to vary
                f(jnp.full((d, 3), i))  # the value changes, not the shape
            hist = []
            for x in xs:
                hist.append(x)
                f(jnp.zeros(len(hist)))  # JAX501
        """,
    "trimmed_every_pass": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def norm(x):
            return jnp.linalg.norm(x)

        def run(x, seqs):
            while x.shape[0] > 2:
                norm(x)  # JAX501
                x = x[:-1]
            y = x
            for _ in range(4):
                norm(y[1:])  # JAX501
                y = y[1:]
                norm(y)  # JAX501
            for s in seqs:
                z = jnp.ones(8)
                z = z[1:]  # trimmed from a fresh array every time
                norm(z)
                w = y[:4]
                w = w[:4]
                norm(w)
        """,
    "size_sweep_quiet": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def energy(x):
            return jnp.sum(x ** 2)

        def benchmark(key):
            # a deliberate sweep over problem sizes: one compilation per size is the point
            for n in (8, 16, 24, 32):
                key, sub = jax.random.split(key)
                x = jax.random.normal(sub, (n, 3))
                energy(x)
                energy(np.random.rand(n, 2))
                energy(jnp.zeros(n))
        """,
    "ragged_lists": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def encode(ids):
            return ids.sum()

        SENTENCES = [[1, 2, 3], [4, 5], [6, 7, 8, 9]]

        def embed_all():
            rng = np.random.default_rng(0)
            lengths = rng.integers(5, 50, size=8)
            docs = [rng.normal(size=(n, 4)) for n in lengths]
            for doc in docs:
                encode(doc)  # JAX501
            for s in SENTENCES:
                encode(jnp.array(s))  # JAX501
            for i, doc in enumerate(docs):
                encode(doc.astype(np.float32))  # JAX501
        """,
    "jitted_method": """
        import jax
        import jax.numpy as jnp
        from functools import partial

        class Model:
            @partial(jax.jit, static_argnums=0)
            def predict(self, x):
                return x.sum()

            def run(self, series):
                for t in range(1, len(series)):
                    self.predict(series[:t])  # JAX501
        """,
    "fixed_shapes_quiet": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(w, xb):
            return w - 0.1 * xb.mean()

        def train(w, x, bs, n_batches):
            for epoch in range(3):
                perm = jnp.arange(x.shape[0])
                for i in range(0, x.shape[0] - bs + 1, bs):
                    w = step(w, x[i:i + bs])
                for k in range(n_batches):
                    w = step(w, x[k * bs:(k + 1) * bs])
                    w = step(w, x[perm[k * bs:(k + 1) * bs]])
                for i in range(0, x.shape[0], bs):
                    n = min(bs, x.shape[0] - i)
                    w = step(w, x[i:i + n])
            return w

        def loop_values(w, x):
            for scale in (0.1, 0.2, 0.3):
                w = step(w, x * scale)
                x = x + 1.0  # rebound, same shape
                w = step(w, jax.random.normal(jax.random.key(0), x.shape))
            return w
        """,
    "strided_phases": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def place(values):
            return jnp.cumsum(values)

        def phases(x, n):
            out = []
            count = 0
            for i in range(n):
                out.append(place(x[count::n]))  # a phase of a fixed stride: at most two lengths
                out.append(place(x[i:len(x):n]))
                count += 1
            return out

        def grids(image, factor):
            return [place(image[i::factor, j::factor]) for i in range(factor) for j in range(factor)]

        def prefixes(x, n):
            return [place(x[:t:2]) for t in range(1, n)]  # JAX501

        def windows(x, n, w):
            return [place(x[s:s + w[s]:2]) for s in range(n)]  # JAX501

        def reversed_prefixes(x, n):
            return [place(x[c::-1]) for c in range(n)]  # JAX501

        def suffixes(x, n):
            return [place(x[c:]) for c in range(n)]  # JAX501

        def listed_phases(x, n):
            chunks = [x[c::n] for c in range(n)]
            return [place(chunk) for chunk in chunks]

        def listed_prefixes(x, n):
            chunks = [x[:t:2] for t in range(1, n)]
            return [place(chunk) for chunk in chunks]  # JAX501
        """,
    "padded_quiet": """
        import jax
        import jax.numpy as jnp

        MAX_LEN = 32

        @jax.jit
        def encode(ids, mask):
            return (ids * mask).sum()

        def pad(seq):
            out = jnp.zeros(MAX_LEN, jnp.int32)
            return out.at[: len(seq)].set(jnp.array(seq)), jnp.arange(MAX_LEN) < len(seq)

        def run(sentences):
            for s in sentences:
                ids, mask = pad(s)
                encode(ids, mask)
        """,
    "grad_without_jit_quiet": """
        import jax
        import jax.numpy as jnp

        def loss(w, x):
            return jnp.sum(x @ w)

        def run(w, xs):
            g = jax.grad(loss)
            for t in range(1, 5):
                w = w - g(w, xs[:t])  # no compilation cache under plain grad
            return w
        """,
    "numpy_draws_sized_by_the_loop": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def likelihood(mu, opponents):
            return jnp.sum(mu - opponents)

        def ratings(mu):
            rng = np.random.default_rng(0)
            for player in range(6):
                n = player + 1
                opponents = jnp.asarray(rng.normal(size=n))
                mu = mu + likelihood(mu, opponents)  # JAX501
                mu = mu + likelihood(mu, jnp.asarray(np.random.uniform(size=(n, 2))))  # JAX501
                mu = mu + likelihood(mu, jnp.asarray(rng.normal(size=32)))  # a fixed size
            return mu
        """,
    "jitted_call_through_a_helper": """
        import jax
        import jax.numpy as jnp

        def build_model(frames, key):
            return frames.mean() + jax.random.normal(key)

        model_apply = jax.jit(build_model)

        def inference(frames):
            return model_apply(frames, jax.random.key(42))

        def run():
            for video in [jnp.ones((n, 8)) for n in (10, 12, 15)]:
                inference(video)  # JAX501
            for _ in range(3):
                inference(jnp.ones((4, 8)))  # a fixed size
        """,
    # ---- JAX502 -------------------------------------------------------------------------------
    "jit_per_value_of_a_list_extended_with_literals": """
        import jax
        import jax.numpy as jnp

        def check_all(x, extra):
            dtypes = [jnp.float16, jnp.float32]
            if jax.config.jax_enable_x64:
                dtypes += [jnp.float64]
            for dtype in dtypes:  # one program per dtype
                cast = jax.jit(lambda y: y.astype(dtype))
                cast(x)
            schemes = ["euler", "rk4"]
            schemes.append(extra)
            for scheme in schemes:
                step = jax.jit(lambda y: y * len(scheme))  # JAX502
                step(x)
        """,
    "jit_rebuilt_variants": """
        from functools import partial

        import jax
        import jax.numpy as jnp

        def loss(w, x):
            return jnp.sum((x @ w) ** 2)

        class Trainer:
            def apply(self, w, x):
                return x @ w

            def eval_all(self, w, xs):
                return [jax.jit(self.apply)(w, x) for x in xs]  # JAX502

        def per_call(w, x):
            step = jax.jit(lambda w: w - 0.1 * jax.grad(loss)(w, x))  # JAX502
            return step(w)

        def vmapped(w, xs):
            return jax.jit(jax.vmap(partial(loss, w)))(xs)  # JAX502

        def main(w, data):
            trainer = Trainer()
            for x in data:
                w = per_call(w, x)
                vmapped(w, data)
            trainer.eval_all(w, data)
        """,
    "jit_rebuilt_per_epoch_or_called_through_grad": """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        def loss(p, x):
            return jnp.sum((p * x) ** 2)

        def train(params, data, epochs):
            for epoch in range(epochs):
                def foo(p, x):
                    return jax.value_and_grad(loss)(p, x)
                step = jax.jit(foo)  # JAX502
                for x in data:
                    _, g = step(params, x)
                    params = params - g
            return params

        def episode(params, x):
            @eqx.filter_jit  # JAX502
            def loss_fn(p, v):
                return jnp.sum(p * v)
            return eqx.filter_grad(loss_fn)(params, x)

        def built_once(params, data):
            def foo(p, x):
                return p * x
            step = jax.jit(foo)  # JAX502 (once per call of `built_once`, which `main` calls per item)
            for epoch in range(3):
                for x in data:
                    params = step(params, x)
            return params

        def last_build_reused(params, data):
            for scale in range(3):
                step = jax.jit(lambda p, x: p * x)
            for x in data:
                params = step(params, x)
            return params

        def make_schedule(n):
            return lambda count: count * n

        def per_sign():
            for n in [-1, 0]:
                schedule = jax.jit(make_schedule(n))  # one function per written-out value
                for count in range(3):
                    schedule(count)

        def grad_factory(x):
            @jax.jit
            def energy(p):
                return jnp.sum(p * x)
            return jax.grad(energy)

        def main(params, data):
            for x in data:
                params = params - episode(params, x)
                built_once(params, data)
                last_build_reused(params, data)
                grad_factory(x)
            return params
        """,
    "jit_rebuilt_instance_method": """
        import jax

        class Model:
            def apply(self, x):
                return x * 2

            @staticmethod
            def scale(x):
                return x * 3

        def run(xs):
            m = Model()
            step = jax.jit(m.apply)  # built once
            for x in xs:
                step(x)
                jax.jit(m.scale)(x)  # a staticmethod is one function object
                y = jax.jit(m.apply)(x)  # JAX502
            return y
        """,
    "jit_rebuilt_quiet": """
        import jax
        import jax.numpy as jnp

        def loss(w, x):
            return jnp.sum((x @ w) ** 2)

        _CACHE = {}

        def cached(n):
            if n not in _CACHE:
                _CACHE[n] = jax.jit(lambda x: x * n)
            return _CACHE[n]

        def run(w, xs):
            for x in xs:
                jax.jit(loss)(w, x)
                cached(3)(x)
            return w

        def init(model, key, x):
            return jax.jit(model.init)(key, x)  # called once

        @jax.jit
        def outer(x):
            inner = jax.jit(lambda y: y * 2)  # traced once with outer
            return inner(x)

        def main(xs):
            for x in xs:
                outer(x)
        """,
    # ---- JAX503 -------------------------------------------------------------------------------
    "unrolled_variants": """
        import jax
        import jax.numpy as jnp
        from jax import lax

        N = 10 ** 3

        @jax.jit
        def f(x):
            for i in range(N):  # JAX503
                x = x * 0.99
            for i in range(0, 2000, 10):  # JAX503
                x = x + i
            return x

        def g(x):
            def body(c, t):
                for _ in range(500):  # JAX503
                    c = c + t
                return c, c
            return lax.scan(body, x, jnp.arange(3))
        """,
    "unrolled_quiet": """
        import jax

        @jax.jit
        def f(x, n):
            for i in range(n):  # not a constant
                x = x + 1
            for i in range(10):
                x = x * 2
            return x

        @jax.vmap
        def g(x):
            for i in range(1000):  # vmap: traced once per call, nothing is compiled
                x = x + 1
            return x

        @jax.jit
        def gather_pattern(x):
            table = []
            for i in range(5000):  # builds a Python list at trace time: nothing is staged
                table.append((i * 7) % 13)
            return x[jax.numpy.array(table[:8])]
        """,
    "eager_lax_loops_rebuilt": """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def body(c, x):
            return c + x, c

        class Rollout:
            def __init__(self, w):
                self.w = w

            def _step(self, c, x):
                return c * self.w + x, c

            def run(self, xs):
                def step(c, x):
                    return jnp.tanh(c * self.w + x), c
                out = lax.scan(step, 0.0, xs)  # JAX502
                out = lax.scan(self._step, 0.0, xs)  # JAX502
                out = lax.fori_loop(0, 3, lambda i, c: c * self.w, out[0])  # JAX502
                return lax.scan(body, 0.0, xs)  # a module-level body: one compilation

        def main(w, batches):
            rollout = Rollout(w)
            for xs in batches:
                rollout.run(xs)

        def inner(xs, w):
            def step(c, x):
                return c * w + x, c
            return lax.scan(step, 0.0, xs)

        @jax.jit
        def staged(w, batches):
            for xs in batches:
                inner(xs, w)  # traced: the loops are part of one program
    """,
    "repeated_only_from_eager_code_quiet": """
        import flax.linen as nn
        import jax
        import jax.numpy as jnp
        from jax import lax
        from models import Base

        def merge(a, b):
            def step(c, x):
                return c + x, c
            return lax.scan(step, a, b)[0]

        class Block(Base):  # a base from another module: may be a framework module
            def __call__(self, xs):
                for x in xs:
                    merge(x, xs)
                return xs

        class Layer(nn.Module):
            @nn.compact
            def __call__(self, xs):
                for x in xs:
                    merge(x, xs)
                return xs

        def epoch(state, keys):
            for key in keys:
                merge(state, key)
            return state

        parallel_epoch = jax.pmap(epoch)  # handed to JAX: its loop runs traced

        def pick(use_merge):
            fn = merge if use_merge else jnp.add
            return [fn(x, x) for x in range(3)]
    """,
    "kept_and_once_per_pass_quiet": """
        import threading

        import jax
        import jax.numpy as jnp

        def make_actor(params):
            prepare = jax.jit(lambda xs: jnp.stack(xs))

            @jax.jit
            def act(obs):
                return jnp.tanh(obs @ params)

            def run(stream):
                for obs in stream:
                    act(prepare(obs))

            return run

        def start(params, streams):
            for stream in streams:
                threading.Thread(target=make_actor(params), args=(stream,)).start()

        def evaluate(eval_step, state, batches):
            metrics = []
            for batch in batches:
                metrics.append(eval_step(state, batch))
            return jax.pmap(lambda m: jax.lax.all_gather(m, "i"), "i")(metrics)

        def train(eval_step, state, batches, rounds):
            for _ in range(rounds):
                evaluate(eval_step, state, batches)
    """,
    "static_leaves_quiet": """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        class State(eqx.Module):
            step: int
            w: jax.Array

        @eqx.filter_jit
        def reset(state, x):
            return State(step=0, w=state.w - x)  # a constant: the same value after the first call

        @eqx.filter_jit
        def keep(state, x):
            return State(step=state.step, w=state.w - x)  # passed through

        @jax.jit
        def plain(state, x):
            return State(step=state.step + 1, w=state.w - x)  # `jax.jit` traces the int leaf

        def run(state, xs):
            for x in xs:
                state = reset(state, x)
                state = keep(state, x)
                state = plain(state, x)
            fresh = [keep(State(step=1, w=x), x) for x in xs]  # not fed back
            return state, fresh
    """,
    "signatures_quiet": """
        import functools

        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(x, scale):
            return x * scale

        def direct(x):
            a = step(x, 2.0)
            b = step(x, scale=2.0)  # both forms written at the calls: a visible choice
            return a, b

        @jax.jit
        def scaled(x, scale):
            return x * scale

        def bound_alike(x):
            half = functools.partial(scaled, scale=0.5)
            return scaled(x, scale=1.0), half(x)

        def carried_array(xs):
            total = jnp.zeros(3)
            for x in xs:
                total = step(total, 2.0) + x  # the result is not what is passed back
            count = 0
            for x in xs:
                count += 1
            return total, count
    """,
    "grouped_by_length_and_drawn_lengths": """
        from collections import defaultdict

        import jax
        import jax.numpy as jnp

        @jax.jit
        def encode(batch):
            return jnp.tanh(batch).sum(-1)

        def by_length(seqs):
            groups = defaultdict(list)
            for s in seqs:
                groups[len(s)].append(s)
            return [encode(jnp.stack(group)) for length, group in groups.items()]  # JAX501

        def by_shape(seqs):
            groups = {}
            for s in seqs:
                groups.setdefault(s.shape, []).append(s)
            for group in groups.values():
                encode(jnp.stack(group))  # JAX501

        def sample_lengths(rng, n):
            for _ in range(n):
                length = rng.integers(5, 50)
                yield rng.normal(size=(length, 8))

        def fixed_lengths(rng, n):
            length = rng.integers(5, 50)  # drawn once: one shape
            for _ in range(n):
                yield rng.normal(size=(length, 8))

        def stream(rng):
            for x in sample_lengths(rng, 10):
                encode(x)  # JAX501
            for x in fixed_lengths(rng, 10):
                encode(x)
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_recompilation_case(name):
    source = textwrap.dedent(CASES[name])
    found = {(f.start.row, f.code) for f in lint_source(source, f"{name}.py", RECOMPILATION)}
    assert found == marked(source)


UNROLLED = textwrap.dedent(
    """
    import jax

    @jax.jit
    def f(x):
        for i in range(300):
            x = x + i
        return x
    """
)


@pytest.mark.parametrize(
    "options,expected",
    [({}, 1), ({"unroll-threshold": 500}, 0), ({"unroll-threshold": 50}, 1), ({"unroll-threshold": "bad"}, 1)],
)
def test_unroll_threshold_option(options, expected):
    assert len(lint_source(UNROLLED, "a.py", {"JAX503"}, options)) == expected


def test_unroll_threshold_from_configuration(cli, make_files):
    make_files({"a.py": UNROLLED, "pyproject.toml": "[tool.jaxlint.options]\nunroll-threshold = 1000\n"})
    assert cli("check", "--select", "JAX503").code == 0
    make_files({"pyproject.toml": "[tool.jaxlint.options]\nunroll-threshold = 200\n"})
    assert cli("check", "--select", "JAX503", "--no-cache").code == 1


def test_unbucketed_message_names_the_argument():
    source = textwrap.dedent(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(tokens):
            return tokens.sum()

        def gen(tokens):
            for _ in range(5):
                f(tokens)
                tokens = jnp.concatenate([tokens, tokens[-1:]])
        """
    )
    (finding,) = lint_source(source, "a.py", {"JAX501"})
    assert "`tokens`" in finding.message and "grows" in finding.message and "bucket" in finding.message


@pytest.mark.skipif(sys.version_info < (3, 10), reason="`match` is Python 3.10 syntax")
def test_binding_in_a_match_case_of_the_loop_is_followed(cli, make_files):
    make_files(
        {
            "a.py": """
            import jax

            @jax.jit
            def score(x):
                return x.sum()

            def run(series, mode):
                for t in range(1, 10):
                    match mode:
                        case "prefix":
                            window = series[:t]
                        case _:
                            window = series[-t:]
                    score(window)
            """
        }
    )
    (finding,) = cli("check", "--select", "JAX501", "--output-format", "json").json
    assert finding["location"]["row"] == 15 and "`window`" in finding["message"]


def test_strided_phases_from_the_cli(cli, make_files):
    source = textwrap.dedent(CASES["strided_phases"])
    make_files({"a.py": source})
    out = cli("check", "--select", "JAX501", "--output-format", "json", "--isolated", "--no-cache")
    assert {(f["location"]["row"], f["code"]) for f in out.json} == marked(source)


def test_counter_grown_by_augmented_assignment_is_quiet_from_the_cli(cli, make_files):
    make_files(
        {
            "a.py": """
            import jax

            @jax.jit
            def step(i0, xs):
                return i0 + len(xs)

            def run(batches, n):
                i, xs = 0, []
                for b in batches:
                    step(i, b)
                    i += n
                hist = []
                for b in batches:
                    hist += [b]
                    step(0, hist)
            """
        }
    )
    (finding,) = cli("check", "--select", "JAX501", "--output-format", "json").json
    assert finding["location"]["row"] == 16 and "`hist`" in finding["message"]


def test_ragged_batches_from_a_loader_of_another_module(cli, make_files):
    """The loader is a generator of another module of the project: its yields are read there,
    whichever files are named."""
    make_files({
        "pkg/__init__.py": "",
        "pkg/data.py": textwrap.dedent("""
            def batches(x, rng):
                start = 0
                while start < len(x):
                    size = int(rng.integers(16, 64))
                    yield x[start:start + size]
                    start += size

            def fixed(x, bs):
                for i in range(0, len(x), bs):
                    yield x[i:i + bs]
            """),
        "pkg/train.py": textwrap.dedent("""
            import jax
            import jax.numpy as jnp

            from pkg.data import batches, fixed

            @jax.jit
            def step(w, x):
                return w - 0.1 * jnp.mean(x @ w)

            def train(w, x, rng):
                for xb in batches(x, rng):
                    w = step(w, xb)
                for xb in fixed(x, 32):
                    w = step(w, xb)
                return w
            """),
    })
    for named in ((), ("pkg/train.py",)):
        out = cli("check", *named, "--select", "JAX501", "--output-format", "json", "--isolated", "--no-cache")
        assert [(f["filename"].endswith("train.py"), f["location"]["row"]) for f in out.json] == [(True, 13)]
        assert "comes from `batches`" in out.json[0]["message"]


def test_ragged_batches_from_a_loader_compile_again():
    """What JAX501 says of a generator yielding slices of random sizes into a jitted step."""
    jax = pytest.importorskip("jax")
    np = pytest.importorskip("numpy")
    traces = []

    @jax.jit
    def step(w, x):
        traces.append(x.shape)
        return w - 0.1 * (x @ w).mean()

    def batches(x, rng):
        start = 0
        while start < len(x):
            size = int(rng.integers(16, 64))
            yield x[start:start + size]
            start += size

    w, x = np.ones(3), np.ones((400, 3))
    for xb in batches(x, np.random.default_rng(0)):
        w = step(w, xb)  # noqa: JAX501
    assert len(traces) > 5


def _count_traces(jit, make_step):
    jnp = pytest.importorskip("jax.numpy")
    traces = []

    def body(x):
        traces.append(1)
        return x * 2

    for _ in range(3):
        make_step(jit, body)(jnp.ones(3))
    return len(traces)


def test_jit_stored_on_each_instance_compiles_per_instance():
    """What JAX502 says of `self.step = jax.jit(self._step)` in a class built again and again."""
    jax = pytest.importorskip("jax")
    traces = []

    class Trainer:
        def __init__(self):
            self.step = jax.jit(self._step)  # noqa: JAX502

        def _step(self, x):
            traces.append(1)
            return x * 2

    for _ in range(3):
        Trainer().step(jax.numpy.ones(3))
    assert len(traces) == 3


def test_filter_jit_of_a_new_function_compiles_again():
    eqx = pytest.importorskip("equinox")
    assert _count_traces(eqx.filter_jit, lambda jit, body: jit(lambda x: body(x))) == 3
    assert _count_traces(eqx.filter_jit, lambda jit, body: jit(body)) == 1  # the same function


def test_filter_jit_of_a_new_function_under_filter_grad_compiles_again():
    """What JAX502 says of `eqx.filter_grad(loss_fn)(...)` where `loss_fn` is a new `@eqx.filter_jit` closure."""
    eqx = pytest.importorskip("equinox")
    jnp = pytest.importorskip("jax.numpy")
    traces = []

    def episode(x):
        @eqx.filter_jit  # noqa: JAX502
        def loss_fn(v):
            traces.append(1)
            return jnp.sum(v * 2.0)
        return eqx.filter_grad(loss_fn)(x)

    for _ in range(3):
        episode(jnp.ones(3))
    assert len(traces) == 3


def test_nnx_jit_compiles_again_even_for_the_same_function():
    nnx = pytest.importorskip("flax.nnx")
    assert _count_traces(nnx.jit, lambda jit, body: jit(body)) == 3


def test_boolean_mask_filter_compiles_per_length():
    """What JAX501 says of `f(x[x > t])` in a loop: one compilation per count of true entries."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    traces = []

    @jax.jit
    def score(x):
        traces.append(1)
        return (x ** 2).sum()

    x = jnp.arange(8.0)
    for t in (1.0, 3.0, 5.0):
        score(x[x > t])  # noqa: JAX501
    assert len(traces) == 3


def _compilations(jax, length, slices):
    """How many times one jitted function compiles for the slices of an array of `length`."""

    @jax.jit
    def place(values):
        return values.sum()

    x = jax.numpy.arange(float(length))
    for index in slices:
        place(x[index])
    return place._cache_size()


def test_strided_phases_compile_at_most_twice():
    """Why JAX501 is quiet on `f(x[c::n])` for `c` in `range(n)`: the phases of a stride have
    one length when `n` divides `len(x)` and at most two otherwise; a stop that follows the loop
    (`x[:t:2]`) gives a new length, and a new compilation, every iteration."""
    jax = pytest.importorskip("jax")
    assert _compilations(jax, 36, [slice(c, None, 4) for c in range(4)]) == 1
    assert _compilations(jax, 37, [slice(c, None, 4) for c in range(4)]) == 2
    assert _compilations(jax, 36, [slice(None, t, 2) for t in range(2, 12, 2)]) == 5


def test_batch_bounds_through_names_compile_at_most_twice():
    """Why JAX501 is quiet on `start = i * bs; end = (i + 1) * bs; f(x[start:end])`: the batches
    have one length (two with a partial last batch), while `end = (i + 1) * bs` after `start = 0`
    grows every iteration."""
    jax = pytest.importorskip("jax")
    batch_size = 8
    fixed = []
    for i in range(5):
        start = i * batch_size
        end = (i + 1) * batch_size
        fixed.append(slice(start, end))
    assert _compilations(jax, 40, fixed) == 1
    assert _compilations(jax, 36, fixed) == 2  # the partial last batch
    assert _compilations(jax, 40, [slice(0, (i + 1) * batch_size) for i in range(5)]) == 5


def test_jit_rebuilt_in_a_callback_compiles_per_call():
    """What JAX502 says of a callback that jits a new lambda on each call and is called on every
    step of the loop it is handed to: one compilation per step."""
    jax = pytest.importorskip("jax")
    from compile_counts import counting_compiles

    def evaluate(params, x):
        return jax.jit(lambda x: (params * x).sum())(x)  # noqa: JAX502

    def train(params, x, steps, eval_fn):
        for _ in range(steps):
            params = params - 0.1 * x
            eval_fn(params, x)
        return params

    with counting_compiles(jax) as compiles:
        train(jax.numpy.ones(3), jax.numpy.ones(3), 4, eval_fn=evaluate)
    assert sum("lambda" in name for name in compiles) == 4


def test_growing_list_argument_compiles_per_length():
    """What JAX501 says of a list that grows, passed to a jitted function: one compilation per length."""
    jax = pytest.importorskip("jax")
    traces = []

    @jax.jit
    def total(xs):
        traces.append(1)
        return sum(x.sum() for x in xs)

    history = []
    for _ in range(3):
        history.append(jax.numpy.ones(2))
        total(history)  # noqa: JAX501
    assert len(traces) == 3


def test_python_int_argument_compiles_once():
    """Why JAX501 is quiet on `i = 0 ... f(i); i += n`: a non-static Python int is traced as a
    scalar, so every value of the counter reuses one compilation."""
    jax = pytest.importorskip("jax")

    @jax.jit
    def step(i0, state):
        return state + i0

    state, i = jax.numpy.zeros(()), 0
    while i <= 120:
        state = step(i, state)
        i += 50
    assert step._cache_size() == 1


def test_a_jitted_call_through_a_helper_compiles_per_size():
    """What JAX501 says of a helper that hands its parameter to a jitted function, called in a
    loop with arrays of different sizes: each size compiles again."""
    jax = pytest.importorskip("jax")

    @jax.jit
    def model_apply(frames):
        return frames.mean()

    def inference(frames):
        return model_apply(frames)

    for n in (2, 3, 4):
        inference(jax.numpy.ones((n, 8)))
    assert model_apply._cache_size() == 3


def test_numpy_draws_sized_by_the_loop_compile_per_size():
    """What JAX501 says of `jnp.asarray(rng.normal(size=n))` with `n` changing per iteration:
    NumPy's `size=` is the shape, so each new size compiles again; a fixed size compiles once."""
    jax = pytest.importorskip("jax")
    import numpy as np

    @jax.jit
    def total(x):
        return x.sum()

    rng = np.random.default_rng(0)
    for n in range(1, 4):
        total(jax.numpy.asarray(rng.normal(size=n)))  # noqa: JAX501
    assert total._cache_size() == 3
    for _ in range(3):
        total(jax.numpy.asarray(rng.normal(size=8)))
    assert total._cache_size() == 4


def test_list_grown_by_augmented_assignment_compiles_per_length():
    """What JAX501 says of `xs += [x]` in a loop, with `xs` passed to a jitted function."""
    jax = pytest.importorskip("jax")

    @jax.jit
    def total(xs):
        return sum(x.sum() for x in xs)

    xs = []
    for _ in range(3):
        xs += [jax.numpy.ones(2)]
        total(xs)  # noqa: JAX501
    assert total._cache_size() == 3


def test_jit_of_equal_callables_still_compiles_again():
    """What JAX502 says of a new callable per iteration, even one with `__eq__`/`__hash__`: each
    `jax.jit` of a new object traces again (the cache is per function object)."""
    jax = pytest.importorskip("jax")
    traces = []

    class Keyed:
        def __init__(self, c):
            self.c = c

        def __eq__(self, other):
            return isinstance(other, Keyed) and self.c == other.c

        def __hash__(self):
            return hash(self.c)

        def __call__(self, x):
            traces.append(1)
            return x * self.c

    for _ in range(3):
        jax.jit(Keyed(2.0))(jax.numpy.ones(2))  # noqa: JAX502
    assert len(traces) == 3


def test_jit_rebuilt_per_epoch_or_called_through_grad_from_the_cli(cli, make_files):
    source = textwrap.dedent(CASES["jit_rebuilt_per_epoch_or_called_through_grad"])
    make_files({"train.py": source})
    out = cli("check", "--output-format", "json", "--select", "JAX5", "--isolated", "--no-cache")
    assert {(f["location"]["row"], f["code"]) for f in out.json} == marked(source)
