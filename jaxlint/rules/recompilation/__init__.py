"""JAX5xx: recompilation — shapes that change on every call, jit rebuilt on every call, unrolled
loops, static leaves that change, call signatures that change."""

from __future__ import annotations

# The shape and loop facts' policy for code they cannot see, stated on every page of the family.
RECOMPILATION_LIMITATIONS = """
    Shapes, sizes and loop trip counts are known only where the code shows how they change:
    arrays sliced, grown or filtered in the loop, sizes computed from the loop's own values.
    A size that comes from code jaxlint cannot see (a data loader, a configuration read at run
    time, another package's function) is unknown, and an unknown size is never reported, so a
    loader's ragged batches are missed unless the loop shows them. A jitted function rebuilt
    by code jaxlint cannot see is not judged.
    """

# The same policy as one-line principles, for every page of the family.
RECOMPILATION_LIMITS = (
    "A jitted function's calls are found however it is reached: its name, `Cls.f`, a forwarding"
    " wrapper, a name bound to a factory's result or a `partial` of it.",
    "Shapes, sizes and trip counts are known only where the code shows how they change: sliced, grown"
    " or filtered in the loop, sized from its values.",
    "A size from code it cannot see (a data loader, a configuration read at run time, another package)"
    " is unknown, and never reported.",
    "A jitted function rebuilt by code it cannot see is not judged.",
)
