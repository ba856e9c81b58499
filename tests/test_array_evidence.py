"""JAX401 and what overrides "`.at[...]` shows a JAX array": an `isinstance` test that shows the
value is not one, and a value made by calling a class of the module or the project (an array
wrapper may offer `.at` and item assignment both). The quiet programs run under JAX; the
look-alikes that stay reported raise JAX's `TypeError`.
"""

from __future__ import annotations

import textwrap

import pytest

from quiet_and_reported import case_tests

QUIET = {
    "result_of_a_lambda_returning_numpy": """
        import numpy as np

        zeros = lambda n: np.zeros(n)

        def demo():
            x = zeros(3)
            x[0] = 1.0
            return x
        """,
    "a_cond_returning_a_list_of_arrays": """
        import jax
        import jax.numpy as jnp

        def demo():
            parts = jax.lax.cond(True, lambda: [jnp.zeros(2), jnp.ones(2)], lambda: [jnp.ones(2), jnp.zeros(2)])
            parts[0] = jnp.full(2, 3.0)
            return parts
        """,
    "a_cast_equality_of_numpy_values": """
        import numpy as np

        def bounds(arr):
            start = (arr != np.roll(arr, 1)).astype(np.int32)
            start[0] = 1
            return start

        def demo():
            return bounds(np.array([1, 1, 2]))
        """,
    "field_a_parameter_annotation_declares_a_numpy_array": """
        import dataclasses
        import numpy as np

        @dataclasses.dataclass
        class Table:
            values: np.ndarray

        def fill_one(table: Table, src, dst):
            arr = table.values
            arr[dst] = arr[src]
            return arr

        def demo():
            return fill_one(Table(np.arange(3.0)), 0, 1)
        """,
    "numpy_copy_of_a_lax_linalg_factor": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        def shifted(a):
            t, z = jax.lax.linalg.schur(a)
            t = np.array(t)
            t[0, 0] += 1.0
            return t

        def demo():
            return shifted(jnp.eye(3))
        """,
    "numpy_branch": """
        import jax.numpy as jnp
        import numpy as np

        def move_row(arr, src, dst):
            if isinstance(arr, np.ndarray):
                arr[dst] = arr[src]  # a NumPy array: written in place
                return arr
            return arr.at[dst].set(arr[src])

        def demo():
            return move_row(np.arange(3), 0, 2), move_row(jnp.arange(3), 0, 2)
        """,
    "early_return_for_jax_arrays": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        def set_first(arr, v):
            if isinstance(arr, jax.Array):
                return arr.at[0].set(v)
            arr[0] = v
            return arr

        def demo():
            return set_first(np.zeros(3), 1.0), set_first(jnp.zeros(3), 1.0)
        """,
    "negated_test": """
        import jax.numpy as jnp
        import numpy as np

        def set_first(arr, v):
            if not isinstance(arr, jnp.ndarray):
                arr[0] = v
                return arr
            return arr.at[0].set(v)

        def demo():
            return set_first(np.zeros(3), 1.0), set_first(jnp.zeros(3), 1.0)
        """,
    "test_in_a_conjunction": """
        import jax.numpy as jnp
        import numpy as np

        def set_first(arr, v, in_place):
            if isinstance(arr, (np.ndarray, np.generic)) and in_place:
                arr[0] = v
                return arr
            return arr.at[0].set(v)

        def demo():
            return set_first(np.zeros(3), 1.0, True), set_first(jnp.zeros(3), 1.0, False)
        """,
    "dict_from_a_jitted_function": """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def stats(x):
            return {"mean": jnp.mean(x), "max": jnp.max(x)}

        def demo():
            out = stats(jnp.ones(3))
            out["mean"] = 0.0
            return out
        """,
    "scipy_sparse_branch": """
        import jax.numpy as jnp
        import numpy as np
        from scipy import sparse

        def set_first(m, v):
            if isinstance(m, sparse.lil_matrix):
                m[0, 0] = v
                return m
            return m.at[0, 0].set(v)

        def demo():
            return set_first(sparse.lil_matrix((2, 2)), 1.0), set_first(jnp.zeros((2, 2)), 1.0)
        """,
    "numpy_branch_under_jit": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def clear_first_column(x):
            if isinstance(x, np.ndarray):  # never taken: a tracer is no NumPy array
                x[:, 0] = 0.0
                return x
            return x.at[:, 0].set(0.0)

        def demo():
            return clear_first_column(jnp.ones((2, 2)))
        """,
    "negated_jax_test_under_jit": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def clear_first_column(x, scale):
            if not isinstance(x, (np.ndarray, np.generic)) or not isinstance(scale, float):
                return x.at[:, 0].set(0.0) * scale
            x[:, 0] = 0.0
            return x * scale

        def demo():
            return clear_first_column(jnp.ones((2, 2)), 2.0)
        """,
    "wrapper_class_of_the_module": """
        import jax.numpy as jnp

        class Wrapper:
            def __init__(self, value):
                self.value = jnp.asarray(value)

            def __setitem__(self, index, v):
                self.value = self.value.at[index].set(v)

            @property
            def at(self):
                return self.value.at

        def demo():
            a = Wrapper([1.0, 2.0, 3.0])
            a[0] = 99.0  # the wrapper's own `__setitem__`
            updated = a.at[1].set(0.0)
            a[2] = 7.0
            return updated, a.value
        """,
}

