"""The one binder and the one resolver every analysis follows calls with.

A table of call shapes against signatures (as mypy's `map_actuals_to_formals` is tested), each
row checked against Python itself: the binding `engine.arguments.bind` gives must be the one
`inspect.Signature.bind` gives when the call runs. Then the resolver (`tracing.callees`):
what a call of the module runs, and how many parameters it binds implicitly.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from jaxlint.analysis.engine.arguments import Receiver, bind, forwarded_call, implicit_count
from jaxlint.analysis.engine.names import Names
from jaxlint.analysis.tracing.callees import Callees

# (signature, call): the call's arguments are names or literals whose text is their identity.
TABLE = [
    ("def f(a, b): ...", "f(x, y)"),
    ("def f(a, b): ...", "f(x, b=y)"),
    ("def f(a, b): ...", "f(b=y, a=x)"),
    ("def f(a, b=2): ...", "f(x)"),
    ("def f(a, /, b): ...", "f(x, y)"),
    ("def f(a, *, b): ...", "f(x, b=y)"),
    ("def f(a, *args): ...", "f(x, y, z)"),
    ("def f(*args): ...", "f(x, y)"),
    ("def f(a, **kwargs): ...", "f(x, c=y, d=z)"),
    ("def f(a, b, c): ...", "f(x, *(y, z))"),
    ("def f(a, *args, b=1, **kwargs): ...", "f(x, y, b=z, c=w)"),
    ("def f(*args, **kwargs): ...", "f(x, k=y)"),
]


def _call(source: str) -> ast.Call:
    return ast.parse(source, mode="eval").body


def _function(source: str) -> ast.FunctionDef:
    return ast.parse(source).body[0]


@pytest.mark.parametrize(("signature", "call"), TABLE)
def test_binding_is_pythons(signature: str, call: str) -> None:
    fn, node = _function(signature), _call(call)
    binding = bind(fn, node)
    namespace: dict = {}
    exec(signature, namespace)
    spread: list = []
    for arg in node.args:  # a `*` of a literal tuple spreads into its items' texts
        items = arg.value.elts if isinstance(arg, ast.Starred) else [arg]
        spread.extend(ast.unparse(item) for item in items)
    python = inspect.signature(namespace["f"]).bind(*spread, **{k.arg: ast.unparse(k.value) for k in node.keywords})
    a = fn.args
    for param, value in python.arguments.items():
        if a.vararg is not None and param == a.vararg.arg:
            assert [ast.unparse(e) for e in binding.collected] == list(value)
        elif a.kwarg is not None and param == a.kwarg.arg:
            assert {k: ast.unparse(v) for k, v in binding.collected_names.items()} == value
        else:
            assert ast.unparse(binding.arguments[param]).strip("'") == value
    assert not binding.spread


def test_a_spread_of_unknown_length_leaves_later_parameters_unknown() -> None:
    binding = bind(_function("def f(a, b, c, *, d=1): ..."), _call("f(x, *rest, d=y)"))
    assert ast.unparse(binding.arguments["a"]) == "x"
    assert ast.unparse(binding.arguments["d"]) == "y"
    assert binding.spread == {"b", "c"}


def test_a_keyword_spread_leaves_every_unbound_parameter_unknown() -> None:
    binding = bind(_function("def f(a, b, c): ..."), _call("f(x, **options)"))
    assert set(binding.arguments) == {"a"} and binding.spread == {"b", "c"}


def test_implicit_parameters_follow_how_the_function_is_reached() -> None:
    method = _function("def m(self, x): ...")
    static = _function("@staticmethod\ndef m(x): ...")
    klass = _function("@classmethod\ndef m(cls, x): ...")
    assert implicit_count(method, Receiver.INSTANCE) == 1
    assert implicit_count(method, Receiver.CLASS) == 0  # `Base.m(self, x)` passes the instance
    assert implicit_count(static, Receiver.INSTANCE) == 0
    assert implicit_count(static, Receiver.CLASS) == 0
    assert implicit_count(klass, Receiver.CLASS) == 1
    assert implicit_count(klass, Receiver.INSTANCE) == 1


@pytest.mark.parametrize(
    ("source", "forwards"),
    [
        ("def f(*args, **kwargs):\n    return g(*args, **kwargs)", True),
        ("def f(*args, **kwargs):\n    '''Doc.'''\n    return g(*args, **kwargs)", True),
        ("def f(x, *args):\n    return g(x, *args)", True),
        ("def f(self, *args, **kwargs):\n    return self._g(*args, **kwargs)", True),
        ("def f(*args, **kwargs):\n    return g(*args)", False),  # drops the keywords
        ("def f(x, *args):\n    return g(*args, x)", False),  # reorders
        ("def f(*args):\n    print(args)\n    return g(*args)", False),  # does more
        ("@decorate\ndef f(*args):\n    return g(*args)", False),
        ("def f(x, y):\n    return g(x, y)", False),  # named parameters: followed as a body
    ],
)
def test_forwarding_functions(source: str, forwards: bool) -> None:
    assert (forwarded_call(_function(source)) is not None) is forwards


RESOLVED = '''
import jax

def plain(a, b): ...

@jax.jit
def jitted(x): ...

def _impl(key, x): ...

def forwarder(*args, **kwargs):
    return _impl(*args, **kwargs)

noise = lambda k: k

step = jax.jit(plain)

class Base:
    def inherited(self, x): ...

class Ops(Base):
    @staticmethod
    def static(x): ...

    @classmethod
    def klass(cls, x): ...

    def method(self, x): ...

    def calls(self):
        self.method(1)
        self.inherited(2)
        Ops.static(3)
        Ops.klass(4)
        Base.inherited(self, 5)
        self.forward(6)

    def forward(self, *args):
        return self.method(*args)

    @property
    def prop(self): ...

    def spelled(this):
        this.method(7)
        this.prop(8)

    @staticmethod
    def helper(x):
        x.method(13)

def caller(o):
    plain(1, 2)
    jitted(3)
    forwarder(4, 5)
    noise(6)
    step(7, 8)
    ops = Ops()
    ops.method(9)
    ops.inherited(10)
    Ops().static(11)
    o.method(12)
'''


@pytest.mark.parametrize(
    ("call", "function", "implicit"),
    [
        ("plain(1, 2)", "plain", 0),
        ("jitted(3)", "jitted", 0),
        ("forwarder(4, 5)", "_impl", 0),
        ("noise(6)", "<lambda>", 0),
        ("step(7, 8)", "plain", 0),
        ("self.method(1)", "method", 1),
        ("self.inherited(2)", "inherited", 1),
        ("Ops.static(3)", "static", 0),
        ("Ops.klass(4)", "klass", 1),
        ("Base.inherited(self, 5)", "inherited", 0),
        ("self.forward(6)", "method", 1),
        ("this.method(7)", "method", 1),  # the instance, however the method names it
        ("ops.method(9)", "method", 1),  # a name bound once to an instance of a class here
        ("ops.inherited(10)", "inherited", 1),
        ("Ops().static(11)", "static", 0),
    ],
)
def test_resolver(call: str, function: str, implicit: int) -> None:
    tree = ast.parse(textwrap.dedent(RESOLVED))
    names = Names(tree)
    callees = Callees(names, frozenset({"jax.jit"}))
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n) == call)
    target = callees.target(node.func)
    assert target is not None
    assert getattr(target.function, "name", "<lambda>") == function
    assert target.implicit == implicit


def test_resolver_binds_through_a_forwarder_as_python_does() -> None:
    tree = ast.parse(RESOLVED)
    names = Names(tree)  # the resolver holds the names weakly: the module's facts own them
    callees = Callees(names, frozenset({"jax.jit"}))
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n) == "forwarder(4, 5)")
    bound = callees.target(call.func).bind(call)
    assert {p: ast.unparse(a) for p, a in bound.arguments.items()} == {"key": "4", "x": "5"}


def test_a_decorator_the_resolver_cannot_see_through_stops_it() -> None:
    tree = ast.parse("import functools\n@functools.lru_cache\ndef f(x): ...\nf(1)\n")
    names = Names(tree)
    callees = Callees(names, frozenset({"jax.jit"}))
    call = tree.body[-1].value
    assert callees.target(call.func) is None


@pytest.mark.parametrize("call", ["this.prop(8)", "o.method(12)", "x.method(13)"])
def test_the_resolver_does_not_guess(call: str) -> None:
    """A property's call runs what the property returns; a parameter's class is not known (a
    static method's first parameter is no instance)."""
    tree = ast.parse(textwrap.dedent(RESOLVED))
    names = Names(tree)
    callees = Callees(names, frozenset({"jax.jit"}))
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n) == call)
    assert callees.target(node.func) is None


DECORATED = """
import functools

class Model:
    @functools.lru_cache
    def step(self, x): ...

    def run(self, x):
        return self.step(x)
"""


def test_denoted_names_a_def_whatever_its_decorators() -> None:
    """What an expression names, for an asker that reads the decorators itself (tracing sees
    the `jax.vmap` around `self.step`, the value analysis what a decorator returns)."""
    tree = ast.parse(DECORATED)
    names = Names(tree)
    callees = Callees(names, frozenset({"jax.jit"}))
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n) == "self.step(x)")
    assert callees.target(call.func) is None
    denoted = callees.denoted(call.func)
    assert denoted is not None and denoted.function.name == "step" and denoted.implicit == 1
