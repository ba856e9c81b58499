"""`jax.lax` operations that return one JAX array: the table, checked against JAX, and JAX401 on their results."""

from __future__ import annotations

import textwrap

import pytest
from marks import family_marks

from jaxlint.analysis.knowledge import array_api
from jaxlint.analysis.knowledge.array_api import array_function

marked = family_marks(r"JAX401")


def lax_calls():
    """Small arguments for each operation of `array_api.LAX_ONE_ARRAY`: NumPy arrays and Python
    scalars, so a JAX array in the result is the operation's doing."""
    import numpy as np
    from jax import lax

    f = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3) / 7
    i = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    b = f > 0.3
    v = np.ones(3, np.float32)
    m = np.ones((3, 3), np.float32)
    image = np.ones((1, 1, 4, 4), np.float32)
    kernel = np.ones((1, 1, 2, 2), np.float32)
    gather_numbers = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    scatter_numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    index = np.array([[0], [2]], np.int32)
    scatter = (v, index, np.ones(2, np.float32), scatter_numbers)
    calls = {}
    for name in (
        "abs acos acosh asin asinh atan atanh cbrt ceil cos cosh exp exp2 expm1 floor conj is_finite log log1p "
        "logistic neg reciprocal round rsqrt sign sin sinh sqrt square tan tanh bessel_i0e bessel_i1e digamma erf "
        "erf_inv erfc lgamma cumsum cumprod cummax cummin cumlogsumexp"
    ).split():
        calls[name] = (f,)
    for name in (
        "add sub mul div rem pow max min atan2 nextafter complex eq ne lt le gt ge igamma igammac igamma_grad_a zeta"
    ).split():
        calls[name] = (f, f)
    for name in "bitwise_not clz population_count".split():
        calls[name] = (i,)
    for name in (
        "bitwise_and bitwise_or bitwise_xor shift_left shift_right_arithmetic shift_right_logical mulhi"
    ).split():
        calls[name] = (i, i)
    for name in "scatter scatter_add scatter_sub scatter_mul scatter_min scatter_max".split():
        calls[name] = scatter
    for name in "reduce_sum reduce_max reduce_min reduce_prod".split():
        calls[name] = (f, (0,))
    for name in "reduce_and reduce_or reduce_xor".split():
        calls[name] = (b, (0,))
    calls.update({
        "imag": (f + 1j,), "real": (f + 1j,), "polygamma": (np.ones_like(f), f), "betainc": (f, f, f),
        "clamp": (0.2, f, 0.5), "integer_pow": (f, 2), "convert_element_type": (f, np.int32),
        "bitcast_convert_type": (f, np.int32), "reduce_precision": (f, 5, 10),
        "select": (b, f, f), "select_n": (b, f, f),
        "dot": (m, v), "dot_general": (m, m, (((1,), (0,)), ((), ()))),
        "batch_matmul": (np.ones((2, 3, 3), np.float32),) * 2,
        "conv": (image, kernel, (1, 1), "SAME"), "conv_general_dilated": (image, kernel, (1, 1), "SAME"),
        "conv_with_general_padding": (image, kernel, (1, 1), [(0, 0), (0, 0)], None, None),
        "conv_transpose": (np.ones((1, 4, 4, 1), np.float32), np.ones((2, 2, 1, 1), np.float32), (1, 1), "SAME"),
        "conv_general_dilated_local": (image, np.ones((1, 4, 3, 3), np.float32), (1, 1), "VALID", (2, 2)),
        "conv_general_dilated_patches": (image, (2, 2), (1, 1), "VALID"),
        "reshape": (f, (3, 2)), "transpose": (f, (1, 0)), "squeeze": (f[None], (0,)), "expand_dims": (f, (0,)),
        "collapse": (f, 0), "rev": (f, (0,)), "pad": (f, 0.0, [(1, 1, 0), (0, 0, 0)]), "tile": (f, (2, 1)),
        "slice": (f, (0, 0), (1, 2)), "slice_in_dim": (f, 0, 1), "index_in_dim": (f, 0),
        "dynamic_slice": (f, (0, 1), (1, 2)), "dynamic_slice_in_dim": (f, 0, 1), "dynamic_index_in_dim": (f, 1),
        "dynamic_update_slice": (f, f[:1], (0, 0)), "dynamic_update_slice_in_dim": (f, f[:1], 0, 0),
        "dynamic_update_index_in_dim": (f, f[:1], 0, 0),
        "gather": (v, index, gather_numbers, (1,)), "index_take": (v, np.array([[0, 2]], np.int32), (0,)),
        "broadcast": (f, (2,)), "broadcast_in_dim": (v, (2, 3), (1,)), "broadcast_to_rank": (v, 3),
        "broadcasted_iota": (np.int32, (2, 3), 1), "iota": (np.int32, 4), "full": ((2, 3), 1.0),
        "full_like": (f, 1.0), "concatenate": ([f, f], 0), "stack": ([f, f],),
        "argmax": (f, 0, np.int32), "argmin": (f, 0, np.int32),
    })
    return calls


