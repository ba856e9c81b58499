"""Arguments for calling a user function: declared factories, then annotations, defaults and names."""

from __future__ import annotations

import ast
import importlib
import inspect
import math
import re

# Array shapes tried in turn when a probe fails before (or at) the finding's line for another reason.
SHAPES = ((3, 3), (3,), ())
JAXTYPING_DTYPES = {
    "float": "float32", "inexact": "float32", "real": "float32", "num": "float32",
    "shaped": "float32", "bfloat": "bfloat16", "int": "int32", "integer": "int32",
    "uint": "uint32", "bool": "bool", "complex": "complex64", "key": "key",
}
ARRAY_TYPES = {"Array", "ndarray", "ArrayLike", "ArrayTree", "PyTree", "Tensor", "DeviceArray"}
KEY_TYPES = {"PRNGKey", "PRNGKeyArray", "KeyArray"}
KEY_NAMES = re.compile(r"(key|rng|prng\w*|\w+_key|key_\w+|\w+_rng|rng_\w+|subkey)")
KEYS_NAMES = re.compile(r"(keys|\w+_keys|rngs)")
INT_NAMES = re.compile(
    r"(n|m|k|i|j|num|n_\w+|num_\w+|\w+_size|size|\w*steps|\w+_len|len_\w+|length|\w+_length|dim|\w+_dim|"
    r"dims|axis|count|capacity|depth|width|height|\w*iters|epochs?|index|\w+_index|step|rank|"
    r"horizon|window|seq_len|max_len)"
)
SEED_NAMES = re.compile(r"(seed|\w+_seed)")
FLOAT_NAMES = re.compile(
    r"(lr|learning_rate|rate|\w+_rate|eps|epsilon|temperature|temp|tau|gamma|beta|alpha|lam|"
    r"lambda_|tol|\w+_tol|threshold|thresh|scale|\w+_scale|sigma|std|dt|step_size|momentum|decay|"
    r"weight_decay|margin|delta|p|prob|\w+_prob|dropout|max_norm|clip|\w+_coef|coef|noise_level|limit|"
    r"\w+_limit|bound|cap|max_\w+|min_\w+)"
)
BOOL_NAMES = re.compile(r"(training|train|is_\w+|use_\w+|deterministic|verbose|inference|return_\w+|debug)")
INT_ARRAY_NAMES = re.compile(
    r"(labels?|\w+_labels|targets?|tokens?|token_ids|ids|\w+_ids|indices|idx|\w+_idx|actions?|classes)"
)
MASK_NAMES = re.compile(r"(mask|\w+_mask|masks|valid|dones?|\w+_valid)")


class Unbuildable(Exception):
    """No value can be synthesised for a parameter."""


def from_factory(settings: dict, names: list[str]):
    """Arguments from a user factory declared as `"module:function" = "module:factory"`, or None."""
    for name in names:
        spec = settings.get(name)
        if isinstance(spec, str) and ":" in spec:
            module, _, attr = spec.partition(":")
            factory = importlib.import_module(module)
            for part in attr.split("."):
                factory = getattr(factory, part)
            result = factory()
            if (
                isinstance(result, tuple) and len(result) == 2
                and isinstance(result[0], (tuple, list)) and isinstance(result[1], dict)
            ):
                return tuple(result[0]), dict(result[1])
            return (tuple(result) if isinstance(result, (tuple, list)) else (result,)), {}
    return None