REPORTED = {
    # What a call returns is what the function the module's resolver says it runs returns.
    "result_of_a_lambda_bound_to_a_name": (
        """
        import jax.numpy as jnp

        zeros = lambda n: jnp.zeros(n)

        def demo():
            x = zeros(3)
            x[0] = 1.0
            return x
        """,
        "JAX401",
        "TypeError",
    ),
    "result_of_a_name_bound_to_a_jit": (
        """
        import jax
        import jax.numpy as jnp

        def scale(x):
            return x * 2.0

        double = jax.jit(scale)

        def demo():
            y = double(jnp.ones(3))
            y[1] = 2.0
            return y
        """,
        "JAX401",
        "TypeError",
    ),
    "result_of_the_function_a_factory_returns": (
        """
        import jax.numpy as jnp

        def make_init(n):
            def init():
                return jnp.zeros(n)
            return init

        def demo():
            init = make_init(3)
            x = init()
            x[0] = 1.0
            return x
        """,
        "JAX401",
        "TypeError",
    ),
    "a_cast_equality_with_a_jax_array": (
        """
        import jax.numpy as jnp
        import numpy as np

        def bounds(arr):
            start = (arr != jnp.roll(arr, 1)).astype(jnp.int32)  # NumPy's array too: JAX's wins
            start[0] = 1
            return start

        def demo():
            return bounds(np.array([1, 1, 2]))
        """,
        "JAX401",
        "TypeError",
    ),
    "field_a_parameter_annotation_declares_an_array": (
        """
        import dataclasses
        import jax
        import jax.numpy as jnp

        @dataclasses.dataclass
        class ForceField:
            v1: jax.Array
            n: int

        def fill_one(ff: ForceField, src, dst):
            arr = ff.v1
            arr[dst] = arr[src]
            return arr

        def demo():
            return fill_one(ForceField(jnp.arange(3.0), 3), 0, 1)
        """,
        "JAX401",
        "TypeError",
    ),
    "factor_of_a_lax_linalg_decomposition": (
        """
        import jax
        import jax.numpy as jnp

        def shifted(a):
            t, z = jax.lax.linalg.schur(a)
            t[0, 0] += 1.0
            return t

        def demo():
            return shifted(jnp.eye(3))
        """,
        "JAX401",
        "TypeError",
    ),
    "result_of_a_jitted_function": (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def update(f_k):
            return jnp.sin(f_k)

        def demo():
            y = update(jnp.zeros(3))
            y[1] = 3.0
            return y
        """,
        "JAX401",
        "TypeError",
    ),
    "write_after_at_use": (
        """
        import jax.numpy as jnp

        def update(arr, v):
            first = arr.at[0].get()
            arr[1] = v
            return first

        def demo():
            return update(jnp.zeros(3), 1.0)
        """,
        "JAX401",
        "TypeError",
    ),
    "true_branch_of_a_jax_test": (
        """
        import jax
        import jax.numpy as jnp

        def set_first(values, v):
            x = jnp.asarray(values)
            if isinstance(x, jax.Array):
                x[0] = v
            return x

        def demo():
            return set_first([0.0, 1.0], 2.0)
        """,
        "JAX401",
        "TypeError",
    ),
    "test_of_another_name": (
        """
        import jax.numpy as jnp
        import numpy as np

        def set_first(arr, mask, v):
            if isinstance(mask, np.ndarray):
                arr[0] = v
            return arr.at[1].set(v)

        def demo():
            return set_first(jnp.zeros(3), np.ones(3), 1.0)
        """,
        "JAX401",
        "TypeError",
    ),
    "test_in_a_disjunction": (
        """
        import jax.numpy as jnp
        import numpy as np

        def set_first(arr, v):
            if isinstance(arr, np.ndarray) or v > 0:
                arr[0] = v
            return arr.at[1].set(v)

        def demo():
            return set_first(jnp.zeros(3), 1.0)
        """,
        "JAX401",
        "TypeError",
    ),
    "else_of_a_numpy_branch_under_jit": (
        """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def clear_first_column(x):
            if isinstance(x, np.ndarray):
                return x
            x[:, 0] = 0.0
            return x

        def demo():
            return clear_first_column(jnp.ones((2, 2)))
        """,
        "JAX401",
        "TypeError",
    ),
    "jax_numpy_imported_as_np_under_jit": (
        """
        import jax
        import jax.numpy as np

        @jax.jit
        def clear_first_column(x):
            if isinstance(x, np.ndarray):  # `jax.numpy.ndarray`: every tracer is one
                x[:, 0] = 0.0
            return x

        def demo():
            return clear_first_column(np.ones((2, 2)))
        """,
        "JAX401",
        "TypeError",
    ),
    "container_branch_under_jit": (
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def clear_first(x, i):
            if isinstance(x, (list, tuple)):  # a list of tracers is still traced
                x = list(x)
                x[i] = 0.0
                return x
            return x.at[i].set(0.0)

        def demo():
            return clear_first([jnp.ones(2), jnp.ones(2)], 0)
        """,
        "JAX401",
        "TypeError",
    ),
    # Every leaf a branch of `lax.cond` or `lax.switch` returns comes back a JAX array.
    "result_of_a_switch_whose_branches_return_arrays": (
        """
        import jax
        import jax.numpy as jnp

        def demo():
            legal = jax.lax.switch(1, [lambda: jnp.bool_([1, 1, 0]), lambda: jnp.bool_([1, 1, 1])])
            legal[1] = False
            return legal
        """,
        "JAX401",
        "TypeError",
    ),
    "result_of_a_cond_whose_branches_are_functions_returning_arrays": (
        """
        import jax
        import jax.numpy as jnp

        def low():
            return jnp.zeros(3)

        def high():
            return jnp.ones(3)

        def demo():
            x = jax.lax.cond(True, low, high)
            x[0] = 2.0
            return x
        """,
        "JAX401",
        "TypeError",
    ),
    "object_test": (
        """
        import jax.numpy as jnp

        def set_first(arr, v):
            if isinstance(arr, object):  # every JAX array is an object
                arr[0] = v
            return arr.at[1].set(v)

        def demo():
            return set_first(jnp.zeros(3), 1.0)
        """,
        "JAX401",
        "TypeError",
    ),
}

