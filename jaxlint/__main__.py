"""`python -m jaxlint` runs the command-line interface."""

from jaxlint.cli import main

if __name__ == "__main__":
    main()
