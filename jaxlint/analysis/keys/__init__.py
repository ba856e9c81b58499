"""The key domain: where PRNG keys are made, consumed and consumed again."""
