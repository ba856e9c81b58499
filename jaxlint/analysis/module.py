"""The facts about one module that every rule reads: names, traced functions, values, and the
domains (effects, arrays, shapes, keys) built on them.

Built once per module, lazily: a rule that needs only names never pays for the value
analysis, nor one that reads no keys for the key flow.
"""

from __future__ import annotations

from functools import cached_property

from jaxlint.analysis.arrays.arrays import ArrayFacts
from jaxlint.analysis.arrays.traced_stores import TracedStores
from jaxlint.analysis.effects.effects import Effects
from jaxlint.analysis.keys.key_streams import StaleDraw, stale_draws
from jaxlint.analysis.keys.keys import KeyFlow
from jaxlint.analysis.project.traced_module import TracedModule
from jaxlint.analysis.shapes.hashability import UnhashableStatic, unhashable_statics
from jaxlint.analysis.shapes.jit_operands import NonArrayArgument, non_array_arguments
from jaxlint.analysis.shapes.shapes import ShapeFacts
from jaxlint.analysis.tracing.stale_closures import StaleClosure, stale_closures
from jaxlint.timings import timed


class ModuleFacts(TracedModule):
    """The module's traced code and values (`TracedModule`), and the domains built on them."""

    @cached_property
    @timed("effects")
    def effects(self) -> Effects:
        """Stores, bare calls and side effects (the purity rules' facts)."""
        return Effects(self)

    @cached_property
    @timed("hashability")
    def unhashable_statics(self) -> list[UnhashableStatic]:
        """Static arguments of the module's jits that are, or are passed, unhashable (`hashability.py`)."""
        return unhashable_statics(self)

    @cached_property
    @timed("jit operands")
    def non_array_arguments(self) -> list[NonArrayArgument]:
        """Arguments of jitted calls that no array can be made of (`jit_operands.py`)."""
        return non_array_arguments(self)

    @cached_property
    @timed("shapes")
    def shapes(self) -> ShapeFacts:
        """Shapes that change between loop iterations, repeated calls, static trip counts."""
        return ShapeFacts(self, self.effects)

    @cached_property
    @timed("arrays")
    def arrays(self) -> ArrayFacts:
        """Which expressions are known JAX arrays, in eager code too."""
        return ArrayFacts(self, self.effects)

    @cached_property
    @timed("traced stores")
    def traced_stores(self) -> TracedStores:
        """Stores into traced values, and what shows the value stored into to be an array."""
        return TracedStores(self, self.effects)

    @cached_property
    @timed("keys")
    def keys(self) -> KeyFlow:
        """Where PRNG keys are made, consumed and consumed again (see `keys.py`)."""
        return KeyFlow(
            self.names, self.discovery, self.source.text, self.options, self.project, self.path, deferred=not self.reported
        )

    @cached_property
    @timed("stale closures")
    def stale_closures(self) -> list[StaleClosure]:
        """Locals a jitted nested function reads that the function around it rebinds between two
        calls of the jit (`stale_closures.py`)."""
        return stale_closures(self.names, self.discovery.roots, self.effects.assertions)

    @cached_property
    @timed("key streams")
    def stale_key_draws(self) -> list[StaleDraw]:
        """Draws from a key a class keeps on `self` as a stream that leave it in place, in the class
        or through an instance handed in (`key_streams.py`)."""
        text = self.source.text
        if "random" not in text and "key" not in text and "rng" not in text:
            return []
        class_of = self.project.class_of if self.project is not None else None
        return stale_draws(self.names, class_of, self.keys.draws_from)
