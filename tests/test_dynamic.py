"""`--dynamic` confirmation per category: real bugs are confirmed, JAX-accepted look-alikes are not.

Each fixture marks its finding lines with `# expect: CODE STATUS [words the detail must contain]`;
findings are built directly from those markers, so these tests do not depend on the static rules.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dynamic_expect import EXPECT, expectations
from jaxlint.findings import Finding, Position

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")


FIXTURES = {
    "tracing.py": '''
        import jax
        import jax.numpy as jnp


        @jax.jit
        def clip(x, limit):
            norm = jnp.linalg.norm(x)
            if norm > limit:  # expect: JAX101 confirmed TracerBoolConversionError
                x = x * (limit / norm)
            return x


        @jax.jit
        def safe_clip(x, limit):
            norm = jnp.linalg.norm(x)
            if x.ndim > 1:  # expect: JAX101 not-reproduced under a JAX trace
                x = x.reshape(-1)
            return jnp.where(norm > limit, x * (limit / norm), x)


        def helper(v):
            return int(v.sum())  # expect: JAX102 confirmed ConcretizationTypeError


        @jax.jit
        def uses_helper(v):
            return jnp.zeros(3) + helper(v)


        def smooth_l1(r, beta=1.0):
            if r.mean() < beta:  # expect: JAX101 inconclusive concrete jax.grad
                return 0.5 * (r ** 2).mean()
            return r.mean()


        scaled = jax.jit(lambda x, s: x * s if s > 0 else x)  # expect: JAX101 confirmed TracerBoolConversionError


        def make_step(lr):
            @jax.jit
            def step(w, g):
                if g.sum() > 0:  # expect: JAX101 confirmed the function make_step() returned
                    return w - lr * g
                return w
            return step


        def main():
            print(jax.grad(smooth_l1)(jnp.ones(3)))
            print(safe_clip(jnp.ones(3), 1.0))


        if __name__ == "__main__":
            main()
    ''',
    # An eager run first, then a traced one that stops before the later lines: they ran, but never
    # under a trace, so nothing says their tracing bug is not there.
    "stopped.py": '''
        import jax
        import jax.numpy as jnp


        def check(x):
            assert jnp.all(x > -1)  # expect: JAX104 confirmed TracerBoolConversionError
            assert jnp.all(x < 1)  # expect: JAX104 inconclusive only outside stopped while JAX traced line 6
            n = int(jnp.ceil(x.sum()))  # expect: JAX105 inconclusive only outside TracerBoolConversionError
            return x * n


        def main():
            check(jnp.zeros(3))
            jax.jit(check)(jnp.zeros(3))


        if __name__ == "__main__":
            main()
    ''',
    "randomness.py": '''
        import numpy as np
        import jax
        import jax.numpy as jnp


        def noisy(key, x):
            a = jax.random.normal(key, x.shape)  # expect: JAX201 inconclusive first
            b = jax.random.uniform(key, x.shape)  # expect: JAX201 confirmed KeyReuseError
            return x + a + b


        def split_ok(key, x):
            key, sub = jax.random.split(key)
            a = jax.random.normal(sub, x.shape)  # expect: JAX201 not-reproduced
            return x + a, key


        @jax.jit
        def jitter(x):
            scale = np.random.uniform(0.5, 1.5)  # expect: JAX205 confirmed stateful random
            return x * scale


        def sample_noise(shape):
            key = jax.random.PRNGKey(42)  # expect: JAX204 confirmed same PRNG key
            return jax.random.normal(key, shape)


        def main():
            a, b = sample_noise((2,)), sample_noise((2,))
            print(split_ok(jax.random.key(1), a))
            key = jax.random.PRNGKey(0)
            x = jax.random.normal(key, (3,))
            y = jax.random.normal(key, (3,))  # expect: JAX201 confirmed KeyReuseError
            print(x + y)


        if __name__ == "__main__":
            main()
    ''',
    "jit_arguments.py": '''
        from functools import partial

        import equinox as eqx
        import jax
        import jax.numpy as jnp


        @partial(jax.jit, static_argnums=(1,))
        def pad(x, sizes):  # expect: JAX302 confirmed Non-hashable
            return jnp.pad(x, (0, sum(sizes)))


        @partial(jax.jit, static_argnames=("n",))
        def repeat(x, n):  # expect: JAX303 confirmed compiled repeat 5 times
            return jnp.tile(x, n)


        @partial(jax.jit, static_argnames=("n",))
        def repeat_fixed(x, n):  # expect: JAX303 not-reproduced once
            return jnp.tile(x, n)


        @partial(jax.jit, donate_argnums=(0,))
        def step(w, g):
            return w - 0.1 * g


        @jax.jit
        def trainable(params, mask):
            return eqx.partition(params, filter_spec=mask)[0]  # expect: JAX310 confirmed cannot be traced


        @partial(jax.jit, static_argnames=("mask",))
        def trainable_static(params, mask):
            return eqx.partition(params, filter_spec=mask)[0]  # expect: JAX310 inconclusive


        @jax.jit
        def totals(x, keep):
            return jnp.sum(x, axis=0, keepdims=keep)  # expect: JAX310 confirmed traced


        class Model:
            def __init__(self, scale):
                self.scale = scale

            @jax.jit
            def apply(self, x):  # expect: JAX305 confirmed abstract array
                return x * self.scale


        def main():
            w, g = jnp.ones(3), jnp.ones(3)
            for n in range(1, 6):
                repeat(jnp.ones(2), n)
                repeat_fixed(jnp.ones(2), 2)
            trainable_static((w, g), mask=(True, False))
            w = step(w, g)  # expect: JAX304 inconclusive outside
            w2 = step(w, g)  # expect: JAX304 confirmed donated
            try:
                pad(jnp.ones(2), [1, 2])
            finally:
                print(w.sum() + w2.sum())


        if __name__ == "__main__":
            main()
    ''',
    "purity.py": '''
        import logging

        import jax
        import jax.numpy as jnp

        log = logging.getLogger("purity")
        seen = []
        calls = 0


        @jax.jit
        def step(x):
            global calls
            calls += 1  # expect: JAX406 confirmed only while JAX traced the module's globals
            print("step", x)  # expect: JAX404 confirmed jit tracer instead of a value
            log.debug("step %s", x)  # expect: JAX405 confirmed
            seen.append(x)  # expect: JAX407 confirmed leaked tracer
            jax.debug.print("x = {}", x)  # expect: JAX404 not-reproduced wrote no output
            local = []
            local.append(x)  # expect: JAX407 inconclusive cannot be followed
            return x + 1


        def update(table, i, v):
            table[i] = v  # expect: JAX401 confirmed item assignment
            return table


        class Tracker:
            def log(self, data):
                return data


        tracker = Tracker()


        class Box:
            value = None


        @jax.jit
        def report(x):
            tracker.log({"x": x})  # expect: JAX405 inconclusive does not listen
            box = Box()
            box.value = x * 2  # expect: JAX407 not-reproduced left no tracer
            return box.value


        class Cell:
            def __init__(self):
                self.last = None

            def __call__(self, h, x):
                h = jnp.tanh(h + x)  # expect: JAX407 inconclusive
                self.last = h  # expect: JAX407 confirmed leaked tracer in a Cell
                return h, h


        class Env:
            def __init__(self):
                self.scale = jnp.ones(())

            @property
            def unwrapped(self):
                return self


        class Randomized:
            def __init__(self, env):
                self.env = env

            def _with(self, scale):
                env = self.env
                env.unwrapped.scale = scale  # expect: JAX407 confirmed leaked tracer BatchTracer in a Env
                return env

            def reset(self, scales):
                return jax.vmap(lambda s: self._with(s).scale * 2)(scales)


        class Counter:
            def __init__(self):
                self.calls = 0

            def __call__(self, x):
                self.calls += 1  # expect: JAX407 not-reproduced re-traced
                return x * 2


        def main():
            for _ in range(2):
                step(jnp.ones(2))
                report(jnp.ones(2))
            print(calls)  # expect: JAX404 inconclusive only outside JAX transformations
            cell = Cell()
            counter = Counter()
            for _ in range(2):
                jax.vmap(counter)(jnp.ones(3))
            Randomized(Env()).reset(jnp.ones(3))
            jax.jit(lambda h, xs: jax.lax.scan(cell, h, xs))(jnp.zeros(2), jnp.ones((3, 2)))
            print(jnp.sum(cell.last))  # expect: JAX407 confirmed UnexpectedTracerError


        if __name__ == "__main__":
            main()
    ''',
    "recompilation.py": '''
        import jax
        import jax.numpy as jnp


        @jax.jit
        def total(x):
            return x.sum()


        @jax.jit
        def unrolled(x):
            for i in range(200):  # expect: JAX503 confirmed unrolled
                x = x + i
            return x


        @jax.jit
        def rolled(x):
            for i in range(3):  # expect: JAX503 not-reproduced once in 3 calls ran 3 times per trace
                x = x + i
            return x


        def run_all():
            out = []
            for n in range(2, 8):
                out.append(total(jnp.ones(n)))  # expect: JAX501 confirmed compiled total 6 times
            for _ in range(5):
                out.append(total(jnp.ones(4)))  # expect: JAX501 not-reproduced
            for k in range(4):
                f = jax.jit(lambda x: x * k)
                out.append(f(jnp.ones(3)))  # expect: JAX502 confirmed compiled <lambda>
            scaled = jax.jit(lambda x: x * 2)
            for _ in range(4):
                out.append(scaled(jnp.ones(3)))  # expect: JAX502 not-reproduced once
            return out


        def main():
            run_all()
            unrolled(jnp.ones(2))
            for _ in range(3):
                rolled(jnp.ones(2))


        if __name__ == "__main__":
            main()
    ''',
    # Verdicts that once went wrong on true bugs.
    "regressions.py": '''
        from functools import partial

        import jax
        import jax.numpy as jnp


        @jax.jit
        def train_step(w, g):
            w = w - 0.05 * g
            print(f"grad norm {jnp.linalg.norm(g):.3f}")  # expect: JAX404 confirmed TypeError formatting
            return w


        @partial(jax.jit, donate_argnums=(0,))
        def residual(h, skip):
            return h * 2 + skip


        def block(h):
            return residual(h, h)  # expect: JAX305 confirmed previously donated


        def noise(key, shape):
            return jax.random.normal(key, shape)


        def sample(key):
            a = noise(key, (3,))
            b = jax.random.uniform(key, (3,))  # expect: JAX201 confirmed KeyReuseError
            return a + b


        def resample(key):
            a = jax.random.uniform(key, (3,))
            return a + noise(key, (3,))  # expect: JAX201 confirmed KeyReuseError


        def main():
            train_step(jnp.ones(3), jnp.ones(3))
            block(jnp.ones(3))
            sample(jax.random.PRNGKey(0))


        if __name__ == "__main__":
            main()
    ''',
}


@pytest.fixture(scope="module")
def confirmed(tmp_path_factory):
    """One confirm() call over every fixture (files run in parallel), keyed by (file, row)."""
    from jaxlint.dynamic import confirm

    root = tmp_path_factory.mktemp("dynamic")
    expected = []
    for name, text in FIXTURES.items():
        path = root / name
        path.write_text(textwrap.dedent(text).lstrip())
        expected += expectations(path)
    findings = [f for f, _, _ in expected]
    results = confirm(findings, backend="cpu", timeout=60, settings={}, show_progress=False)
    assert [r.start for r in results] == [f.start for f in findings]
    return {(Path(r.path).name, r.start.row): r for r in results}, expected


def _cases():
    cases = []
    for name, text in FIXTURES.items():
        for row, line in enumerate(textwrap.dedent(text).lstrip().splitlines(), start=1):
            if EXPECT.search(line):
                cases.append(pytest.param(name, row, id=f"{name}:{row}"))
    return cases


@pytest.mark.parametrize("name,row", _cases())
def test_verdict(confirmed, name, row):
    results, expected = confirmed
    finding, status, words = next(e for e in expected if Path(e[0].path).name == name and e[0].start.row == row)
    got = results[(name, row)].confirmation
    assert got["status"] == status, got["detail"]
    for word in words:
        assert word in got["detail"], got["detail"]
    assert "\n" not in got["detail"] and "[cpu]" not in got["detail"]
    assert "on cpu" in got["detail"] or status == "inconclusive"


def test_stubs_unreadable_notebooks_and_linter_findings_are_inconclusive(tmp_path):
    from jaxlint.dynamic import confirm

    stub = Finding("JAX101", "x", "m", str(tmp_path / "a.pyi"), Position(1, 1), Position(1, 2))
    nb = Finding("JAX101", "x", "m", str(tmp_path / "a.ipynb"), Position(1, 1), Position(1, 2), cell=1)
    parse = Finding("JAX001", "x", "m", str(tmp_path / "b.py"), Position(1, 1), Position(1, 2))
    out = confirm([stub, nb, parse], backend=None, timeout=5, settings={}, show_progress=False)
    assert [f.confirmation["status"] for f in out] == ["inconclusive"] * 3
    assert "notebook could not be read" in out[1].confirmation["detail"]
    assert {f.confirmation["backend"] for f in out} == {None}


def test_factory_from_settings_supplies_arguments(tmp_path):
    """A declared factory's arguments reach the probe (nothing else can build a Config)."""
    from jaxlint.dynamic import confirm

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "model.py").write_text(textwrap.dedent('''
        from functools import partial

        import jax


        class Config:
            def __init__(self, limit):
                self.limit = limit


        @partial(jax.jit, static_argnums=0)
        def forward(cfg: Config, x):
            if x.sum() > cfg.limit:  # expect: JAX101 confirmed TracerBoolConversionError
                return x
            return -x
    ''').lstrip())
    (tmp_path / "factories.py").write_text(textwrap.dedent('''
        import jax.numpy as jnp

        from model import Config


        def forward_args():
            return (Config(2.0), jnp.ones(3)), {}
    ''').lstrip())
    [(finding, status, words)] = expectations(tmp_path / "model.py")
    settings = {"model:forward": "factories:forward_args"}
    [out] = confirm([finding], backend="cpu", timeout=60, settings=settings, show_progress=False)
    assert out.confirmation["status"] == status, out.confirmation["detail"]
    [plain] = confirm([finding], backend="cpu", timeout=60, settings={}, show_progress=False)
    assert plain.confirmation["status"] == "inconclusive", plain.confirmation["detail"]


