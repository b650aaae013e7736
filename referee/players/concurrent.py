"""Many games in flight in one thread: an event loop over the bots' pipes and sockets.

Owns ``GameLoop``.  Each game is ``referee.play.runner.game_steps`` -- the one code
path of a game -- driven here instead of by ``run_game``: when a game asks an
external bot (a player with ``ask``/``take``/``expire``/``wait_handles``:
``ExternalPlayer``), the request is sent and the game waits, without a thread, while
the loop serves the other games; one ``Waiter`` (epoll, or zmq_poll when ZeroMQ bots
are among them) watches every bot being waited for.  Players that cannot be waited
for so (in-process bots, a human) are asked at once, the blocking way.

Time control stays exact.  A bot's clock runs only while the referee waits for it:

* A reply found when the loop *looks* without waiting (``Waiter.wait(0)``, at the
  start of each turn of the loop) arrived while the referee was busy with other games:
  the bot is charged up to when the loop last looked (it was not there then), never
  the referee's own work since.
* A reply the loop *waited* for is charged up to when the wait returned.
* A bot whose deadline passed and whose reply was not there when the loop looked is
  out of time (its reply came after the deadline, if at all).

So the referee's delays -- other games' work, a record written, a bot started -- are
never counted against a bot; the bot may gain at most one turn of the loop.  Each
decision's charged time is what ``run_game``'s timeout check and the record's ``ms``
use (``Answer.elapsed``).

Starting a bot (``start_game`` of a bot not yet running) and telling bots the game is
over happen inside the game's steps, the blocking way: they cost the loop time, not
the bots.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..play.runner import Answer, Ask, GameRecord, GameSteps, ask_now
from ..transport.waiting import Waiter

#: What a finished game hands to its callback: its record, or the exception that
#: stopped it (a referee bug: a bot's misdeeds are in the record).
Done = Callable[[GameRecord | None, BaseException | None], None]


@dataclass(eq=False)
class _InFlight:
    """One game in flight: its steps, and what it waits for."""

    steps: GameSteps
    done: Done
    player: Any = None  # the player asked, while waiting
    handles: Sequence[Any] = ()
    sent: float = 0.0  # when the request was sent
    time_left: float = 0.0
    asked: int = 0  # which ask this is (deadlines of earlier asks are stale)
    waiting: bool = False
    #: Up to when the bot is charged: the last look that did not see its reply yet
    #: (None until a look sees it).
    arrived: float | None = None


@dataclass
class LoopStats:
    """What the loop did: decisions answered through it, and how long the referee
    took to notice each answer after it was charged (``noticed``: seconds from the
    charged time to the moment the loop took the reply, a bound on the referee's own
    delay per decision)."""

    decisions: int = 0
    timeouts: int = 0
    noticed: list[float] = field(default_factory=list)


class GameLoop:
    """Games in flight (``start``), served by ``run_once`` / ``run`` in this thread.
    ``watch`` adds a descriptor of the caller's own (a worker's task pipe) to the
    same wait."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 keep_stats: bool = False) -> None:
        self.clock = clock
        self.waiter = Waiter()
        self.games: set[_InFlight] = set()
        self._deadlines: list[tuple[float, int, int, _InFlight]] = []  # a heap
        self._seq = itertools.count()
        self._looked = clock()
        self._watched: dict[int, Callable[[], None]] = {}
        self.stats: LoopStats | None = LoopStats() if keep_stats else None

    def __len__(self) -> int:
        """Games in flight."""
        return len(self.games)

    def start(self, steps: GameSteps, done: Done) -> None:
        """Begin a game; ``done(record, None)`` is called when it is over (or
        ``done(None, error)`` if it stopped on the referee's own error)."""
        g = _InFlight(steps, done)
        self.games.add(g)
        self._advance(g, None)
        self._look()

    def watch(self, fd: int, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever ``fd`` is readable (until ``unwatch``)."""
        self._watched[fd] = callback
        self.waiter.add(fd, ("fd", fd))

    def unwatch(self, fd: int) -> None:
        self._watched.pop(fd, None)
        self.waiter.discard(fd)

    # -- one game ------------------------------------------------------------------

    def _advance(self, g: _InFlight, answer: Answer | None) -> None:
        """Run the game on until it waits for a bot, or ends."""
        clock = self.clock
        while True:
            try:
                ask: Ask = next(g.steps) if answer is None else g.steps.send(answer)
            except StopIteration as stop:
                self._finish(g, stop.value, None)
                return
            except Exception as e:  # the referee's own bug (REFEREE_BUGS): the game ends
                self._finish(g, None, e)
                return
            player: Any = ask.player  # an ExternalPlayer, when it has wait_handles
            handles = getattr(player, "wait_handles", None)
            handles = handles() if handles is not None else ()
            if not handles:  # cannot be waited for here: ask it the blocking way
                answer = ask_now(ask, clock)
                continue
            try:
                player.ask(ask.request, timed=False)
            except Exception as e:  # the bot is gone or stuck (a BotFault)
                answer = Answer(None, e, 0.0)
                continue
            g.sent = sent = clock()
            g.player = player
            g.time_left = ask.request.time_left
            answer = self._take(g, sent)  # a reply may be buffered already
            if answer is not None:
                continue
            g.handles = handles
            g.asked += 1
            g.waiting = True
            for h in handles:
                self.waiter.add(h, g)
            heapq.heappush(self._deadlines, (sent + g.time_left, next(self._seq), g.asked, g))
            return

    def _take(self, g: _InFlight, charged_until: float) -> Answer | None:
        """The bot's reply if it has come (charged up to ``charged_until``)."""
        elapsed = charged_until - g.sent if charged_until > g.sent else 0.0
        player = g.player
        try:
            value = player.take(0.0)
        except Exception as e:
            return Answer(None, e, elapsed + getattr(player, "freeze_wait", 0.0))
        if value is None:
            return None
        # Waiting for the bot to be frozen after its reply is its own time.
        return Answer(value, None, elapsed + getattr(player, "freeze_wait", 0.0))

    def _answered(self, g: _InFlight, answer: Answer) -> None:
        for h in g.handles:
            self.waiter.discard(h)
        g.handles = ()
        g.waiting = False
        g.arrived = None
        g.player = None
        self._advance(g, answer)
        self._look()

    def _look(self) -> None:
        """Note the replies that have arrived, without waiting (one ``epoll`` with no
        timeout, after each game's step): each is charged up to the previous look,
        which had not seen it.  Looking this often keeps what a bot may gain while
        the referee works for other games to one step of one game."""
        t = self.clock()
        for key in self.waiter.wait(0.0):
            if isinstance(key, _InFlight) and key.waiting and key.arrived is None:
                key.arrived = self._looked if self._looked > key.sent else key.sent
        self._looked = t

    def _finish(self, g: _InFlight, record: GameRecord | None,
                error: BaseException | None) -> None:
        self.games.discard(g)
        g.done(record, error)

    # -- the loop ------------------------------------------------------------------

    def run_once(self, timeout: float = 1.0) -> None:
        """One turn: look at what arrived, else wait for it (at most ``timeout``
        seconds, or until the next deadline), then hand replies to their games and
        time out the bots past their deadlines."""
        clock = self.clock
        charged_until = self._looked  # replies there now arrived after this
        now = clock()
        ready: list[Hashable] = self.waiter.wait(0.0)
        if not ready:
            if self._deadlines:
                timeout = min(timeout, self._deadlines[0][0] - now)
            ready = self.waiter.wait(timeout)
            now = charged_until = clock()
        self._looked = now
        stats = self.stats
        for key in ready:
            if isinstance(key, tuple):  # a watched descriptor of the caller's
                callback = self._watched.get(key[1])
                if callback is not None:
                    callback()
                continue
            assert isinstance(key, _InFlight)
            if not key.waiting:
                continue
            seen = key.arrived if key.arrived is not None else (
                charged_until if charged_until > key.sent else key.sent)
            answer = self._take(key, seen)
            if answer is None:
                key.arrived = None  # only part of it: charged from a later look
            else:
                if stats is not None:
                    stats.decisions += 1
                    stats.noticed.append(clock() - seen)
                self._answered(key, answer)
        # Deadlines passed with no reply when the loop looked (at ``now``).
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] <= now:
            _, _, asked, g = heapq.heappop(deadlines)
            if not g.waiting or g.asked != asked:
                continue  # answered already
            if stats is not None:
                stats.timeouts += 1
            self._answered(g, Answer(None, g.player.expire(), g.time_left))

    def run(self) -> None:
        """Serve the games in flight until none is left."""
        while self.games:
            self.run_once()

    def close(self) -> None:
        """Stop the games still in flight (they are not finished: no callback)."""
        for g in list(self.games):
            g.steps.close()
        self.games.clear()
        self.waiter.close()
