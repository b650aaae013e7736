"""Waiting on many transports at once: one thread, one system call.

Owns ``Waiter``: the readiness of many *handles* -- file descriptors (a stdio bot's
stdout, a process's exit fd) and ZeroMQ sockets (a ZeroMQ bot's ROUTER) -- each
registered with a key.  Only file descriptors: ``epoll`` (the cost of a wait grows
with what is ready, not with what is watched: hundreds of bots in flight).  Any
ZeroMQ socket among them: ``zmq_poll`` over them all (a ZeroMQ socket is not a file
descriptor one can wait on level-triggered).

A transport says what to wait on (``wait_handles``); what is readable is read with
``recv(0)``.  Nothing here knows what a message is.
"""

from __future__ import annotations

import contextlib
import select
from collections.abc import Hashable
from typing import Any

import zmq


class Waiter:
    """Handles to wait on, each with a key (``add``, ``discard``); ``wait`` returns
    the keys of the handles that are readable."""

    def __init__(self) -> None:
        self._keys: dict[Any, Hashable] = {}
        self._epoll = select.epoll()
        # Built only while ZeroMQ sockets are among the handles (pyzmq's Poller
        # forgets a handle in time proportional to how many it holds).
        self._poller: zmq.Poller | None = None
        self._sockets = 0  # ZeroMQ sockets among the handles

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, handle: Any, key: Hashable) -> None:
        """Wait on ``handle`` (an int fd or a ZeroMQ socket) for ``key``."""
        if handle in self._keys:
            self.discard(handle)
        self._keys[handle] = key
        self._poller = None
        if isinstance(handle, int):
            self._epoll.register(handle, select.EPOLLIN)
        else:
            self._sockets += 1

    def discard(self, handle: Any) -> None:
        """Stop waiting on ``handle`` (no error if it is not waited on, or closed)."""
        if handle not in self._keys:
            return
        del self._keys[handle]
        self._poller = None
        if isinstance(handle, int):
            with contextlib.suppress(OSError, ValueError):  # closed already: epoll forgot it
                self._epoll.unregister(handle)
        else:
            self._sockets -= 1

    def wait(self, timeout: float) -> list[Hashable]:
        """The keys of the readable handles (each once), waiting at most ``timeout``
        seconds for one (0: only look)."""
        timeout = max(0.0, timeout)
        if self._sockets:
            poller = self._poller
            if poller is None:
                poller = self._poller = zmq.Poller()
                for h in self._keys:
                    poller.register(h, zmq.POLLIN)
            ready = [h for h, _ in poller.poll(int(timeout * 1000 + 0.999))]
        else:
            try:
                ready = [fd for fd, _ in self._epoll.poll(timeout)]
            except InterruptedError:
                ready = []
        keys = self._keys
        out: dict[Hashable, None] = {}
        for h in ready:
            if h in keys:
                out[keys[h]] = None
        return list(out)

    def close(self) -> None:
        self._epoll.close()
        self._keys.clear()
