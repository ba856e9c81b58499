"""The results cache shared by checks of one file after another (flake8's way) and by processes."""

from __future__ import annotations

import os

from jaxlint import runner
from jaxlint.analysis.project.project import IncomingCall
from jaxlint.analysis.tracing.traced_functions import Context
from jaxlint.cache import Cache, calls_key
from jaxlint.findings import Finding, Position
from jaxlint.rules import all_rules
from jaxlint.runner import LintSettings, lint_files

OPS = "def clip(x):\n    if x > 0:\n        return x\n    return -x\n"
LAYERS = "from ops import clip\n\n\ndef dense(x):\n    return clip(x)\n"
ENTRY = "import jax\n\nimport layers\n\n\n@jax.jit\ndef {name}(x):\n    return layers.dense(x)\n"


def test_a_module_linted_with_each_set_of_calls_is_linted_once(make_files, monkeypatch):
    """A caller is linted with the calls of the modules checked with it: two checks that bring it
    different callers each lint it once, and checking either again lints nothing."""
    root = make_files({
        "pyproject.toml": "", "ops.py": OPS, "layers.py": LAYERS,
        "train.py": ENTRY.format(name="step"), "evaluate.py": ENTRY.format(name="score"),
    })
    linted = []
    lint_file = runner.lint_file
    monkeypatch.setattr(runner, "lint_file", lambda path, *args: linted.append(os.path.basename(path)) or lint_file(path, *args))
    settings = LintSettings(codes=frozenset(all_rules()), hash_contents=True)
    ops = str(root / "ops.py")

    def check(entry: str) -> list[str]:
        linted.clear()
        cache = Cache(root / "cache", "key")
        (result,) = lint_files([ops], settings, cache, callers=[str(root / "layers.py"), str(root / entry)])
        cache.save()
        name = {"train.py": "train.step", "evaluate.py": "evaluate.score"}[entry]
        assert [f.message.rpartition(" (")[2] for f in result.findings] == [f"traced via `{name}`)"]
        return sorted(linted)

    # each module alone, then `layers` and `ops` with the calls `train` makes
    assert check("train.py") == ["layers.py", "layers.py", "ops.py", "ops.py", "train.py"]
    assert check("evaluate.py") == ["evaluate.py", "layers.py", "ops.py"]  # only what `evaluate` changes
    assert check("train.py") == []
    assert check("evaluate.py") == []


def _finding(path: str) -> Finding:
    return Finding("JAX101", "traced-if", "m", path, Position(1, 1), Position(1, 2))


def test_processes_sharing_a_cache_keep_what_each_saved(tmp_path):
    """Each saves over what the others saved since it read the file, and takes it in on `refresh`:
    different files, and one file's results for different calls into it, are all kept."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    first, second, third = (Cache(tmp_path / "cache", "key") for _ in range(3))
    call = IncomingCall(str(a), "f", (), Context(abstract=True, staged=True), "b.g")
    first.store(str(a), os.stat(a), "digest-a", [_finding(str(a))])
    second.store(str(b), os.stat(b), "digest-b", [])
    second.store(str(a), os.stat(a), "digest-a", [], incoming=calls_key([call]))
    first.save()
    second.save()
    third.refresh()
    assert third.lookup(str(b), os.stat(b))[0] is not None
    alone = third.lookup(str(a), os.stat(a))[0]
    called = third.lookup(str(a), os.stat(a), calls_key([call]))[0]
    assert [f.code for f in alone.findings] == ["JAX101"] and called.findings == []
    a.write_text("x = 10\n")  # the file changed: none of its results stand
    assert third.lookup(str(a), os.stat(a))[0] is None
