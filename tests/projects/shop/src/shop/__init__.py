"""A small package whose jitted step calls helpers of its other modules."""

from shop.ops.update import overwrite_first

__all__ = ["overwrite_first"]
