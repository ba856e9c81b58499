import haiku as hk
import jax

from pkg.positions import Positions, RelativePositions


class Model:
    def __init__(self, use_positions=True):
        if use_positions:
            self.positions = Positions()
        else:
            self.positions = None

    def __call__(self, x):
        if self.positions is not None:
            x = x + self.positions(x.argmax())
        return x


model = Model()


@jax.jit
def run(x):
    return model(x)


class Attention(hk.Module):
    def __init__(self, relative=True, name=None):
        super().__init__(name=name)
        if relative:
            self.relative = RelativePositions()
        else:
            self.relative = None

    def __call__(self, x):
        length = x.shape[0]
        if self.relative is not None:
            x = x + self.relative(length, length).sum()
        return x
