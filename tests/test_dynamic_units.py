"""Pieces of `--dynamic` that need no subprocess: source facts, argument synthesis, progress output."""

from __future__ import annotations

import ast
import importlib.util
import textwrap

import pytest

from jaxlint.dynamic import _Progress
from jaxlint.dynamic.locate import Source, code_key

HAS_JAX = importlib.util.find_spec("jax") is not None

SOURCE = '''
from functools import partial
import jax

state = []


@partial(jax.jit, static_argnames=("n",))
def f(x, n,
      scale=1.0):
    own = []
    own.append(x)
    state.append(x)
    if (x.sum()
            > 0):
        return x
    return -x


g = jax.jit(f, static_argnums=(1,))
h = jax.jit(lambda y: y + 1)


def uses():
    return f(1, 2)


def main(argv=None):
    uses()


if __name__ == "__main__":
    main()
'''


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(SOURCE).lstrip())
    return Source.parse(str(path))


def test_span_covers_a_statement_header_only(source):
    assert source.span(13) == {13, 14}  # the `if` test spans two lines; its body does not count
    assert source.span(7) == {7, 8, 9}  # decorator and signature


def test_declared_codes_are_definitions_and_wrapped_functions_not_calls(source):
    f_key = ("f", 7)
    assert source.declared_codes({7}) == {f_key}
    assert source.declared_codes({19}) == {f_key}
    assert source.declared_codes({20}) == {("<lambda>", 20)}
    assert source.declared_codes({24}) == set()  # `f(1, 2)` only calls f


def test_jit_options_of_decorators_and_assignments(source):
    assert source.jit_options("f").static_argnames == ("n",)
    assert source.jit_options("g").static_argnums == (1,)
    assert source.jit_options("g").static_names(["x", "n", "scale"]) == {"n"}
    assert source.jit_options("uses").is_jit is False


def test_outer_writes_and_entry_points(source):
    assert source.writes_outer_state(12) is True
    assert source.writes_outer_state(11) is False
    assert source.main_block() is not None
    assert source.main_function().name == "main"
    assert [n.name for n in source.callers_of("f")] == ["uses"]
    assert code_key(source.top_level(10)) == ("f", 7)


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
def test_synthesized_arguments_follow_annotations_names_and_static_parameters():
    from jaxlint.dynamic.arguments import Synthesizer, Unbuildable

    func = ast.parse(textwrap.dedent('''
        def f(x: "Float[Array, 'b d']", w: "Float[Array, 'd k']", key, n_steps, lr, labels,
              mode, flag: bool, sizes, *, depth: int, scale=2.0):
            pass
    ''')).body[0]
    args, kwargs = Synthesizer(0, typed_keys=True).for_def(func, static={"sizes"})
    x, w, key, n_steps, lr, labels, mode, flag, sizes = args
    assert x.shape == (2, 3) and w.shape == (3, 4) and str(x.dtype) == "float32"
    assert "key" in str(key.dtype)
    assert (n_steps, lr, flag, kwargs) == (3, 0.5, False, {"depth": 3})
    assert str(labels.dtype) == "int32" and mode.shape == (3, 3)
    hash(sizes)
    with pytest.raises(Unbuildable):
        Synthesizer(0, typed_keys=True).for_def(ast.parse("def g(cfg: Config): pass").body[0], set())


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
def test_factory_results_in_both_shapes(tmp_path, monkeypatch):
    from jaxlint.dynamic.arguments import from_factory

    (tmp_path / "facts.py").write_text("def a():\n    return (1, 2)\n\ndef b():\n    return (1,), {'k': 2}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert from_factory({"m:f": "facts:a"}, ["m:f"]) == ((1, 2), {})
    assert from_factory({"m:f": "facts:b"}, ["m:f"]) == ((1,), {"k": 2})
    assert from_factory({}, ["m:f"]) is None


def test_progress_redraws_one_line_and_clears_it(capsys):
    progress = _Progress(2, enabled=True)
    progress.job_done({0: {"status": "confirmed"}, 1: {"status": "inconclusive"}})
    progress.job_done({2: {"status": "not-reproduced"}})
    progress.close()
    err = capsys.readouterr().err
    assert "\n" not in err
    assert "2/2 files, 1 findings confirmed" in err
    assert err.endswith("\r")


def test_progress_is_silent_when_disabled(capsys):
    progress = _Progress(3, enabled=False)
    progress.job_done({0: {"status": "confirmed"}})
    progress.close()
    assert capsys.readouterr().err == ""


def test_unknown_wrappers_and_computed_options_are_opaque(tmp_path):
    path = tmp_path / "w.py"
    path.write_text(textwrap.dedent('''
        import jax
        import equinox as eqx
        STATIC = ("n",)

        @eqx.filter_jit
        def a(x): ...

        def b(x, n): ...
        b_jit = jax.jit(b, static_argnames=STATIC)

        def c(x): ...
        c_jit = jax.jit(jax.grad(c))

        def d(x, **kw): ...
        d_jit = jax.jit(d, **{"static_argnums": 0})
    '''))
    source = Source.parse(str(path))
    assert source.jit_options("a").opaque
    assert source.jit_options("b_jit").opaque
    assert not source.jit_options("c_jit").opaque and source.jit_options("c_jit").is_jit
    assert source.jit_options("d_jit").opaque


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
def test_containers_are_shaped_by_how_the_body_reads_them():
    from jaxlint.dynamic.arguments import Synthesizer

    func = ast.parse(textwrap.dedent('''
        def loss(params, batch, pair):
            x, y = pair
            h = batch["x"] @ params["dense"]["w"] + params["dense"]["b"]
            return ((h - batch["labels"]) ** 2).mean()
    ''')).body[0]
    (params, batch, pair), _ = Synthesizer(0, typed_keys=False).for_def(func, set())
    assert set(params) == {"dense"} and set(params["dense"]) == {"w", "b"}
    assert set(batch) == {"x", "labels"} and str(batch["labels"].dtype) == "int32"
    assert isinstance(pair, tuple) and len(pair) == 2


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
def test_containers_follow_arguments_into_called_functions():
    from jaxlint.dynamic.arguments import Synthesizer

    module = ast.parse(textwrap.dedent('''
        def loss(p, b):
            return ((b["x"] @ p["w"]) ** 2).mean()

        def step(params, batch):
            return jax.grad(loss)(params, batch)
    '''))
    defs = {n.name: n for n in module.body}
    (params, batch), _ = Synthesizer(0, typed_keys=False, resolve=defs.get).for_def(defs["step"], set())
    assert set(params) == {"w"} and set(batch) == {"x"}
