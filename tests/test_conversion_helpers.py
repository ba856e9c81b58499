"""The helpers JAX's `jax.numpy` converts its arguments with (`jax._src.numpy.util`): what they
return, checked against JAX, and JAX401 on their results."""

from __future__ import annotations

import textwrap

import pytest
from marks import family_marks

from jaxlint.analysis.knowledge import array_api

marked = family_marks(r"JAX401")


def test_each_conversion_helper_returns_jax_arrays_of_numpy_arrays_and_scalars():
    jax = pytest.importorskip("jax")
    import numpy as np
    from jax._src.numpy import util

    host, number = np.arange(3.0), 2
    one = util.ensure_arraylike("f", host)
    assert isinstance(one, jax.Array)
    with pytest.raises(TypeError, match="immutable"):
        one[0] = 1.0
    for name in sorted(array_api.CONVERSIONS_TO_ARRAYS):
        helper = getattr(util, name.rsplit(".", 1)[-1])
        if name.endswith("_tuple"):
            out = helper("f", (host, number))
        elif name.rsplit(".", 1)[-1].startswith(("ensure", "promote_args", "promote_shapes")):
            out = helper("f", host, number)
        else:
            out = helper(host, number)
        assert isinstance(out, (tuple, list)) and len(out) == 2, name
        assert all(isinstance(item, jax.Array) for item in out), name
        first, _ = out
        with pytest.raises(TypeError, match="immutable"):
            first[0] = 1.0
        if isinstance(out, list):
            out[0] = first + 1  # the list itself is a Python list


def test_the_put_of_jax_numpy_written_in_place_raises_eagerly_and_under_jit():
    jax = pytest.importorskip("jax")
    import numpy as np
    from jax._src.numpy import util

    def put(a, ind, v):
        arr, ind_arr, v_arr = util.ensure_arraylike("put", a, ind, v)
        arr = arr.ravel()
        arr[ind_arr] = v_arr  # noqa: JAX401 (the store JAX is shown to reject)
        return arr

    with pytest.raises(TypeError, match="immutable"):
        put(np.zeros(4), np.array([1, 2]), np.ones(2))
    with pytest.raises(TypeError, match="immutable"):
        jax.jit(put)(np.zeros(4), np.array([1, 2]), np.ones(2))


CONVERSIONS = """
    import numpy as np
    from jax._src.numpy import util
    from jax._src.numpy.util import promote_args, promote_dtypes_inexact

    def put(a, ind, v):
        arr, ind_arr, v_arr = util.ensure_arraylike("put", a, ind, v)
        if not arr.size:
            return arr
        arr = arr.ravel()
        arr[ind_arr] = v_arr  # JAX401
        return arr

    def fill_first(x):
        x = util.ensure_arraylike("fill_first", x)
        x[0] += 1  # JAX401
        return x

    def blend(a, b):
        a, b = promote_dtypes_inexact(a, b)
        a[0] = b[0]  # JAX401
        return a

    def replace_first(x, y):
        parts = promote_args("replace_first", x, y)
        parts[0] = parts[1]  # the list the helper returns is a Python list
        host = np.array(util.ensure_arraylike("replace_first", x))
        host[0] = 0.0  # a NumPy copy
        return parts, host

    def ensure_arraylike(name, x):
        return np.asarray(x).copy()

    def local_helper(x):
        x = ensure_arraylike("local_helper", x)
        x[0] = 0.0  # the module's own helper of that name returns a NumPy array
        return x
    """


def test_conversion_results_through_the_cli(cli, make_files):
    make_files({"conversions.py": CONVERSIONS})
    out = cli("check", "--no-cache", "--output-format", "json", "conversions.py")
    expected = sorted(marked(textwrap.dedent(CONVERSIONS)))
    assert out.code == 1
    assert sorted((f["location"]["row"], f["code"]) for f in out.json) == expected
