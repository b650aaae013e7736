"""The ZeroMQ transport: msgpack messages, one per frame, between a ROUTER and a bot
(protocol/ZEROMQ.md), and the CURVE keys of remote bots."""
