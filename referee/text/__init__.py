"""Text shown about what bots sent (``quoting``): below the protocol and the
transports, which both quote a bot's bytes; imports nothing else of the referee."""