class Synthesizer:
    """Builds small, consistent arguments: jaxtyping dimension names get one size across parameters."""

    def __init__(self, profile: int, typed_keys: bool, resolve=None):
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp
        self.resolve = resolve  # name -> module-level def, to see how callees use the arguments
        self.shape = SHAPES[profile]
        self.typed_keys = typed_keys
        self.dims: dict[str, int] = {}

    def for_def(self, node: ast.AST, static: set[str], skip: int = 0):
        """Arguments for the parameters of a def (AST) that have no default; `skip` drops self/cls."""
        a = node.args
        positional = (a.posonlyargs + a.args)[skip:]
        required = positional[: max(0, len(positional) - len(a.defaults))]
        notes, uses = annotations_of(node), usage_of(node, self.resolve)
        args = [self.value(p.arg, notes.get(p.arg), p.arg in static, uses.get(p.arg)) for p in required]
        kwargs = {
            p.arg: self.value(p.arg, notes.get(p.arg), p.arg in static, uses.get(p.arg))
            for p, default in zip(a.kwonlyargs, a.kw_defaults) if default is None
        }
        return args, kwargs

    def for_signature(self, func, notes: dict[str, ast.AST]):
        """Arguments for a runtime signature (e.g. a dataclass constructor) without defaults."""
        args, kwargs = [], {}
        for p in inspect.signature(func).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
                continue
            value = self.value(p.name, notes.get(p.name), False)
            if p.kind == p.KEYWORD_ONLY:
                kwargs[p.name] = value
            else:
                args.append(value)
        return args, kwargs

    def value(self, name: str, annotation: ast.AST | None, static: bool, use=None):
        value = self.from_annotation(annotation) if annotation is not None else None
        if value is None and use is not None:
            value = self.from_usage(use)
        if value is None:
            value = self.from_name(name)
        if static and not _hashable(value):
            value = tuple(value) if isinstance(value, list) else 3
        return value

    # -- annotations -------------------------------------------------------------------------

    def from_annotation(self, node: ast.AST):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # X | None
            for side in (node.left, node.right):
                if not (isinstance(side, ast.Constant) and side.value is None):
                    return self.from_annotation(side)
        name = _last(node.value if isinstance(node, ast.Subscript) else node)
        if isinstance(node, ast.Subscript):
            inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if name in ("Optional", "Union"):
                return self.from_annotation(inner[0])
            if name.lower() in ("tuple", "list", "sequence"):
                item = self.from_annotation(inner[0])
                seq = (item, item) if item is not None else None
                return list(seq) if seq is not None and name.lower() == "list" else seq
            kind = re.sub(r"\d+$", "", name).lower()
            if kind in JAXTYPING_DTYPES and len(inner) == 2 and isinstance(inner[1], ast.Constant):
                return self.jaxtyping(JAXTYPING_DTYPES[kind], str(inner[1].value))
            return None
        if name in ARRAY_TYPES:
            return self.array(self.shape, "float32")
        if name in KEY_TYPES:
            return self.key(())
        if name == "Callable" or (name[:1].isupper() and name not in ("Any", "None")):
            raise Unbuildable(f"no value for type {ast.unparse(node)}")
        return {"int": 3, "float": 0.5, "bool": False, "str": "a", "complex": 0.5j}.get(name)

    def jaxtyping(self, dtype: str, dims: str):
        shape = []
        for token in dims.split():
            token = token.lstrip("#").split("=")[0]
            if token in ("...",) or token.startswith("*"):
                continue
            if token.isdigit():
                shape.append(int(token))
            elif token.isidentifier() and token != "_":
                shape.append(self.dims.setdefault(token, 2 + len(self.dims) % 3))
            else:
                shape.append(3)
        return self.key(tuple(shape)) if dtype == "key" else self.array(tuple(shape), dtype)

    # -- names -------------------------------------------------------------------------------

    def from_name(self, name: str):
        if SEED_NAMES.fullmatch(name):
            return 0
        if KEYS_NAMES.fullmatch(name):
            return self.key((3,))
        if KEY_NAMES.fullmatch(name):
            return self.key(())
        if INT_NAMES.fullmatch(name):
            return 3
        if FLOAT_NAMES.fullmatch(name):
            return 0.5
        if BOOL_NAMES.fullmatch(name):
            return False
        if INT_ARRAY_NAMES.fullmatch(name):
            return self.array(self.shape, "int32")
        if MASK_NAMES.fullmatch(name):
            return self.array(self.shape, "mask")
        return self.array(self.shape, "float32")

    def from_usage(self, use):
        """A dict with the keys the body reads (`p["w"]`), or a tuple as long as it unpacks (`x, y = p`)."""
        if isinstance(use, int):
            return tuple(self.array(self.shape, "float32") for _ in range(use))
        return {key: self.from_usage(sub) if sub else self.from_name(key) for key, sub in use.items()}

    # -- values ------------------------------------------------------------------------------

    def array(self, shape: tuple[int, ...], dtype: str):
        jnp = self.jnp
        n = math.prod(shape)
        if dtype in ("int32", "uint32"):
            return (jnp.arange(n) % 3).astype(dtype).reshape(shape)
        if dtype == "mask":
            return (jnp.arange(n) % 2 == 0).astype("float32").reshape(shape)
        if dtype == "bool":
            return (jnp.arange(n) % 2 == 0).reshape(shape)
        return jnp.linspace(0.1, 0.9, n).astype(dtype).reshape(shape)

    def key(self, shape: tuple[int, ...]):
        random = self.jax.random
        key = random.key(0) if self.typed_keys else random.PRNGKey(0)
        n = math.prod(shape)
        return random.split(key, n).reshape(shape + key.shape) if shape else key


