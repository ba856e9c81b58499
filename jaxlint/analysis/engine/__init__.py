"""The Python engine: names and scopes, walks, control-flow graphs, the dataflow solver and its lattice; it knows nothing of JAX."""
