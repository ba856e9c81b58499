"""The project's modules: cross-module resolution and the summaries of calls followed into them."""
