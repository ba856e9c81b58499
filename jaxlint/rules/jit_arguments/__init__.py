"""JAX3xx: `static_argnums`/`static_argnames` and `donate_argnums`/`donate_argnames` that JAX rejects or mishandles."""

from __future__ import annotations

# The jit-signature facts' policy for code they cannot see, stated on every page of the family.
JIT_SIGNATURE_LIMITATIONS = """
    `jax.pmap` counts as `jax.jit` here: its `static_broadcasted_argnums` are hashed and key
    its compilations as static arguments do, and its `donate_argnums` donate.
    Jitted functions are recognised where the code shows the transformation: a decorator, a
    `jax.jit(f, ...)`/`partial(jax.jit, ...)` call in the module, a method jitted in its class,
    and a jitted callable a class stores on `self` (`self.step = jax.jit(f)`, the attribute's
    only assignment), called as `self.step(...)` in its methods (a jit of a bound method,
    `self._eval = jax.jit(self._eval, donate_argnums=(2,))`, holds the instance: its
    `argnums` count from the parameter after `self`), and the jitted function a
    function defines and returns on every `return` (`@jax.jit def update` then `return
    update`, or `return jax.jit(update, static_argnums=1)`; `step = make_update()`, the name
    bound once), called through that name. A jitted callable built by
    code jaxlint cannot see, or handed around through containers and attributes of other
    objects, is not checked. A call `obj.step(...)` is taken for a
    call of a jitted method `step` unless `obj` is shown to be something else: a class (as in
    `Base.step(self, x)`) or a module, or an object the class keeps on `self` (`self.parts[i]`)
    that it builds from another class; a method that calls its own name on an object kept on
    `self` delegates to it, unless the class stores an instance of its own there. Neither are `static_argnums`,
    `static_argnames` or `donate_argnums` computed at run time. Arguments are judged by what
    the calling code shows of them (a literal, an array-returning call, an annotation); an
    argument made by an unknown call is unknown, and unknown arguments are never reported.
    An annotation naming a type of another project (not JAX, NumPy, jaxtyping or the
    frameworks the tables know) is taken for an array when its name is `Array` or ends in
    `Array`, as JAX projects name their aliases of `jax.Array`: a hashable class of a project
    so named would be reported.
    """

# The same policy as one-line principles, for every page of the family.
JIT_SIGNATURE_LIMITS = (
    "A function is known to be jitted only where the code shows it: a decorator, a `jax.jit(f)` call, a"
    " jitted callable on `self` or returned by a factory.",
    "A jitted callable built by code it cannot see, or handed around in containers and other objects'"
    " attributes, is not checked.",
    "`static_argnums`, `static_argnames` and `donate_argnums` computed at run time are not read.",
    "Arguments are judged by what the calling code shows (a literal, an array-returning call, an"
    " annotation); an unknown argument is never reported.",
    "Another project's type named `Array` or `...Array` is taken for an array: a hashable class so named"
    " would be reported.",
)
