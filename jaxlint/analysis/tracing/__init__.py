"""Which code JAX traces, and how: discovery, parameters, static arguments."""
