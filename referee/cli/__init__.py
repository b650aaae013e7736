"""The ``referee`` command: every click command, and the program's entry point
(signal handlers and the exit hook are installed here, never by the library)."""
