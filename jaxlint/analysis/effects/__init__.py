"""The effect domain: stores, bare calls and side effects of traced code."""
