"""Leagues: a tournament whose field grows.  Authors submit bots over time; each
entry is checked in the sandbox and plays only its new games; the standings rank the
active entries.

Layers (each uses the tournament's own machinery underneath)::

    config      league.toml -> LeagueConfig; what an edit would change
    schedule    active field -> [LeagueGame]   (pure: a game is a function of its
                lineup and deal number, never of when it was scheduled)
    submission  an untrusted folder or archive -> a checked, hashed copy
    store       the tournament store's tables + entries and planned games
    run         new / submit / play pending / standings
    browse      games, an entry's record, its per-game stderr
    cli         the ``referee league`` click group
"""
