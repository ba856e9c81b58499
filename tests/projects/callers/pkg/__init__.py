from .scale import scale
