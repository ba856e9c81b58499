"""Train the sample model for a few steps: python scripts/train.py --steps 3"""

import argparse

import jax

from sampleproj.data import make_data
from sampleproj.model import Config
from sampleproj.train import train

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    data = make_data(jax.random.key(0), 40, 4)
    params, losses = train(jax.random.key(1), data, Config(), args.steps, 16)
    print("final loss", float(losses[-1]))
