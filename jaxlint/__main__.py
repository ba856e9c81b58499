"""`python -m jaxlint` runs the command-line interface."""

from __future__ import annotations

from jaxlint.cli import main

if __name__ == "__main__":
    main()
