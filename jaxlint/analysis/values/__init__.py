"""The value domain: what each expression of traced code is (traced, static, unknown), and the module pass that runs it."""
