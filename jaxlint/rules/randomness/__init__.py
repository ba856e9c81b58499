"""JAX2xx: PRNG keys reused, used after `split`, or made afresh from a constant seed; stateful RNGs in traced code."""

from __future__ import annotations

import ast
from itertools import chain, count

from jaxlint.analysis.engine.source_text import short_source
from jaxlint.analysis.engine.walk import spans
from jaxlint.rule import Rule

# What the key flow analysis cannot see; every key rule's page says it.
KEY_FLOW_LIMITATIONS = """
    Functions of the same module, and plain (undecorated, module-level) functions of the
    project's other modules reached through absolute, relative or re-exported imports, are
    followed through a summary of what each does to its key parameters (consumes it on every
    path, on some paths, or returns it unchanged): a helper that only looks at its key
    (`key.shape`, `jnp.asarray(key).dtype`) consumes nothing, and the message names the helper
    that did consume it. A helper that draws only under a test of one of its flags (`if train:`,
    `if not deterministic:`) consumes the key, for a call that passes that flag a literal or
    leaves it to a literal default, exactly when the literal takes the drawing branch: two
    `dropout(key, x, 0.1, True)` calls with one key are reported; and one that draws only
    when a parameter is None (`if mask_score is None:`) does not draw for a call that passes
    it a value, where the helper rebinds it only in that branch or past the branches of its
    tests (`mask_score = jnp.pad(mask_score, 1)` after the `if`); one that rebinds it in the
    branch for a value (`if latents is not None: latents = latents[None]`) takes values as they
    come, None among them. Likewise a helper that
    splits its key in `for _ in range(n):` consumes it for a call that gives `n` a positive
    literal (the loop runs); given a count the code does not show, the loop may run zero
    times and the key is taken to be consumed on some paths only. A parameter is a key, whatever
    its name, when a call in the module passes it one the caller made, split or drew from, or
    received as a key-named parameter (`def step(x, k): return model.apply(..., k)` called as
    `step(x, key)`). A function nested in another that reads that function's keys (a `loss_fn`
    handing the step's `dropout_key` to `apply(..., rngs=...)`, a lambda drawing from `key`)
    consumes them where it is called, directly or through a transformation
    (`jax.value_and_grad(loss_fn)(params)`), as its own analysis finds. Calls into code
    jaxlint cannot see (other libraries, methods, decorated functions, a module caught in an import cycle with
    the caller while it is analysed) consume
    every key passed to them directly, as JAX's checker treats an unknown operation, except a
    call whose result is only tested (`assert is_prng_key(key)`, `if valid(key):`), which looks
    at the key and draws nothing. An abstract method (its body only raises
    `NotImplementedError`, or is `...`, `pass` or a docstring alone under `@abc.abstractmethod`
    or in a `typing.Protocol`) consumes the keys its key-named parameters receive, as its
    implementations will, and every parameter's for a caller in another module: handing one key
    to `self.step_env` and then `self.reset_env` is reported, and so is handing one to
    `self.generator(batch, key)`, where the field is declared a `Protocol` whose `__call__` only
    documents itself, and then to another draw. A tree map (`jax.tree.map`,
    `jax.tree_util.tree_map`, dm-tree's `tree.map_structure`) calls its function there and then,
    so the keys a lambda or nested function given to it reads are used at the map. A module
    is searched for reuses
    when it calls `jax.random`, has an abstract method taking a key, annotates a parameter as
    a PRNG key (`key: chex.PRNGKey`, `jax.random.PRNGKeyArray`, jaxtyping's `PRNGKeyArray` or
    `Key[...]`), hands a key-named value to code known to draw from it (an Equinox `key=`,
    `nnx.Rngs`, `sample(seed=...)`, an initialiser, a module's `init`), or hands one to a
    function of another module of the project that draws from it; one that does none of these
    is not, even when it hands one key to two helpers that consume it. A callable chosen at run
    time (`fn = builders[name]`) is code jaxlint cannot see, even where every candidate ignores
    the key (`del rng`). Flax NNX's `Rngs(key)` is taken to draw from the key: it derives its
    keys by `fold_in(key, n)`, so two `Rngs` of one key repeat numbers, and an `Rngs` and a
    split of the key repeat them only where the split's child at the same index is drawn
    from, which is not told apart. A class constructed from a key consumes it unless its
    `__init__` only keeps it where no other method of the class reads it; a subclass defined
    elsewhere that reads it is not looked for. Loops are followed to a
    fixed point, telling apart the first, the second and the later iterations of the
    outermost loop being repeated: a key that comes back through a chain of more than two
    names, or a reuse that shows only in a later pass of an inner loop, is not seen.
    A key stored in a container or in an attribute (other than `self.key`, or `state.key` of a
    parameter the function never rebinds, within one function) is not followed. Two
    consumptions whose results are compared (an `assert`, an assertion call, `==`) are taken
    as a deliberate check that two computations draw the same numbers and are not reported;
    a result stored on an object (`w.x = normal(key)`) is that attribute, so comparing another
    attribute of the object (`if w.n == 1`) compares nothing drawn; nor does a comparison of one
    result with a constant (`out == 0`): a `==` counts when results stand on both sides. The
    same call made twice with one key is a reuse, as in JAX's checker, even when nothing else
    differs: the two results are equal (`c` and `h` of a recurrent carry made alike), which a
    deliberate copy marks with a `# noqa: JAX201`; two `init`s of one module on the same inputs
    are the one exception (a target network initialised as its online one: JAX201's page). Two uses that
    are harmless where the numbers go unused are reported all the same, since the code does
    not show that they do: draws made with a dummy key only to build example values (an
    action and a state that give a replay buffer its structure), and keys passed again to
    recompute what a gradient is taken of. A `# noqa: JAX201` records that intent. Flax modules are
    told apart by how the code writes them (`critic_def`, `self.model`, the argument a helper is
    passed): two names for one module, and two runs of modules whose layers draw at the same
    paths (a `Dropout_0` at the root of each, or `self.make_rng` called at the root of each),
    draw the same numbers and are not reported, except two `init`s of modules whose classes the
    project defines, whose layers' paths are known (JAX201's page); nor is an ensemble whose
    members separate `init`s of one module build with one key (they start identical). A split's
    children count as drawn from unless every read of the names they are bound to is one the
    analysis follows (a draw, a split, a call of a function of the project, a copy into another
    name, a `return`); a child stored on an object or handed inside a container to code not
    seen counts as drawn, as does one a caller keeps when a function hands it back. A function
    handed to `jax.eval_shape`, `eqx.filter_eval_shape` or `jax.make_jaxpr` is traced for shapes
    or its program only (as a Flax module is by its `tabulate`, which consumes no key):
    it draws no numbers, and a key it uses twice is not reported, unless the module also names
    it elsewhere (`jax.jit(init)(key)`, `init(key)`), where it may run for real. So is a key that
    `functools.partial` fixes, where the partial is only handed to those or to a jit that is
    only lowered or shape-evaluated (`jax.eval_shape(functools.partial(model.init, key), x)`,
    `jax.jit(p).lower()`): a partial runs nothing until it is called, and this one never is.
    Elsewhere a key a partial fixes is used where the partial is called (on every call, so a
    call in a loop is JAX203), handed to code that may call it, or stored on an object; one
    never called there, or returned, uses nothing in the function.
    """

