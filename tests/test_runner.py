"""The runner's memory habits: what one file's linting allocates is freed before the next file."""

from __future__ import annotations

import ast
import gc

from jaxlint.rules import iter_rules
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.project.project import Project
from jaxlint.linter import lint_module, module_facts
from jaxlint.runner import LintSettings, _chunks, lint_document, lint_files, load_document

TRACED = """\
import jax
import jax.numpy as jnp


@jax.jit
def step(x, n):
    if x > 0:
        return jnp.sin(x) * n
    return x
"""


def test_each_linted_module_is_freed_when_its_file_is_done(tmp_path):
    # A module's tree and facts refer to each other in cycles: without a collection after each
    # file, every tree stays in memory until the collector happens to run.
    files = []
    for i in range(3):
        path = tmp_path / f"m{i}.py"
        path.write_text(TRACED)
        files.append(str(path))
    settings = LintSettings(codes=frozenset(rule.code for rule in iter_rules(None)))
    gc.collect()
    gc.disable()
    try:
        results = lint_files(files, settings)
        modules = [obj for obj in gc.get_objects() if isinstance(obj, ast.Module)]
    finally:
        gc.enable()
    assert [sorted({f.code for f in r.findings}) for r in results] == [["JAX101"]] * 3
    assert modules == []
    assert gc.get_freeze_count() == 0


def test_a_module_linted_on_its_own_leaves_the_collector_as_it_was():
    # Editors lint one buffer at a time for as long as they run: nothing may stay frozen.
    settings = LintSettings(codes=frozenset(rule.code for rule in iter_rules(None)))
    linted = lint_document(load_document("m.py", TRACED.encode()), "m.py", settings)
    assert [f.code for f in linted.findings] == ["JAX101"]
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


def test_reference_counting_alone_frees_a_linted_module():
    # The facts are dropped once the rules are done, so no cycle keeps the tree: the collection
    # after each file has almost nothing to walk.
    gc.collect()
    gc.disable()
    try:
        linted = lint_module(TRACED, "m.py")
        modules = [obj for obj in gc.get_objects() if isinstance(obj, ast.Module)]
    finally:
        gc.enable()
    assert [f.code for f in linted.findings] == ["JAX101"]
    assert modules == []


HANDS_A_KEY = """\
import jax
from pkg.noise import perturb


def run(x, key):
    a = perturb(x, key)
    return a + perturb(x, key)
"""

NOISE = """\
import jax


def perturb(x, key):
    return x + jax.random.normal(key, x.shape)
"""


def test_reference_counting_alone_frees_a_module_linted_in_its_project(tmp_path):
    # Following calls into other modules must not tie the linted module's facts into a cycle
    # either (a fact holding a bound method of another): the module's names die with its facts.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "noise.py").write_text(NOISE)
    path = tmp_path / "pkg" / "train.py"
    path.write_text(HANDS_A_KEY)
    project = Project(facts=module_facts)
    gc.collect()
    gc.disable()
    try:
        linted = lint_module(HANDS_A_KEY, str(path), project=project)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        cyclic = [obj for obj in gc.garbage if isinstance(obj, Names)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert [f.code for f in linted.findings] == ["JAX201"]
    assert cyclic == []


def test_chunks_hold_every_file_once_largest_first_and_shrink_towards_the_end():
    sizes = [500_000, 3_000, 250_000, *([20_000] * 60), 40_000, 1_000]
    tasks = [((f"f{i}.py", None, ()), size) for i, size in enumerate(sizes)]
    chunks = _chunks(tasks, 2)
    flat = [task for chunk in chunks for task in chunk]
    assert sorted(flat) == sorted(task for task, _ in tasks)
    by_path = dict(tasks)
    assert [by_path[t] for t in flat] == sorted(sizes, reverse=True)
    chunk_bytes = [sum(by_path[t] for t in chunk) for chunk in chunks]
    assert chunk_bytes[0] == 500_000  # the largest file opens the first chunk alone
    assert chunk_bytes[-1] < chunk_bytes[1]  # the last ones are small, so workers finish together
