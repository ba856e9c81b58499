"""JAX1xx: Python control flow and concretization on traced values."""

from __future__ import annotations

# The value analysis' policy for code it cannot see, stated on every page of the family.
TRACED_VALUE_LIMITATIONS = """
    A value is reported only when the analysis knows it is traced. Calls into code it cannot
    see (other packages, callables chosen at run time, decorated or type-dispatching helpers)
    return an unknown value, and an unknown value is never reported: a tracer that passes
    through such a call is missed. What the analysis does know:

    - **Calls it cannot follow, with known results.** Inside traced code, what `jax.grad`,
      `jax.value_and_grad` (and `jacfwd`, `jacrev`, `hessian`, and Equinox's and NNX's
      versions) make of a function it cannot follow returns traced values (the auxiliary
      output of `has_aux=True` stays unknown); a Flax layer applied to a traced input
      (`nn.Dense(4)(x)`) returns a traced array; a model's `apply` given traced variables or
      inputs (`state.apply_fn(...)` of Flax's `TrainState`, `network.apply(...)` of a name
      bound once to an instance of a Linen class of the project, or of a parameter declared
      `nn.Module` or such a class, or of any object given Flax's variables written out,
      `generator(train=False).apply({"params": p}, x)`) returns traced outputs, a pair with
      `mutable=[...]`; a draw
      from a traced key returns traced values, whatever object draws it (`dist.sample(seed=key)`,
      `sample_and_log_prob`, the key given as `seed=`, a key keyword or first); `functools.reduce` returns what its function
      returns; a few functions known to compute one array (`optax.global_norm`,
      `optax.safe_int32_increment`, `equinox.internal.unvmap_any`) return a traced one, and those known to return a pytree
      shaped like their first argument, each leaf computed with JAX operations (optax's
      projections, `optax.projections.projection_simplex`), return a traced array for a traced
      array and a tree of the same kind for a traced tree; einops (`rearrange`, `repeat`,
      `reduce`, `einsum`) returns an array of its first operand's kind, traced for a traced one.
      The functions JAX's example libraries hand back, unpacked where a name is bound once
      (`opt_init, opt_update, get_params = optimizers.adam(1e-3)`, `init_fun, apply_fun =
      stax.serial(...)`), return traced values given a traced argument: an optimizer's its
      state or parameters, a layer's `apply_fun` an array.
      JAX's shape and layout helpers
      compute on Python values whatever they are given (`jnp.shape`, `lax.broadcast_shapes`,
      `lax.padtype_to_pads`, `lax.conv_dimension_numbers`, `lax.conv_general_permutations`):
      their results are Python values. A parameter taken for an array (an
      unannotated one of a jitted function) that is sent a method JAX arrays lack
      (`obj.batch_axes()`) is some other object, and what that method returns is unknown.
      Inside `with jax.ensure_compile_time_eval():`, JAX evaluates operations on inputs that
      are not traced eagerly, so their results are traced only when an input is. A function
      of the module declared to return a JAX array (`-> jax.Array`, `Float[Array, "n"]`; not
      `ArrayLike`, which admits Python numbers, nor a NumPy type) or a sequence of them
      (`-> list[jax.Array]`, `tuple[jax.Array, ...]`), whose body returns what it gets from
      code the analysis cannot see (JAX's internal helpers), returns traced arrays when traced
      code calls it with a traced argument; where the body shows a Python value, that wins.
    - **Functions it follows.** Functions of the same module and of the project's own modules
      are followed in each calling context (a function a factory makes, differentiated eagerly
      and also jitted, is followed under the jit too), whatever they are given (an array a helper
      makes from static arguments, `jnp.array([...])`, is a tracer under `jit` too), also under a
      decorator that leaves their calls as they were (a runtime type checker:
      `jaxtyping.jaxtyped`, `beartype`, `typeguard.typechecked`, kauldron's `typechecked`;
      `typing.override`, `typing.final`), and under no other decorator that is not a JAX
      transformation (a function that `eqx.filter_jit` or `eqx.filter_vmap` transforms
      receives the arrays it is given traced, and any other argument as it is: Equinox traces
      arrays only), with the arguments bound as Python binds them: a static method called
      through `self` is given no instance, so `self.blocks(x, self.size)` binds `x` to its
      first parameter. A method is found as Python finds it: through `self`, through the
      class (`Ops.clip(x)`, of the module or of another module of the project), or through a
      name bound once to an instance (`noise = Noise()`, `Noise().sample(x)`), or through an
      attribute of `self` holding instances of one class of the module (`self.model.step(x)`,
      where the class stores that class's instances, or a parameter annotated with it, in
      `self.model`), in the class or its bases (a generic base, `Base[State]`, is `Base`),
      also where the instance is itself traced (a `flax.struct.PyTreeNode` whose jitted method
      receives it as a pytree: `self.loss(batch)` runs the method, bound to that traced
      instance). A method a subclass overrides (`step_env`)
      runs traced where a traced method of a base class, of the module or of another module
      of the project, calls it on `self` (`Environment.step`, jitted, calls
      `self.step_env(key, state, action, params)`): called on the subclass's instance, the
      base's method runs the override, which receives what that call passes there, each
      parameter the record its own annotation names (`state: EnvState`). A method the subclass,
      or a class nearer to it, defines itself hides the base's (a subclass's own plain `step`
      runs, not the jitted one). A function
      nested in a staged one and handed to code not seen (`agent.actor.apply_loss_fn(loss_fn=
      loss_fn)`, a callable parameter such as `differentiate(loss_fn)`, a helper imported
      relatively by a file linted alone) or to a function of another module of the project
      (`value_and_multi_grad(loss_fn, 2)(params)`, followed there with values, not with this
      module's functions) runs in that trace if it runs at all: what it computes with JAX is
      traced, its parameters not known. A nested function
      reads the names of the function around it as Python binds them, late: called there
      (directly, through `functools.partial` or a transformation, or handed to `lax.cond`,
      `lax.scan` and the like), it sees their values at that call, so a name bound or rebound
      to a tracer after the `def` is traced in it, and one rebound to a Python value before
      the call is not. Returned and called elsewhere, it sees them as they were where it was
      defined, so a rebinding after the `def` is missed there. The branches of a `lax.switch`
      given through a name (`branches = [on_new, on_replay]`, then `branches.append(on_mutate)`
      under a flag) are the items of the list or tuple the name is bound to once, with those
      `append`, `insert` and `extend` add to it anywhere in its scope: JAX traces every
      branch, whichever runs. The `__call__` of a plain class
      (no framework module) is followed where a method calls an instance it keeps on `self`:
      every value its class's methods store in `self.layer` (None aside: calling None fails) is
      made by that one class, of the module or of another module of the project, or is a
      parameter annotated with it, or the class declares the field with it and stores none,
      and `self.layer(...)` runs its `__call__` with the call's values. A module of a namespace
      package (a folder without `__init__.py`) that imports its own package by absolute name
      (`from app.types import Transition` in `app/systems/dqn.py`) finds it in the folder
      above the package, as Python run from the repository does.
    - **Parameters declared JAX arrays.** A parameter of a function traced code calls (of the
      module or the project), annotated as a JAX array (`jax.Array`, `jnp.ndarray`,
      `jaxtyping.Array`, a jaxtyping dtype of one such as `Float[Array, "b n"]`), that the
      call passes a value the analysis cannot see (what another package or an object of
      unknown type returned, `self.module.apply(...)`) is a traced array: inside a trace, a
      JAX array the code computes is a tracer. So is what a parameter declared a callable
      that returns a JAX array returns when traced code calls it (`predicate:
      Callable[[jnp.ndarray], jnp.ndarray]`, `predicate(midpoint)` in a loop body), unless
      the parameter is rebound. What the call is seen to pass wins (a Python value, None, a
      Pallas reference, a function of the module); `np.ndarray`, `ArrayLike`, `chex.Array`
      and Python types admit concrete NumPy or Python values and say nothing. A traced value a
      function receives for a parameter declared any array type (`chex.Array` and
      `np.ndarray` too, not a sequence of arrays) is a traced array there, not a pytree: a
      tracer is no NumPy array.
    - **The code's own tracer tests.** A name a closure reads from eager code is a constant at
      trace time, unless the code tests it against `jax.core.Tracer` (`isinstance(topk,
      jax.core.Tracer)`, or a function of the module whose body only returns that test of its
      parameter, `def _is_tracer(v): return isinstance(v, jax.core.Tracer)`): where the test
      may have held (its true edge, through `not`, `and` and `or`: inside `if _is_tracer(topk)
      or topk:`), the code says it may be a tracer, and it is taken for one (a caller that
      jits the function may be in another package). A value the analysis sees to be a Python
      one (a default, a literal fixed by `functools.partial`) stays one. The other way round, a
      JAX array computed in traced code is a tracer: under `if not isinstance(jnp.atleast_1d(x),
      jax.core.Tracer):` (a check meant for concrete calls) nothing runs in traced code, and
      nothing there is reported. A tuple or list of arrays is no tracer: the test says nothing
      of it.
    - **What a transformation is given.** `jax.jit(f)` (and every other transformation)
      traces the function `f` stands for: a def, a lambda (also one bound to a name first),
      a method through an instance or through its class (`jax.jit(Scale.from_factors)`: a
      class method binds the class, a static method nothing), the class's own def or one
      inherited from a base of the module, a `functools.partial` of one,
      or what a function or method of the module returns (`jax.jit(make_energy(cutoff))`,
      `jax.jit(nonbonded.to_reference())`, where it returns `partial(energy, cutoff=cutoff)`
      or a nested def); the arguments a `partial` fixes are constants of the trace. JAX's own
      `jax.tree_util.Partial` is read as `functools.partial`. A function
      of the module that hands its own parameter, unchanged, to a transformation or a kernel
      call (`def compile_step(fn): return jax.jit(fn, donate_argnums=0)`) transforms what each
      of its calls passes, with the keywords it forwards through `**kwargs`; arguments
      forwarded through `*args` leave the call alone.
    - **Static arguments.** The arguments a transformation's `static_argnums` and
      `static_argnames` name reach the function as the caller's Python values. Checkpoints
      (`jax.checkpoint`, `jax.remat`, `nnx.remat`, `nn.remat`, as a decorator, through
      `functools.partial` or wrapping a function) take `static_argnums` as `jax.jit` does;
      `jax.checkpoint` accepts `static_argnames` too but traces those arguments all the same.
      Any other parameter with a default other than None keeps it, a Python value, until a
      call of the function `jax.jit` (or `nnx.jit`) transforms, in the module, passes that
      parameter something other than None (positionally or by keyword): `jit` traces what is
      passed, so the parameter is traced (`@jax.jit def sample(x, n=10)` called as
      `sample(x, 4)`: `jnp.zeros((n,))` raises). The calls of a jitted method are not read for
      this, nor those of a `vmap` (whose `in_axes` may pass an argument as it is).
    - **Arguments passed as given.** A `vmap`'s `in_axes=None` arguments, a `shard_map`'s whose
      `in_specs` entry is `None` (static there, where `P()` replicates an array), and the arguments a
      differentiation leaves out of its `argnums` or passes by keyword (`jax.grad`, `jax.value_and_grad`,
      `jacfwd`, `jacrev`, `hessian`, Equinox's and NNX's versions; `argnums` 0 by default),
      reach the function as the caller gives them: `jax.value_and_grad(loss)(params, x, n)`
      hands `loss` the caller's `n`, a Python int inside a jit that makes it static, a tracer
      where the caller's is one. A value the analysis cannot see (what a replay buffer it does
      not read samples) given to a differentiation made in staged code is taken as traced, as
      what staged code computes is; where the caller is not seen at all, they are unknown.
      Under a jit around the transformation (`jax.jit(jax.grad(f))`) they are traced all the
      same.
    - **`with jax.disable_jit():`** In eager code, such a block runs in Python what JAX would
      trace: `jax.jit(f)(x)` (`eqx.filter_jit`, `nnx.jit` likewise) calls `f` on `x`, and
      `lax.scan`, `fori_loop`, `while_loop`, `map`, `associative_scan`, `cond` and `switch`
      call their bodies on concrete values (`cond` and `switch` only the branch taken). A
      function used only there is not traced. It is where it is also traced elsewhere (handed
      to `lax.scan` outside the block, called from a jitted function), under a transformation
      that still traces in the block (`vmap`, `pmap`, `checkpoint`, `jax.jit(jax.vmap(f))`),
      and when defined in the block but called after it. A jitted function bound to a name
      (`step = jax.jit(f)`) is taken for traced even where only such a block calls it. Inside
      traced code the block's loops run in Python on the caller's tracers, and their bodies
      are analysed as traced; a `fori_loop` whose bounds are Python ints there passes its
      body a Python int index.
    - **Calling a transformed function** inside traced code returns what the function returns,
      every leaf traced, for `jit`, `vmap`, `pmap`, `shard_map` and `checkpoint`:
      `jax.vmap(lambda a: a > 0)(x)` is a traced boolean array, a tuple stays a tuple (whose
      truth is its length). A differentiation returns the structure of the argument instead,
      taken for a traced value of unknown structure. A `jit`, `vmap`, `pmap`, `shard_map` or
      `checkpoint` of a callable the analysis cannot see (`jax.vmap(self.recurrent_fn)`),
      called in traced code with a traced argument, returns traced values: such a
      transformation returns JAX arrays. A JAX operation so transformed
      (`jax.vmap(jnp.var)`), or with arguments fixed by `functools.partial`
      (`partial(jnp.var, keepdims=True)`, mapped or not), is still that operation: called in
      traced code, it returns a traced array. `jax.vjp(f, x)`, `jax.linearize(f, x)` and
      `jax.jvp(f, (x,), (t,))` call `f` at once: inside traced code, on that trace's tracers.
    - **Custom derivatives.** `jax.named_call` returns the function itself: its arguments are
      the caller's values, a Python int stays an int under `jit`. `jnp.vectorize` is read the
      same way: called eagerly with its core shape, the function runs on concrete arrays (host
      NumPy works there); called from traced code, it receives the caller's tracers.
      `jax.custom_jvp` and
      `jax.custom_vjp` trace nothing themselves: called eagerly or under a top-level `jax.grad`, the function and its
      rules run on concrete values, so one that wraps NumPy or host code is left alone. A
      function so decorated is traced where traced code calls it, and then so are the rules it
      registers (`defjvp`, `defvjp`): a function given a derivative rule is there to be
      differentiated, even where this module only calls it, so a rule is reported even if
      nothing differentiates the function under `jit` in the code linted. A `custom_vjp`
      backward rule receives the residuals its forward rule returns as they were built: arrays
      traced, Python values (a shape, a callable) as they are. The arguments it names in
      `nondiff_argnums` or `nondiff_argnames` reach the function and its rules as given.
    - **Attributes of traced pytrees** are traced only where the structure is known: the
      carry of a `lax` loop built from its initial value (a tuple literal handed over by eager
      code keeps its items: `(jnp.zeros(n, bool), x, 0)` carries two traced arrays; a tuple
      repeated, `(0,) * len(grid)`, carries copies of its items; a name bound once, by a plain
      assignment of anything but a list, which may have changed in place, holds what was
      assigned) or from what its body returns: JAX requires the carry a `while_loop`, `fori_loop` or `scan` body
      returns to have the structure of the one it receives, so where the body returns a tuple
      display, an item it returns as a JAX array (a `jax.numpy`/`lax` call, or a local name
      bound only to such calls) is an array on entry too (`enabled, x = carry` where the body
      returns `(jnp.logical_and(enabled, ...), x)`; a carried tuple, whose truth is its
      length, stays one), or a parameter annotated with a class
      of the module or of another module of the project that annotates the field as an array
      and does not declare it static, read
      before any copy that replaces it. A nested function's parameter without annotation that
      every call of it passes the enclosing function's annotated parameter, unchanged
      (`@jax.vmap def op(x)` called as `op(x)`, or `jax.vmap(op)(x)`, in `def project(x:
      Transform)`), holds that class too: a transformation keeps a pytree's class. A nested
      function whose name is read other than to call it or to transform it and call the
      result at once (handed on, returned), or whose calls pass different values, is given
      nothing of the kind. A traced value a function receives for a parameter annotated with
      a `typing.NamedTuple` or a dataclass pytree class (below) of the module or of another
      module of the project (`def loss(params, batch: Transition)`), or Flax's `TrainState`
      (or a project class built on it; its `step` is a traced leaf, `apply_fn` and `tx`
      static), is an instance of that
      class whose fields are what the class declares: an array field is a traced array, a
      field annotated with such a class is such an instance in turn, a static field a Python
      value, one declared an array or number or None (`Optional[int]`, `jax.Array | None`) a
      traced array where the code shows it is not None (arithmetic, an ordering, `-x`, past
      an `is None` test) and unknown elsewhere (None stays None), one that may be None
      otherwise unknown, any other a traced pytree child; the class is found through a
      module-level alias (`TrainState = managers.State`, `NodeTree = Tree[Node]`) as through
      an import, and a base that adds no field (`Generic[N]`, `abc.ABC`) is none; unpacked or
      indexed, a NamedTuple gives its fields in order. A NamedTuple class the module makes by a
      call (`State = collections.namedtuple("State", ["values", "idx"])`) declares no types:
      each field is a traced pytree child of no known structure. A traced field of an instance whose
      value shows no structure (the carry `State(idx=i, tree=tree)` of a `lax` loop, `tree`
      given by a caller not seen) is what its class declares it, as above: `state.tree` of a
      field `tree: Tree` is a traced `Tree`. A plain method of such an instance whose class is
      another module's (`state.tree.child(i)`) is followed there, the instance its `self`, as a
      function of that module is. A `lax` loop returns its carry with the
      structure of the initial one
      (JAX requires it), every leaf traced: what `while_loop` and `fori_loop` return, and
      the carry `scan` returns, keep the items and records of the carry; the outputs `scan`
      stacks, and what `lax.map`, `cond` and `switch` return, keep those of what the body
      returns, every leaf a traced array. A dataclass pytree of the module
      (`flax.struct.dataclass`, `chex.dataclass`, `jax.tree_util.register_dataclass`, a
      `flax.struct.PyTreeNode`, or a copy of Flax's decorator kept in the project: a def marked
      `dataclass_transform` (PEP 681) whose body registers the class as a pytree node; its
      fields follow those of a record base class, of the module or of another module of the
      project; a class deriving from `flax.struct.PyTreeNode` or `equinox.Module` through
      classes of the project is one with no decorator of its own, as subclassing them makes a
      dataclass) holds every field it does not declare static as a child, so a
      field annotated as a Python number or bool (`row: int`; `Optional[int]` as above) is
      traced too, as a scalar array; an Equinox module's is not, as
      `filter_jit` keeps non-array fields static. Where nothing says the class (the carry of
      a `lax.while_loop` that eager code builds with a helper, an unannotated parameter), a
      field is known by its name: one that the module's classes declare, every one of them,
      as an array field of a NamedTuple or dataclass pytree (not a sequence of arrays, not
      static), and that no class of the module makes a method, a class variable or an
      instance attribute, is a traced array. A property that computes a JAX array (every
      `return` a `jax.numpy`/`lax` operation returning one: `return jnp.array(self.length -
      self.t - 1, int)`) runs where it is read, and in traced code JAX stages it: read from a
      traced instance, whose class an annotation says or, by the same rule, its name, it is a
      traced array (`range(state.remaining)` fails); a property or method of a NamedTuple is
      none of its fields. Elsewhere attributes of traced pytrees are unknown.
    - **Instances built in the analysed code.** An instance that the analysed code builds of a
      `typing.NamedTuple` or a dataclass (`dataclasses`, Flax, chex, Equinox) of the module or
      of another module of the project
      keeps what was passed for each field, or its default, a Python value: reading the field
      back (`state.done`, `state[1]`, unpacking) gives that value, through copies that replace
      some fields (`_replace`, `.replace`, `dataclasses.replace`), helpers and loops; where two
      paths build different classes, nothing is known of the fields. A class whose constructor
      does more than store its arguments (its own `__init__` or `__post_init__`, a field that
      converts its argument or is left out of the constructor) is not followed. As a `lax` loop
      carry or a `lax.cond` operand, such an instance has its fields traced except those the
      class declares static (`field(pytree_node=False)`, `eqx.field(static=True)`, static
      metadata, or a specifier of the project's own named `static_field()`, whichever way
      the field is read); a plain dataclass, which may be registered elsewhere with other static
      fields, has unknown ones. An instance of any other plain class of the module (no
      framework module) has unknown attributes, but its own methods are followed when called
      on a name bound only to it, where it is built (in the traced function, around a body
      handed to `lax.scan`, or at module level), with the caller's values; built in traced
      code, its own `__init__` runs there on the arguments given, and so does an Equinox
      module's `__check_init__` on the fields the constructor sets.
    - **Items and leaves.** An item of a traced pytree picked by a traced index is an array,
      since no list, tuple or dict takes a tracer as its index, nor a multi-dimensional one (a
      tuple holding a slice, None or `...`: `mask[:, None]`). The function `jax.tree.map`
      applies to traced trees receives traced arrays, their leaves (with `is_leaf`, the
      subtrees it picks are taken for unknown values), and the tree it returns holds what the
      function returns (`tree_map(jnp.iscomplexobj, tree)` and `tree_map(lambda x: x.size,
      tree)` give Python values), in the first tree's structure where it is known (a record's
      fields, a tuple's items): `tree_map(lambda x: x[::-1], steps)` of a record of arrays is
      a record of arrays. `d.pop("mask")` of a traced pytree (a dict: an array has no `pop`)
      reads what `d["mask"]` reads; `d.get("mask")` may give None, and is not known, but
      `d.get("mask", jnp.ones_like(r))` gives that leaf or the default, traced where either is. A list the function holds (a display, `[]` included) holds what
      `append`, `insert` and `extend` add to it afterwards, as elements of unknown number:
      `losses.append(loss)` in a loop, then `np.stack(losses)`, stacks tracers.
    - **JAX arrays computed by eager code.** A name that traced code reads from the eager code
      around it (or from its module) is a constant at trace time; where every assignment of
      it computes a JAX array (`temperature = jnp.asarray(temperature)`, not a metadata query
      such as `jnp.finfo`, nor a mesh, sharding or initialiser), an operator applied to it in
      staged code (under `jit`, in a `lax` loop or branch; not under a `vmap` alone, nor
      inside `jax.ensure_compile_time_eval()`) is staged like any JAX operation and gives a
      tracer: `if temperature > 0.5:` in a `while_loop` body fails. Such a constant imported
      from another module is not seen.
    - **Frameworks.** Flax, Equinox and Haiku module methods count as traced where the
      framework traces them (`__call__`, `@nn.compact`, transformed functions); a method called
      from user code jaxlint cannot see is analysed only with what its own body shows, and
      Haiku's `hk.get_state` and `hk.get_parameter` read arrays as traced as the arguments. A
      module method's parameter without a default is taken for traced when it has no
      annotation (or `Any`, which says no more), or one that names an array type
      (`jax.Array`, `Float[Array, "b n"]`, jaxtyping's `Scalar`, kauldron's `Float["b n"]`,
      a union with one, any package's `...Array`) or a class of the module or of another module of the project;
      annotated with a Python
      type (`int`, `str`, `tuple[int, ...]`, `Literal["train", "decode"]`, or a name the module
      binds once to one of these: `Shape = tuple[int, ...]`), it is a Python value; with a type
      from elsewhere that names no array (another package's `Shape` or mode type), unknown.
      Aliases imported from another module are not followed. Under `jax.jit` an annotation
      makes nothing static. What the module's callers pass is evidence too: when the module
      calls instances of a module class (`Skip()(x, y.shape)`, `self.skip = Skip()` in
      `setup` then `self.skip(...)`, a field declared with the class and no value (`skip:
      Skip`, which the constructor fills: `self.skip(...)`), a class field's default reached
      through `self.skip_cls` or `functools.partial`, a subclass that inherits the
      `__call__`; and a Flax
      `net.apply(variables, x, n=...)` or `net.init(rngs, x, n=...)` without `method=`, which
      runs `__call__` with the arguments after its first) and every such call passes a
      Python value for a parameter of its `__call__` (a literal, a string, an array's
      `shape`, `ndim`, `size` or `dtype`, an entry or slice of a shape, a tuple of or
      arithmetic on these, a name bound only to one, a parameter of the calling function
      that its jit declares static with `static_argnums`/`static_argnames`, or that a method
      of a framework module declares a type no tracer belongs to: `length: int`), the
      parameter is a Python value, whatever its annotation. An instance handed to the
      constructor of a framework module of the module that defines no `__init__` becomes a
      field, and is followed there. One call passing anything else (an array,
      a parameter the jit traces, another attribute such as `self.features`), a call that
      unpacks its arguments (`*args`, `**kwargs`), a class or an instance handed to other
      code (`run(Skip())`, `run(layer)` with `layer = Skip()`, `nn.Sequential([Skip()])`,
      `nn.remat(Skip)`), an `apply` given `method=` or defined by the class itself, or an
      instance whose `apply` or `init` is read (`jax.jit(Skip().apply)`) leaves the
      parameter as its annotation says; so does a class no call of which is in view.
      Instances kept in a container and called from it are not seen, so an array passed
      there is missed. A parameter taken for traced for lack of evidence (no annotation, no
      default) is decided from the calls the whole project makes, wherever they are: every
      module of the project that names the class is read, the instances followed (made and
      called at once, bound to a name, stored on `self` in any method, or handed as a keyword
      to a constructor of a class of that module, whose methods call it as `self.<field>`),
      and when every call passes a Python value (as above, an attribute of `self` the class
      only ever sets to one, as a test's `setUp` does, or a field a framework module declares
      a Python number, string, bool or tuple of them, `size: Tuple[int, int] = (64, 64)`, that
      its methods never set) the parameter is one; when every
      call passes either that or a parameter of the calling function with a literal default,
      or a conditional choosing between them (`max_len if decode else x.shape[-2]`), it is
      unknown. A module building a relative-position bias from `np.arange(qlen)` where every
      block calls it with `x.shape[-2]` folds constants on purpose. A parameter the method
      uses as a dimension, passed as received, alone or in a tuple or list written out, where
      an array is given its shape (`jnp.zeros((n, d))`, `jnp.tile(x, [num_samples, 1])`,
      NumPy's constructors, `range(n)`), is a Python number wherever the module runs (a tracer
      there fails): it is traced only where a call in view passes it a value that may be
      traced, and unknown where no call decides it. One call passing an
      array, or the class or an instance handed to other code in any module, decides nothing
      (testing an instance's identity or truth, `if self.rpe is not None:`, hands nothing on,
      nor does naming the class in an annotation; calling another of its own methods, `self.pe_layer.forward_with_coords(...)`, is no
      hand-over where that method uses its instance only through `self.<name>` and calls only
      such methods or Flax's own, `self.param`, `self.make_rng`); a module created later that calls the class is read when the module that defines it is
      linted again. A
      bound method handed to a transformation (`jax.jit(obj.step)`,
      `eqx.filter_jit(model.method)`) is traced when the instance is built in this module from
      a class defined here (`obj = Stepper(...)`, the only assignment of `obj`, or
      `Stepper(...).step`): its parameters after `self` are traced as the transformation's
      rules say (under `eqx.filter_jit` only arrays), while `self`, bound into the method, is
      taken for a Python value, so a branch on an array field of an Equinox module is missed.
      A function handed to an optax function, by `learning_rate=`/`step_size=` or as its
      first argument (`optax.sgd(schedule)`, `optax.scale_by_schedule(fn)`, a schedule a
      module factory returns), runs inside the step that applies the transformation, on a
      traced step count. The jittable version of a chex value assertion
      (`chex_assertion(assert_fn, jittable_assert_fn=fn)`, as chex builds its own) runs only
      when the assertion's arguments hold tracers: its array arguments are traced, while the
      static version runs on concrete values. The solvers given to `lax.custom_root` and `lax.custom_linear_solve`
      are traced: their
      first parameter receives the function being solved (a Python callable), the next the
      traced right-hand side. Inside a model that a NumPyro inference entry point traces
      (`NUTS(model)`, `SVI`, `Predictive`), `numpyro.sample` and `numpyro.param` return traced
      arrays, a site given `obs=` returns the observation as the model received it, and
      `numpyro.deterministic` the value it records (a module that imports only `numpyro`, not
      `jax`, is linted too). The model's own arguments are what its caller hands to
      `mcmc.run(key, *args)`, `svi.run(...)` or `Predictive(model)(key, *args)`: the sampler
      closes over them, so a Python number stays one (`jnp.zeros(n)`, `if scale > 1.0` work)
      and a `jax.numpy` function of one is traced (`jnp.sum(y) > 0` fails), while a method of
      one is NumPy's or JAX's as the caller decides and is not judged. A module that asks a
      sampler to compile them in (`MCMC(..., jit_model_args=True)`) has them traced.
    - **Pallas.** Kernels (passed to `pl.pallas_call`, `pl.kernel`, `plgpu.kernel` or
      `pltpu.emit_pipeline`), bodies given to `pl.run_scoped` or decorated with
      `@pl.when`/`@pl.loop`, and the index maps of `pl.BlockSpec` run traced: a kernel's parameters are references, not tracers, and what is
      loaded from one (`x_ref[...]`, `x_ref[i]`) is a traced array, while stores into it
      (`o_ref[...] = y`) are how a kernel writes its results. A `run_scoped` body receives
      pytrees of references, so `refs[0]` there is taken for one of them, never for a load.
      Copy descriptors, semaphores and block specifications are Python objects, not arrays. A
      kernel is found when the call names it (directly, through `functools.partial`, or
      through a variable every assignment of which names a function), not when it arrives as
      an argument. What a `functools.partial` fixes in eager code is a Python value in the
      kernel; fixed in traced code (`pl.pallas_call(partial(kernel, scale=s), ...)` in a jitted
      function, `s` computed there), it is a value of that trace, and the kernel is followed
      with it (JAX refuses a kernel that captures one: pass it as an input).
    - **Branches never analysed.** A private module constant (a name with a leading underscore
      that its module binds once, to a literal, and never rebinds, deletes or declares
      `global`: `_USE_EAGER = False`) keeps its value in traced code, so a branch it rules out
      is never analysed. A public name, or one the module rebinds, is a setting that a test or
      another module may patch, and both branches are analysed; patching a private constant
      from outside (`mod._USE_EAGER = True`) is not seen. A function's own `*args`, never
      rebound, holds the positional arguments its call passed beyond the named ones, so
      `len(args)` is that count, and a comparison of known numbers (`len(args) == 1` where the
      call passed two) rules out the branch it fails; a call that unpacks an iterable into its
      arguments (`f(*xs)`) leaves the count unknown. Inside traced code, the branch of
      `isinstance(x, T)` with every `T` a NumPy type (`np.ndarray`, `np.generic`, ...), a
      Python scalar type (`int`, `float`, `bool`, `complex`, `str`, `bytes`) or a SciPy sparse
      class (`scipy.sparse.csr_matrix`) sees `x` as a value known at trace time, which a
      tracer (or a list of them) never is; the rest of that branch is analysed as usual,
      since a value may be traced on one path to the test and a Python number on another.
      Where the value tested is a traced array (`x[0]` of a jit's traced list), the branch
      never runs in traced code and is not analysed. The arms of a conditional expression
      are read the same way
      (`int(r) if isinstance(r, float) else r.astype(int)`).
    - **Code that never runs.** Statements after an unconditional `return`, `raise`,
      `continue` or `break` in the same block (or after an `if` whose branches all end so)
      never run: nothing in them is analysed, and a call there (`jax.jit(f)`,
      `lax.cond(c, f, g, x)`, `lax.scan(body, ...)`) or a decorated def there traces nothing,
      as with `raise NotImplementedError` above a half-written implementation. A `with` body
      that raises is not taken to end its block (`contextlib.suppress` swallows the error),
      nor is a loop or a `try`.
    - **None.** The `x is None` branch of a value known not to be None is never analysed. A
      value is known not to be None when it is a literal other than None, an array, a
      parameter annotated with a type that excludes None (not `Optional[...]`, `X | None`,
      `Any`, `object` or `PyTree`, and without a `None` default, which makes any annotation
      optional), a static argument given such a value, or a name a test has shown is not None
      on every path to it (`if x is None: return`, `assert x is not None`; a plain copy
      `b = a` is narrowed with `a` until either is rebound). A body that eager code hands to
      `lax.cond`, `lax.scan` and the like reads that code's names as they are at that call, so
      a name that a test there has shown is not None, before every call that hands the body
      over, is not None in the body. A keyword argument that `functools.partial` fixes for a
      parameter whose default is None is taken not to be None when it is read from an object
      or computed (`partial(f, size=plan.size)`): fixing a parameter only to give back its
      default would be pointless, so a bug on the None path of such a parameter is missed. A
      name fixed there (`partial(f, size=size)`) may forward an optional argument's None and
      stays undecided. A parameter with a `None` default under `jax.jit` may be None, even
      when every call in view passes a value.
    - **Probes.** Code inside a `try` whose `except` catches `TypeError` or one of JAX's tracer
      errors (`ConcretizationTypeError`, `TracerBoolConversionError`, ...), or inside
      `contextlib.suppress(TypeError)`, probes for a concrete value on purpose and is not
      reported: under a transformation its handler runs, as written. A handler for `Exception`
      (or a bare `except:`) is not taken for such a probe, since it would as easily hide the
      bug. When every such handler leaves (`return`, `raise`, `continue`, `break`), the code
      after the `try` in its block runs only where the probe succeeded, on concrete values, and
      is not reported either (`try: v = np.asarray(n)` / `except TypeError: return x` /
      `if np.any(v <= 0): ...`).
    """

# The same policy as one-line principles, for every page of the family.
TRACED_VALUE_LIMITS = (
    "Only values known to be traced are reported: what code it cannot see returns (another package, a"
    " callable chosen at run time) is unknown.",
    "Project functions are followed where called or jitted (not from test files), not through decorators"
    " but JAX's and type checkers.",
    "A pytree's fields are traced only where its structure is known: a `lax` loop carry, an annotated"
    " or locally built NamedTuple or dataclass.",
    "A name traced code reads from the eager code around it is a constant, unless the code tests it"
    " against `jax.core.Tracer`.",
    "Code that never runs traced is not analysed: after an unconditional `return` or `raise`, under"
    " `jax.disable_jit()`, on a branch a private constant rules out.",
    "A `try` that catches `TypeError` or a JAX tracer error is a deliberate probe for a concrete value:"
    " nothing in it is reported.",
    "A framework module's parameter is judged by its annotation and by what every call of the module"
    " in the project passes it.",
)
