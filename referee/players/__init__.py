"""Everything that is a player or starts a bot: bot specs and ``make_player``, the
external-bot player and its launcher, bot processes and their sandbox, remote seats,
the person at the terminal.  Built on ``referee.play`` (the ``Player`` interface)."""
