"""Running games: the ``Player`` interface and ``run_game`` (time control, faults,
game records), a series of games for ``referee play``, records re-run and narrated,
the transcript.  Built on the rules engine and the protocol's error types."""