# The one naming convention the key rules honour, as an option.
TEST_FUNCTIONS_OPTION = r"""
    `test-functions` (in `[tool.jaxlint.options]`): a regular expression. Functions (not
    methods) whose name matches it, methods of classes whose name (or a base class's name)
    matches it, and functions nested in them are test code, where one key is fed to several
    computations on purpose; they are not reported. A method whose name matches, of a class
    that does not, is the code a test calls (`Sampler.test_data(self, key)`) and is checked.
    Default: `^test|^Test|Tests?$|TestCase$` (what pytest and unittest collect). Set it to `""`
    to check test code too.

    `test-files`: a regular expression matched against a file's name. Every function of a file
    whose name matches it (mocks and fixtures included) is test code too. Default:
    `^test_.*\.py$|_test\.py$|^conftest\.py$` (the files pytest collects, and its fixture
    modules). Set it to `""` to check such files like any other.
    """


# The same policy as one-line principles, for every key rule's page.
KEY_FLOW_LIMITS = (
    "Calls into project functions, methods, forwarders and factories are followed, `*args` and `**kwargs`"
    " too; code it cannot see consumes every key passed to it.",
    "A module is searched only where it shows keys: it calls `jax.random`, annotates a key, or hands"
    " one to code known to draw from it.",
    "A key stored in a container or an attribute (but `self.key`, or `state.key` of a parameter never"
    " rebound) is not followed.",
    "Loops are followed through their first, second and later iterations: a reuse showing only in a"
    " later pass of an inner loop is missed.",
    "Two draws whose results are compared (`assert`, `==`) are a deliberate check: not reported.",
    "Flax modules are told apart by how the code writes them: two names for one module, or two modules"
    " drawing at the same layer paths, are missed.",
)


class KeyFlowRule(Rule):
    """A rule that reads the key flow: its page states what that analysis cannot see, and it
    honours the option that leaves test code alone."""

    options = TEST_FUNCTIONS_OPTION
    limitations = KEY_FLOW_LIMITATIONS
    limits = KEY_FLOW_LIMITS


def child_of(name: str, taken: tuple[str, ...] = ()) -> str:
    """The name a suggested split gives the new key it hands out besides `name`'s successor: one
    that neither the key nor the flagged line (`taken`, the names it binds) already uses."""
    names = chain(("sub", "subkey"), (f"sub{i}" for i in count(2)))
    return next(child for child in names if child != name and child not in taken)


def split_text(name: str, taken: tuple[str, ...] = ()) -> str:
    """The split a message suggests for the key `name`, quoted with the code's own name."""
    return f"`{name}, {child_of(name, taken)} = jax.random.split({name})`"


def condition_text(node: ast.AST) -> str:
    """A branch condition as a message quotes it: short."""
    return short_source(node)


def path_of(tree: ast.AST, guard: ast.AST, inside: ast.AST) -> str:
    """Which path of the branch testing `guard` runs `inside`, as a message says it: the arm it
    sits in, or (when it runs before the branch) one of the two."""
    text = condition_text(guard)
    branch = next((n for n in ast.walk(tree) if getattr(n, "test", None) is guard), None)
    if isinstance(branch, (ast.If, ast.IfExp)):
        for arm, phrase in ((branch.body, "held"), (branch.orelse, "did not hold")):
            for part in arm if isinstance(arm, list) else [arm]:
                if spans(part, inside):
                    return f"when `{text}` {phrase}"
    # `a and b` runs `b` when `a` held, `a or b` when it did not.
    chain = next((n for n in ast.walk(tree) if isinstance(n, ast.BoolOp) and n.values[0] is guard), None)
    if chain is not None and any(spans(part, inside) for part in chain.values[1:]):
        return f"when `{text}` {'held' if isinstance(chain.op, ast.And) else 'did not hold'}"
    return f"on one of the paths through the branch on `{text}`"

