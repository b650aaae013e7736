"""Remote bots: started by their authors elsewhere, admitted by their CURVE keys.

Owns ``RemoteListener`` / ``wait_for_remote_bot``: a listening endpoint that admits
a bot only with its own CURVE key (``zmq.auth.thread.ThreadAuthenticator`` with the
allowed public keys); its ``hello`` must carry the name the key belongs to.  CURVE
is required whenever the endpoint is not loopback.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping

from ...text.quoting import quote, show
from ..base import MalformedMessage, MessageTooLarge, TransportClosed, TransportTimeout
from .codec import MAX_MESSAGE_BYTES
from .router import OnRefusal, Refusal, _decode, _Frame, _Router, is_loopback, log
from .transport import ZmqTransport


class RemoteListener:
    """A listening endpoint that admits remote bots by their CURVE keys.

    ``allowed_keys`` maps each bot's name to its z85 public key; ``server_secret``
    is the referee's z85 secret key.  Without ``server_secret`` (no CURVE) only a
    loopback endpoint is accepted, and the hello's name must be one of
    ``allowed_keys``' names.  ``on_refusal`` is told of each refused connection (a
    ``Refusal``; called from the authenticator's thread too), as well as the log."""

    def __init__(self, endpoint: str, allowed_keys: Mapping[str, bytes],
                 server_secret: bytes | None, *,
                 max_message_bytes: int = MAX_MESSAGE_BYTES,
                 on_refusal: OnRefusal | None = None) -> None:
        if server_secret is None and not is_loopback(endpoint):
            raise ValueError(
                f"listening on {endpoint} (not loopback) needs CURVE: give the referee's "
                f"secret key (referee keys server) and the bots' public keys")
        self.allowed = dict(allowed_keys)
        self.curve = server_secret is not None
        self._router = _Router(endpoint, max_message_bytes=max_message_bytes,
                               server_secret=server_secret, allowed_keys=allowed_keys,
                               heartbeat=not is_loopback(endpoint),
                               on_refusal=on_refusal)
        self.admitted: dict[str, ZmqTransport] = {}  # connected, by name
        self._ready: dict[str, ZmqTransport] = {}  # admitted, not yet accepted
        self.transports_own_router = False
        self._refused_hellos: dict[str, int] = {}  # refusals after the handshake, by why

    @property
    def endpoint(self) -> str:
        return self._router.endpoint

    @property
    def max_message_bytes(self) -> int:
        return self._router.max_message_bytes

    @property
    def refusals(self) -> int:
        """Connections refused so far (handshake failures and unknown keys)."""
        return self._router.refusals

    def accept(self, timeout: float, name: str | None = None) -> tuple[str, ZmqTransport]:
        """The next bot to connect with an allowed key and send a hello carrying the
        name that key belongs to (``name``: that bot only; others admitted meanwhile
        wait for their own ``accept``): its name and its transport.  The hello is
        left in the transport, to be read by the protocol session like any first
        message.  Raises TransportTimeout when no such bot came in time."""
        deadline = time.monotonic() + timeout
        router = self._router
        pumped = False  # even with no time left, what has arrived is looked at once
        while True:
            for ready in list(self._ready):
                if name is None or ready == name:
                    t = self._ready.pop(ready)
                    log.info("admitted remote bot %r on %s", ready, self.endpoint)
                    return ready, t
            while router.unclaimed:
                identity, item = router.unclaimed.popleft()
                if identity in router.ignored:  # sent before it was refused
                    continue
                owner = self._admit(identity, item)
                if owner is None:
                    router.ignored.add(identity)
                    continue
                router.unclaimed.appendleft((identity, item))
                self.admitted[owner] = self._ready[owner] = ZmqTransport(
                    router, identity, owns_router=self.transports_own_router, name=owner,
                    on_close=self._closed)
            if any(name is None or ready == name for ready in self._ready):
                continue
            left = deadline - time.monotonic()
            if left <= 0 and pumped:
                who = f"bot {name!r}" if name else "allowed bot"
                raise TransportTimeout(f"no {who} connected to {self.endpoint} within "
                                       f"{timeout:.1f}s")
            router.pump(max(0.0, left))
            pumped = True

    def _closed(self, transport: ZmqTransport) -> None:
        """A bot's session is over: it may connect again (a new hello)."""
        if self.admitted.get(transport.name) is transport:
            del self.admitted[transport.name]

    def _admit(self, identity: bytes, item: _Frame) -> str | None:
        """The name of the bot behind a first message, or None (logged, told) when it
        is refused."""
        router = self._router
        try:
            hello = _decode(item, router.max_message_bytes)
        except (MalformedMessage, MessageTooLarge) as e:
            hello = {"error": str(e)}
        claimed = hello.get("name") if hello.get("type") == "hello" else None
        if self.curve:
            owner = router.key_owner.get(item.user_id or "")
        else:
            owner = claimed if claimed in self.allowed else None
        if "error" in hello and len(hello) == 1:
            why = f"its first message, which must be a hello, is unreadable: {hello['error']}"
        elif hello.get("type") != "hello":
            why = f"its first message is {show(hello.get('type'))}, not a hello"
        elif not isinstance(claimed, str):
            why = ("its hello has no name (the bot's name, as its key file has it)"
                   if claimed is None else f"its hello's name is {show(claimed)}, not a text")
        elif owner is None:
            why = f"the name {quote(claimed)} is not a listed bot"
        elif claimed != owner:
            why = f"its hello names {quote(claimed)}, but its CURVE key is {quote(owner)}'s"
        elif owner in self.admitted and self.admitted[owner].identity not in router.dropped:
            why = f"{quote(owner)} is already connected"
        else:
            # Its earlier connection, if any, is gone: this one replaces it (that
            # one's player finds it gone when it next uses it).
            old = self._ready.pop(owner, None)
            if old is not None:
                old.owns_router = False  # the new one shares the router
                old.close()
            return owner
        log.warning("refused a bot on %s: %s", self.endpoint, why)
        n = self._refused_hellos[why] = self._refused_hellos.get(why, 0) + 1
        router.report(Refusal(self.endpoint, why,
                              claimed if isinstance(claimed, str) else None, n))
        with contextlib.suppress(TransportClosed):
            router.send(identity, {"type": "error", "code": "protocol",
                                   "message": f"refused: {why}", "action": "disconnect"})
        return None

    def close(self) -> None:
        for t in list(self.admitted.values()):
            t.close()
        self._router.close()


def wait_for_remote_bot(
    endpoint: str,
    allowed_keys: Mapping[str, bytes],
    server_secret: bytes | None,
    timeout: float,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> tuple[str, ZmqTransport]:
    """Listen on ``endpoint`` until one allowed bot connects (see
    ``RemoteListener.accept``); its name and a transport that owns the socket."""
    listener = RemoteListener(endpoint, allowed_keys, server_secret,
                              max_message_bytes=max_message_bytes)
    listener.transports_own_router = True
    try:
        name, transport = listener.accept(timeout)
    except BaseException:
        listener.close()
        raise
    return name, transport
