"""The recompilation rules' loop facts, each computed by its own module.

Which values change between iterations, and which definitions reach a use, come from the
loop-variance domain of the shared solver (`loop_variance`, `TracedModule.loops`); these
modules read them.

- does the shape of an argument change between iterations of a loop? (`varying_shapes`)
- which jitted callables are built anew each time they are used? (`rebuilt_jits`, over the
  calls that run again and again of `repeated_calls`, in this module or, handed over by
  `repeated_builders`, in another)
- how many iterations does a `for` loop over a static `range` make? (`trip_counts`), and does
  its static bound change between calls? (`static_bounds`)
- which calls of jitted callables key the cache on which arguments? (`jit_calls`)
- which static leaves of a jit's arguments change between calls? (`static_leaves`)
- which calls of one jit change its signature where nothing else changes? (`call_signatures`)
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jaxlint.analysis.shapes.call_signatures import SignatureChange, signature_changes
from jaxlint.analysis.shapes.jit_calls import JitCall, forwarded, jit_calls
from jaxlint.analysis.shapes.rebuilt_jits import Rebuild, RebuiltJits
from jaxlint.analysis.shapes.repeated_builders import RepeatedBuilders
from jaxlint.analysis.shapes.repeated_calls import RepeatedCalls
from jaxlint.analysis.shapes.static_bounds import StaticBounds
from jaxlint.analysis.shapes.static_leaves import ChangingLeaf, ChangingNumber, changing_leaves, changing_numbers
from jaxlint.analysis.shapes.trip_counts import TripCounts
from jaxlint.analysis.shapes.varying_shapes import VaryingShapes

if TYPE_CHECKING:
    from jaxlint.analysis.engine.names import FunctionNode
    from jaxlint.analysis.effects.effects import Effects
    from jaxlint.analysis.project.traced_module import TracedModule


class ShapeFacts:
    def __init__(self, module: TracedModule, effects: Effects):
        self.varying = VaryingShapes(module).varying
        repeated = RepeatedCalls(module, effects)
        rebuilt = RebuiltJits(module, effects, repeated)
        self._rebuilt = rebuilt
        self.rebuilt_per_call = rebuilt.per_call_of
        self._builders = RepeatedBuilders(module, repeated, rebuilt.variants) if module.project is not None else None
        self.method_of = repeated.method_of
        self.trip_count = TripCounts(module, effects).trip_count
        self.changing_bound = StaticBounds(module, repeated).changing_bound
        self._module = module
        self._effects = effects
        self._jit_calls: list[JitCall] | None = None

    def rebuilt_jits(self) -> list[Rebuild]:
        """Jitted callables built anew each time they are used (`rebuilt_jits.py`). The calls this
        module makes again and again of another module's function that builds one on every call
        are handed to that module, which reports the build (`repeated_builders.py`)."""
        if self._builders is not None:
            self._builders.record()
        return self._rebuilt.find()

    def jit_calls(self) -> list[JitCall]:
        """Calls of jitted callables, with their traced arguments (`jit_calls.py`)."""
        if self._jit_calls is None:
            self._jit_calls = jit_calls(self._module, self._effects)
        return self._jit_calls

    def signature_changes(self) -> list[SignatureChange]:
        """Calls of one jit that pass the same computation another way (`call_signatures.py`)."""
        return signature_changes(self._module)

    def changing_leaves(self) -> list[ChangingLeaf]:
        """Static leaves a jitted function changes in what a loop passes back (`static_leaves.py`)."""
        return changing_leaves(self._module, self._effects)

    def changing_numbers(self) -> list[ChangingNumber]:
        """Python numbers a loop changes, passed to a filtering jit (`static_leaves.py`)."""
        return changing_numbers(self._module)

    def forwarded(self, call: JitCall, arg: ast.expr) -> list[tuple[ast.Call, ast.expr, FunctionNode]]:
        """The calls of the plain function a jitted call sits in whose parameter has `arg`'s shape."""
        return forwarded(self._module, call, arg)
