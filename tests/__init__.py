"""The test suite: one package, imported as `tests.<package>.<module>` everywhere."""