(
    test_quiet_case_stays_quiet,
    test_reported_case_is_reported,
    test_jax_runs_the_quiet_case,
    test_jax_rejects_the_reported_case,
) = case_tests(QUIET, REPORTED)


# einops returns an array of its first operand's kind: a JAX array for a JAX array, a NumPy array
# for a NumPy one (which takes item assignment).
EINOPS_QUIET = {
    "einops_of_a_numpy_array": """
        import einops
        import numpy as np

        def rotate_half(x):
            x = einops.rearrange(x, "... (i n) -> ... i n", i=2)
            x[..., 0, :] *= -1
            return einops.rearrange(x, "... i n -> ... (i n)")

        def demo():
            return rotate_half(np.ones((2, 4)))
        """,
}
EINOPS_REPORTED = {
    "einops_of_a_jax_array": (
        """
        import einops
        import jax
        import jax.numpy as jnp

        def rotate_half(x: jax.Array) -> jax.Array:
            x = einops.rearrange(x, "... (i n) -> ... i n", i=2)
            x[..., 0, :] *= -1  # JAX401
            return einops.rearrange(x, "... i n -> ... (i n)")

        def demo():
            return rotate_half(jnp.ones((2, 4)))
        """,
        "JAX401",
        "TypeError",
    ),
    "einsum_of_traced_arrays_branched_on": (
        """
        import einops
        import jax
        import jax.numpy as jnp

        @jax.jit
        def attend(q, k):
            scores = einops.einsum(q, k, "s d, t d -> s t")
            if scores.max() > 10:  # JAX101
                scores = scores / 10
            return scores

        def demo():
            return attend(jnp.ones((2, 3)), jnp.ones((4, 3)))
        """,
        "JAX101",
        "TracerBoolConversionError",
    ),
}

(
    test_einops_quiet_case_stays_quiet,
    test_einops_reported_case_is_reported,
    test_jax_runs_the_einops_quiet_case,
    test_jax_rejects_the_einops_reported_case,
) = case_tests(EINOPS_QUIET, EINOPS_REPORTED, needs=("jax", "einops"))


def test_a_jax_array_is_no_numpy_array():
    """What the narrowing rests on: a JAX array is an instance of `jax.Array` and of no NumPy type."""
    jax = pytest.importorskip("jax")
    np = pytest.importorskip("numpy")
    x = jax.numpy.zeros(3)
    assert isinstance(x, jax.Array) and isinstance(x, jax.numpy.ndarray)
    assert not isinstance(x, (np.ndarray, np.generic))
    assert not isinstance(np.zeros(3), jax.Array)


