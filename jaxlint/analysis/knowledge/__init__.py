"""What jaxlint knows about JAX and the frameworks around it, as data."""