def usage_of(node: ast.AST, resolve=None, depth: int = 1) -> dict[str, object]:
    """How a def's body uses its parameters as containers: string keys read (nested as dicts), or
    the length of a tuple unpacking; with `resolve` (name -> def), also how module functions it
    passes them to use them, `depth` calls deep."""
    a = node.args
    params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    found: dict[str, object] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Subscript):
            keys, root = [], n
            while isinstance(root, ast.Subscript) and isinstance(root.slice, ast.Constant) \
                    and isinstance(root.slice.value, str):
                keys.insert(0, root.slice.value)
                root = root.value
            if keys and isinstance(root, ast.Name) and root.id in params:
                _merge(found, root.id, _nest(keys))
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in params:
            target = n.targets[0]
            if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
                _merge(found, n.value.id, len(target.elts))
        elif isinstance(n, ast.Call) and resolve is not None and depth > 0:
            callee = _callee(n, resolve)
            if callee is None or callee is node:
                continue
            inner = usage_of(callee, resolve, depth - 1)
            names = [p.arg for p in callee.args.posonlyargs + callee.args.args]
            for arg, name in zip(n.args, names):
                if isinstance(arg, ast.Name) and arg.id in params and name in inner:
                    _merge(found, arg.id, inner[name])
    return found


def _callee(call: ast.Call, resolve):
    """The def a call runs: `f(...)`, or `jax.grad(f)(...)`-style wrappers of a named function."""
    func = call.func
    if isinstance(func, ast.Call) and func.args:
        func = func.args[0]
    return resolve(func.id) if isinstance(func, ast.Name) else None


def _nest(keys: list[str]) -> dict:
    out: dict = {}
    for key in reversed(keys):
        out = {key: out}
    return out


def _merge(found: dict, name: str, use) -> None:
    """Fold one observed use into what is known of a parameter (dicts merge key by key)."""
    have = found.get(name)
    if isinstance(have, dict) and isinstance(use, dict):
        for key, sub in use.items():
            _merge(have, key, sub)
    elif have is None or have == {}:
        found[name] = use


def annotations_of(node: ast.AST) -> dict[str, ast.AST]:
    """Parameter annotations of a def, or the field annotations of a class body."""
    if isinstance(node, ast.ClassDef):
        return {
            s.target.id: s.annotation for s in node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        }
    a = node.args
    return {p.arg: p.annotation for p in a.posonlyargs + a.args + a.kwonlyargs if p.annotation is not None}


def _last(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return ""


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