def test_a_tracer_is_no_numpy_or_python_scalar():
    """What the branch reading under `jit` rests on: a traced value, or a container of them, is
    an instance of no NumPy type nor of a Python scalar type, so such a branch is not taken."""
    jax = pytest.importorskip("jax")
    np = pytest.importorskip("numpy")
    concrete = (np.ndarray, np.generic, np.number, int, float, bool, complex, str, bytes)
    seen = []

    @jax.jit
    def probe(x, xs):
        seen.append((isinstance(x, concrete), isinstance(xs, concrete)))
        return x

    probe(jax.numpy.ones(()), [jax.numpy.ones(2)])
    assert seen == [(False, False)]


PROJECT = {
    "arraylib/__init__.py": "",
    "arraylib/arrays.py": """
        import jax.numpy as jnp

        class Array:
            \"\"\"A mutable wrapper: item assignment and `.at` both.\"\"\"

            def __init__(self, value):
                self.value = jnp.asarray(value)

            def __setitem__(self, index, v):
                self.value = self.value.at[index].set(v)

            @property
            def at(self):
                return self.value.at

        def array(value):
            return jnp.asarray(value)
        """,
    "arraylib/__main__.py": """
        from arraylib.arrays import Array, array

        def wrapper():
            a = Array([1.0, 2.0, 3.0])
            a[0] = 99.0
            return a.at[1].set(0.0)

        def plain():
            b = array([1.0, 2.0, 3.0])
            b[0] = 99.0  # JAX401: a function, not a class: `.at` below shows a JAX array
            return b.at[1].set(0.0)
        """,
}


def test_an_instance_of_a_project_class_is_no_jax_array(cli, make_files):
    make_files(PROJECT)
    findings = cli("check", "--no-cache", "--output-format", "json", "arraylib").json
    assert [(f["filename"].replace("\\", "/").rsplit("/", 2)[-2:], f["location"]["row"], f["code"]) for f in findings] == [
        (["arraylib", "__main__.py"], 11, "JAX401")
    ]


def test_jax_runs_the_project_wrapper_and_rejects_the_plain_array(make_files, monkeypatch):
    pytest.importorskip("jax")
    root = make_files(PROJECT)
    monkeypatch.syspath_prepend(str(root))
    import importlib

    main = importlib.import_module("arraylib.__main__")
    assert [float(v) for v in main.wrapper()] == [99.0, 0.0, 3.0]
    with pytest.raises(TypeError):
        main.plain()


def test_a_cached_run_sees_the_class_become_a_function(cli, make_files):
    """Whether `Array` is a class is read from its module: a cached result is redone when it changes."""
    root = make_files(PROJECT)

    def rows():
        findings = cli("check", "--output-format", "json", "arraylib").json
        return sorted(f["location"]["row"] for f in findings)

    assert rows() == [11]
    text = (root / "arraylib" / "arrays.py").read_text()
    (root / "arraylib" / "arrays.py").write_text(text.replace("class Array:", "class Wrapper:") + "\n\nArray = array\n")
    assert rows() == [6, 11]


# A name another module of the project binds once to a `jax.numpy` call is a JAX array where it
# is imported; one bound to a NumPy array, or bound twice, is not known to be one.
TEXTURES = {
    "pyproject.toml": "",
    "render/__init__.py": "",
    "render/textures.py": """
        import jax.numpy as jnp
        import numpy as np

        THRUSTER = jnp.ones((4, 4, 3))
        CANVAS = np.ones((4, 4, 3))
        """,
    "render/shade.py": """
        import jax
        import jax.numpy as jnp

        from render.textures import CANVAS, THRUSTER

        def colour(c):
            THRUSTER[:2, :, :3] *= c[None, None, :]  # JAX401
            return THRUSTER

        def paint():
            CANVAS[0] = 0.0
            return CANVAS

        def shade():
            return jax.vmap(colour)(jnp.ones((3, 3)))
        """,
}


def test_a_name_bound_to_a_jax_array_in_another_module_is_one(cli, make_files):
    make_files(TEXTURES)
    findings = cli("check", "--no-cache", "--output-format", "json", "render").json
    marked = textwrap.dedent(TEXTURES["render/shade.py"]).splitlines().index(
        "    THRUSTER[:2, :, :3] *= c[None, None, :]  # JAX401"
    ) + 1
    assert [(f["filename"].replace("\\", "/").rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in findings] == [
        ("shade.py", marked, "JAX401")
    ]


def test_jax_rejects_the_update_of_the_imported_array(make_files, monkeypatch):
    pytest.importorskip("jax")
    root = make_files(TEXTURES)
    monkeypatch.syspath_prepend(str(root))
    import importlib

    shade = importlib.import_module("render.shade")
    assert shade.paint()[0, 0, 0] == 0.0
    with pytest.raises(TypeError):
        shade.shade()
