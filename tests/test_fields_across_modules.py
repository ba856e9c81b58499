"""JAX401 on a field that a class of another module of the project declares a JAX array, read
from a parameter annotated with that class (`sys: base.System`, `init_q: jax.Array`).

That JAX rejects the store is shown for the same class in one module
(`test_array_evidence`, `field_a_parameter_annotation_declares_an_array`); here, only where the class is.
"""

from __future__ import annotations

import textwrap

BASE = """
    import jax
    from flax import struct


    @struct.dataclass
    class System:
        init_q: jax.Array
        names: list
        dt: float = 0.01
    """

ENV = """
    import jax.numpy as jnp
    from pkg import base
    from pkg.base import System


    def reset(sys: base.System):
        q = sys.init_q
        q[-4:] = jnp.zeros(4)
        return q


    def reset_imported(sys: System):
        q = sys.init_q
        q[0] = 1.0
        return q
    """


def _check(cli, make_files, env):
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/env.py": env})
    out = cli("check", "--no-cache", "--select", "JAX401", "--output-format", "json", "pkg/env.py")
    return sorted(f["location"]["row"] for f in out.json)


def test_a_field_declared_an_array_in_another_module_takes_no_item_assignment(cli, make_files):
    assert _check(cli, make_files, ENV) == [9, 15]


def test_fields_declared_otherwise_or_a_rebound_parameter_decide_nothing(cli, make_files):
    env = """
        import jax.numpy as jnp
        from pkg import base


        def rename(sys: base.System):
            names = sys.names
            names[0] = "root"
            return names


        def reset(sys: base.System, other):
            sys = other
            q = sys.init_q
            q[0] = 1.0
            return q
        """
    assert _check(cli, make_files, textwrap.dedent(env)) == []
