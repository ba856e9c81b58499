"""A class deriving from `flax.struct.PyTreeNode` through a class of another module is a
dataclass pytree with no decorator of its own: its fields are traced leaves under `jit`."""

from __future__ import annotations

import textwrap

import pytest

BASE = """
    import abc

    import jax
    import flax.struct


    class Repertoire(flax.struct.PyTreeNode, abc.ABC):
        pass


    class GARepertoire(Repertoire):
        genotypes: jax.Array
        fitnesses: jax.Array
    """

USE = """
    import jax
    import jax.numpy as jnp

    from pkg.containers import GARepertoire


    class MapElitesRepertoire(GARepertoire):
        centroids: jax.Array


    @jax.jit
    def reevaluate(repertoire: MapElitesRepertoire, fitnesses):
        return -jnp.inf if repertoire.fitnesses == -jnp.inf else fitnesses


    @jax.jit
    def count(repertoire: MapElitesRepertoire):
        return len(repertoire.centroids)
    """


def test_a_field_of_a_pytree_node_derived_through_another_module_is_traced(cli, make_files):
    make_files({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/containers.py": BASE, "pkg/use.py": USE})
    out = cli("check", "--no-cache", "--select", "JAX1", "--output-format", "json", "pkg/use.py")
    row = textwrap.dedent(USE).splitlines().index("    return -jnp.inf if repertoire.fitnesses == -jnp.inf else fitnesses") + 1
    assert [(f["location"]["row"], f["code"]) for f in out.json] == [(row, "JAX101")]  # `len` of an array is static


def test_jax_makes_the_subclass_a_pytree_and_traces_its_fields():
    pytest.importorskip("flax")
    import jax
    import jax.numpy as jnp

    namespace: dict = {}
    exec(textwrap.dedent(BASE), namespace)
    exec(textwrap.dedent(USE).replace("from pkg.containers import GARepertoire", ""), namespace)
    repertoire = namespace["MapElitesRepertoire"](genotypes=jnp.zeros(3), fitnesses=jnp.zeros(()), centroids=jnp.zeros(3))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        namespace["reevaluate"](repertoire, jnp.ones(()))
    assert namespace["count"](repertoire) == 3