def test_every_lax_operation_in_the_table_returns_one_immutable_jax_array():
    jax = pytest.importorskip("jax")
    from jax import lax

    calls = lax_calls()
    table = {name[len("jax.lax."):] for name in array_api.LAX_ONE_ARRAY}
    assert table == set(calls)
    for name in sorted(table):
        out = getattr(lax, name)(*calls[name])
        assert isinstance(out, jax.Array), (name, type(out))
        with pytest.raises(TypeError, match="immutable"):
            out[(0,) * out.ndim] = 0


def test_operations_left_out_of_the_table_return_tuples_or_pytrees():
    """Why `sort`, `top_k`, `stop_gradient` and the loops are not in the table."""
    jax = pytest.importorskip("jax")
    import numpy as np
    from jax import lax

    x = np.array([3.0, 1.0, 2.0], np.float32)
    carry, ys = lax.scan(lambda c, row: ({"n": c["n"] + row}, row), {"n": 0.0}, x)
    assert isinstance(carry, dict) and isinstance(ys, jax.Array)
    for out in (lax.sort((x, x), num_keys=1), lax.top_k(x, 2), lax.stop_gradient({"w": x})):
        assert isinstance(out, (tuple, list, dict)), type(out)
    for name in ("sort", "sort_key_val", "top_k", "split", "reduce", "scan", "cond", "while_loop", "fori_loop",
                 "map", "stop_gradient", "optimization_barrier", "psum", "associative_scan"):
        assert hasattr(lax, name)
        assert not array_function("jax.lax." + name)


def test_array_function_answers_from_the_table():
    assert array_function("jax.lax.select")
    assert array_function("jax.lax.dynamic_index_in_dim")
    assert not array_function("jax.lax.sort")
    assert not array_function("jax.lax.linalg.qr")  # a sub-namespace: not in the table


def test_select_result_assigned_in_place_raises_eagerly_and_under_jit():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    def shift(cond, a, value):
        context = jax.lax.select(cond, a.at[0].set(1.0), a)
        context[0, 1] = value  # noqa: JAX401
        return context

    with pytest.raises(TypeError, match="immutable"):
        shift(True, jnp.zeros((2, 2)), 3.0)
    with pytest.raises(TypeError, match="immutable"):
        jax.jit(shift)(True, jnp.zeros((2, 2)), 3.0)


LAX_RESULTS = """
    import jax
    import numpy as np
    from jax import lax
    from jax.lax import dynamic_slice

    def shift(cond, a, value, idx):
        context = jax.lax.select(cond, a.at[0].set(1.0), a)
        context[0, idx] = value  # JAX401
        return context

    @jax.jit
    def window(x, start):
        part = dynamic_slice(x, (start,), (2,))
        part[0] = 0.0  # JAX401
        total = lax.cumsum(x)
        total[-1] += 1.0  # JAX401
        return part, total

    def host_copy(x, values):
        host = np.array(lax.abs(x))
        host[0] = 0.0  # a NumPy copy: mutable
        given = np.asarray(values)
        given[0] = 0.0  # a NumPy array (of a list, say)
        return host, given

    @jax.jit
    def running(state, xs):
        state, _ = lax.scan(lambda c, row: ({"n": c["n"] + row}, row), state, xs)
        state["n"] = state["n"] * 2  # the carry is a dict here
        frozen = lax.stop_gradient({"w": xs})
        frozen["w"] = xs + 1  # a dict: `stop_gradient` returns the pytree it is given
        return state, frozen
    """


def test_lax_results_through_the_cli(cli, make_files):
    make_files({"lax_results.py": LAX_RESULTS})
    out = cli("check", "--no-cache", "--output-format", "json", "lax_results.py")
    expected = sorted(marked(textwrap.dedent(LAX_RESULTS)))
    assert out.code == 1
    assert sorted((f["location"]["row"], f["code"]) for f in out.json) == expected
