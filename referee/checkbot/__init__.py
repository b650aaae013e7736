"""The conformance checker for bot authors (``referee check-bot``): scenarios, the
checker that plays them through the real referee path, and its report."""
