"""Transports: how protocol messages travel between the referee and a bot.

One small interface (``base.Transport``) with several implementations: stdio
(JSON lines over a bot's stdin/stdout), ZeroMQ (msgpack frames), in-memory (tests).
Everything above it -- the protocol session, the players, the runner -- is shared.
"""
