"""What the compilation cache is keyed on: static arguments, shapes and jits that change from one loop iteration or call to the next."""