def test_importing_the_package_does_not_import_jax():
    code = "import sys, jaxlint.dynamic; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "False"


def test_missing_file_keeps_its_finding(tmp_path):
    from jaxlint.dynamic import confirm

    ghost = Finding("JAX101", "x", "m", str(tmp_path / "gone" / "ghost.py"), Position(3, 1), Position(3, 2))
    [out] = confirm([ghost], backend="cpu", timeout=20, settings={}, show_progress=False)
    assert out.code == "JAX101" and out.confirmation["status"] == "inconclusive"


def test_recompiles_without_static_arguments_are_not_a_jit_argument_problem(tmp_path):
    """A closure rebuilt per call recompiles (a recompilation bug), but no static argument is involved."""
    from jaxlint.dynamic import confirm

    path = tmp_path / "closure.py"
    path.write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp


        def metrics(x):
            @jax.jit  # expect: JAX501 confirmed compiled
            def inner(x):
                return x.sum()
            return inner(x)


        def main():
            for _ in range(4):
                metrics(jnp.ones(3))


        if __name__ == "__main__":
            main()
    ''').lstrip())
    [(finding, status, words)] = expectations(path)
    as_jit_argument = finding.with_(code="JAX301")
    out = confirm([finding, as_jit_argument], backend="cpu", timeout=60, settings={}, show_progress=False)
    assert out[0].confirmation["status"] == "confirmed", out[0].confirmation["detail"]
    assert out[1].confirmation["status"] == "inconclusive", out[1].confirmation["detail"]
    assert "never compiled" not in out[1].confirmation["detail"]
