"""The conformance checker for bot authors: ``referee check-bot COMMAND``.

Owns the check list and how the checks are run: the games of ``scenarios`` played to
exercise a bot, the deliberate provocations (unknown message types and fields, a
``rejected`` reply), and the transcript recorded for the ``report`` (a pass/fail
table with the transcript of each failure).

The bot is driven through the real referee path -- ``referee.players.external.ExternalPlayer``
over the stdio or ZeroMQ transport, games run by ``referee.play.runner.run_game`` -- with
the bot under test in every seat (one process per seat), so that what passes here
plays in a tournament.  The checker only wraps the pieces: a transport wrapper adds
the unknown fields, a player wrapper sends the deliberate rejection, and a recorder
listens to the transcript hook.

Must not import: the tournament layer.
"""

from __future__ import annotations

import json
import secrets
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..bots import make_bot
from ..game import Decision, GameConfig
from ..play.runner import (
    BotFault,
    DecisionRequest,
    Fault,
    FaultPolicy,
    GameRecord,
    GameResult,
    InProcessPlayer,
    Player,
    TimeControl,
    run_game,
)
from ..players.botspec import TRANSPORTS
from ..players.external import ExternalPlayer
from ..players.launcher import Connection, launch_bot
from ..players.process import DEFAULT_MEMORY_MB
from ..players.sandbox import Sandbox, explain
from ..transport.base import Transport
from .report import FAIL, LINE_CHARS, SKIP, TRANSCRIPT_LINES, Report
from .scenarios import EXTRA_GAMES, KINDS, SCENARIOS, Scenario, extra_scenario, kind_of

# --- listening to the transcript hook ---------------------------------------------------


def _short(payload: Any) -> str:
    """A message for the transcript: a request's observation and events are left out
    (the legal list says what was asked), and long lines are cut."""
    if isinstance(payload, Mapping) and payload.get("type") in ("request", "game_over"):
        payload = {k: ("{...}" if k == "observation" else f"[{len(v)} events]"
                       if k == "events" and isinstance(v, list) else v)
                   for k, v in payload.items()}
    text = payload if isinstance(payload, str) else json.dumps(payload, default=str)
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 3] + "..."


@dataclass
class _Pending:
    request_id: int
    legal: list[str]
    sent: float


class Recorder:
    """The ``on_message`` hook of every seat's ExternalPlayer: keeps each bot's recent
    transcript, the decision kinds it was asked and answered, and its latencies."""

    def __init__(self) -> None:
        self.lines: dict[str, deque[str]] = {}
        self.pending: dict[str, _Pending] = {}
        self.last_request: dict[str, _Pending] = {}
        self.offered: Counter[str] = Counter()
        self.chosen: Counter[str] = Counter()
        self.latencies: list[float] = []
        self.last_answer: dict[str, str | None] = {}
        self.last_sent: dict[str, str] = {}  # type of the last message sent to each bot
        self.hellos: dict[str, dict[str, Any]] = {}
        self.answered: set[tuple[str, int]] = set()
        self.max_id: Counter[str] = Counter()  # the highest request id sent to each bot
        self.stray: Counter[str] = Counter()  # second answers, answers to ids never sent
        self.first_stray: dict[str, list[str]] = {}
        self.sent_at: dict[tuple[str, int], float] = {}  # when each request was sent
        self.late: list[float] = []  # latencies of replies that came after the limit
        self.late_bound: list[float] = []  # ... known only to be at most this
        self.answered_kind: Counter[str] = Counter()  # kinds offered in requests answered
        self.last_decision: dict[str, float] = {}  # when each bot last sent a decision
        self.t0 = time.time()

    def _line(self, bot: str, arrow: str, text: str, now: float) -> None:
        buf = self.lines.setdefault(bot, deque(maxlen=200))
        buf.append(f"{now - self.t0:8.3f}s {arrow} {bot}: {text}")

    def transcript(self, bot: str, n: int = TRANSCRIPT_LINES) -> list[str]:
        return list(self.lines.get(bot, ()))[-n:]

    def on_message(self, direction: str, bot: str, payload: Any, now: float) -> None:
        arrow = {"send": "->", "recv": "<-", "stderr": "!!", "note": ".."}.get(direction, "??")
        if not (direction == "note" and str(payload).startswith("latency")):
            self._line(bot, arrow, _short(payload), now)
        if not isinstance(payload, Mapping):
            return
        kind = payload.get("type")
        if direction == "send":
            self.last_sent[bot] = str(kind)
            if kind == "request":
                legal = [str(t) for t in payload.get("legal", [])]
                p = _Pending(int(payload.get("id", 0)), legal, now)
                self.pending[bot] = self.last_request[bot] = p
                self.sent_at[(bot, p.request_id)] = now
                self.max_id[bot] = max(self.max_id[bot], p.request_id)
                self.last_answer[bot] = None
                self.offered.update({k for k in map(kind_of, legal) if k})
        elif direction == "recv" and kind == "decision":
            rid = payload.get("id")
            q = self.pending.get(bot)
            previous = self.last_decision.get(bot, 0.0)
            self.last_decision[bot] = now
            if q is not None and rid == q.request_id:
                del self.pending[bot]
                self.answered.add((bot, q.request_id))
                self.latencies.append(now - q.sent)
                self.answered_kind.update({k for k in map(kind_of, q.legal) if k})
                text = self._answer_text(payload.get("decision"), q.legal)
                self.last_answer[bot] = text
                k = kind_of(text) if text in q.legal else None
                if k:
                    self.chosen[k] += 1
            elif (bot, rid) in self.answered or not (
                    type(rid) is int and 0 < rid <= self.max_id[bot]):
                # A second answer, or an id never sent.
                self.stray[bot] += 1
                self.first_stray.setdefault(bot, self.transcript(bot))
            else:
                # A late answer to a request given up after a timeout: harmless
                # (PROTOCOL.md, Request ids); the timeout is what counts.
                sent = self.sent_at.get((bot, rid)) if type(rid) is int else None
                if sent is not None:
                    self.answered.add((bot, rid))
                    # From when the bot could start on it: it may have been busy with
                    # an earlier request (a queue of late replies is one slow answer).
                    took = now - max(sent, previous)
                    if q is not None and now - q.sent > 0.002:
                        self.late.append(took)  # it came while we were reading
                    else:
                        # Read only once the bot was asked again (or later): it came
                        # at some time before, so this is an upper bound.
                        self.late_bound.append(took)
        elif direction == "recv" and kind == "hello":
            # A new connection: its request ids start again.
            self.hellos[bot] = dict(payload)
            self.answered = {(b, i) for b, i in self.answered if b != bot}
            self.sent_at = {(b, i): t for (b, i), t in self.sent_at.items() if b != bot}
            self.max_id[bot] = 0
            self.pending.pop(bot, None)

    @staticmethod
    def _answer_text(decision: Any, legal: Sequence[str]) -> str | None:
        if type(decision) is int and 0 <= decision < len(legal):
            return legal[decision]
        return decision if isinstance(decision, str) else None

    def fault_kinds(self, bot: str) -> set[str]:
        """The kinds a fault of ``bot`` concerns: those of the request it was answering
        (narrowed to the kind of its answer, when the answer names one of them)."""
        p = self.last_request.get(bot)
        if p is None or self.last_sent.get(bot) != "request":
            return set()  # not a fault in answering a request
        offered = {k for k in map(kind_of, p.legal) if k}
        answer = self.last_answer.get(bot)
        k = kind_of(answer) if answer else None
        return {k} if k in offered else offered


# --- provocations ------------------------------------------------------------------------


class ProvokingTransport:
    """Wraps a transport: while ``on``, adds unknown fields to every message the referee
    sends, and sends a message of an unknown type before the first request (a bot
    must ignore both: forward compatibility).  Reports what it injects to ``note``."""

    def __init__(self, inner: Transport, note: Callable[[str, dict[str, Any]], None]) -> None:
        self.inner = inner
        self.note = note
        self.on = False
        self.sent_unknown = False

    def send(self, message: dict[str, Any]) -> None:
        if self.on and message.get("type") != "bye":
            if message.get("type") == "request" and not self.sent_unknown:
                self.sent_unknown = True
                odd = {"type": "x_check_bot_notice", "text": "an unknown message type: ignore it",
                       "x_items": [1, 2.5, None, {"nested": True}]}
                self.note("send", odd)
                self.inner.send(odd)
            message = {**message, "x_check_bot": {"unknown": "field", "ignore": [1, 2]}}
        self.inner.send(message)

    def recv(self, timeout: float) -> dict[str, Any]:
        return self.inner.recv(timeout)

    def close(self) -> None:
        self.inner.close()


class CheckedSeat:
    """A seat's Player: the ExternalPlayer under test, plus the deliberate rejection
    (``reject_next``): the bot's next answer is met with ``rejected`` (code
    ``timeout``, action ``substituted``) and the first legal decision is played."""

    def __init__(self, inner: ExternalPlayer) -> None:
        self.inner = inner
        self.name = inner.name
        self.reject_next = False
        self.rejected_at: int | None = None  # runner request id of the rejection
        self.after_rejection: bool | None = None  # the next request was answered

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        self.inner.start_game(game_id, seat, config, seed)

    def decide(self, request: DecisionRequest) -> Decision | str:
        answer = self.inner.decide(request)  # a BotFault propagates to the runner
        if self.rejected_at is not None and self.after_rejection is None:
            self.after_rejection = True
        if self.reject_next and request.observation.get("phase") == "play":
            self.reject_next = False
            self.rejected_at = request.request_id
            sub = request.legal[0]
            self.inner.rejected(
                request.request_id, "timeout",
                f"check-bot: a deliberate rejection (your answer {answer!s} arrived fine): "
                f"a bot must log a rejection and carry on; the referee played {sub.text!r}",
                "substituted", sub.text)
            return sub
        return answer

    def rejected(self, request_id: int, code: str, message: str, action: str,
                 substitute: str | None) -> None:
        self.inner.rejected(request_id, code, message, action, substitute)

    def on_seating(self, bots: Sequence[str]) -> None:
        self.inner.on_seating(bots)

    def end_game(self, game_id: str, result: GameResult,
                 events: Sequence[dict[str, Any]]) -> None:
        self.inner.end_game(game_id, result, events)


# --- launching the bot -------------------------------------------------------------------


Launch = Callable[[], Connection]


def make_launcher(command: Sequence[str], transport: str, name: str, recorder: Recorder,
                  time_control: TimeControl, cwd: str | None,
                  wrappers: list[ProvokingTransport], *, sandbox: Sandbox | None = None,
                  memory_mb: int | None = DEFAULT_MEMORY_MB,
                  stderr_sink: Callable[[str], None] | None = None) -> Launch:
    """A ExternalPlayer launcher starting ``command`` over ``transport`` with the
    referee's one launcher (``referee.players.launcher.launch_bot``: the same sandbox and
    limits as a tournament), its transport wrapped in a ProvokingTransport (appended
    to ``wrappers``)."""

    def on_stderr(line: str) -> None:
        recorder.on_message("stderr", name, line, time.time())
        if stderr_sink is not None:
            stderr_sink(line)

    def note(direction: str, msg: dict[str, Any]) -> None:
        recorder.on_message(direction, name, msg, time.time())

    def launch() -> Connection:
        conn = launch_bot(command, transport=transport, name=name, cwd=cwd, sandbox=sandbox,
                          memory_mb=memory_mb, on_stderr=on_stderr,
                          write_timeout=max(2.0, time_control.per_decision))
        wrapped = ProvokingTransport(conn.transport, note)
        wrappers.append(wrapped)
        return Connection(wrapped, conn.process)

    return launch


# --- the checker -------------------------------------------------------------------------


@dataclass(frozen=True)
class LeadGame:
    """A game played before any other, as a league plays it: a fresh process of the
    bot under test in ``seat``, named ``names[seat]``, built-in ``opponent`` bots in
    the other seats under the other ``names``, the game id ``game_id`` (an alias of
    the league's kind), ``seed`` (drawn at random by the caller), nothing the checker
    adds (no unknown fields, no deliberate rejection).  A league's check plays these
    first, so that a bot cannot tell its check from its games by what it is sent."""

    title: str
    config: GameConfig
    seed: int
    seat: int
    names: tuple[str, ...]
    game_id: str
    opponent: str = "heuristic"


def league_alias() -> str:
    """A game id of a league's kind (``t`` and 12 hex digits), drawn at random."""
    return "t" + secrets.token_hex(6)


class Checker:
    """Runs the checks on one bot command; ``run()`` returns the Report."""

    def __init__(self, command: Sequence[str], *, transport: str = "stdio",
                 time_control: TimeControl | None = None, bye_grace: float = 2.0,
                 cwd: str | None = None, scenarios: Sequence[Scenario] = SCENARIOS,
                 extra_games: int = EXTRA_GAMES, sandbox: Sandbox | None = None,
                 memory_mb: int | None = None, lead: Sequence[LeadGame] = (),
                 on_stderr: Callable[[str], None] | None = None) -> None:
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be 'stdio' or 'zmq', not {transport!r}")
        self.command = list(command)
        self.transport = transport
        self.tc = time_control or TimeControl()
        self.bye_grace = bye_grace
        self.cwd = cwd
        self.scenarios = list(scenarios)
        self.extra_games = extra_games
        self.sandbox = sandbox
        self.stderr: deque[str] = deque(maxlen=5000)  # every seat's, for the hints
        self.lead = list(lead)
        self.lead_seats: list[CheckedSeat] = []  # the lead games' own processes
        self.on_stderr = on_stderr
        self.memory_mb = memory_mb or (sandbox.config.memory_mb if sandbox else DEFAULT_MEMORY_MB)
        self.recorder = Recorder()
        self.report = Report(self.command, transport,
                             sandbox=sandbox.summary() if sandbox is not None else "")
        self.seats: list[CheckedSeat] = []
        self.wrappers: list[list[ProvokingTransport]] = []
        self.kind_faults: dict[str, tuple[str, str, list[str]]] = {}
        self.quit_early: list[tuple[str, list[str]]] = []  # exited before bye, status 0
        # seat 0's in the provoking game, with the time of each
        self.provoked_faults: list[tuple[Fault, list[str], float]] = []
        self.timeouts: list[tuple[Fault, list[str]]] = []
        self.faults: list[tuple[Fault, list[str]]] = []  # every fault, in order
        self.provoked_at: float | None = None  # when the unknown message went out
        self.games = 0

    def seat(self, i: int) -> CheckedSeat:
        while len(self.seats) <= i:
            k = len(self.seats)
            wrappers: list[ProvokingTransport] = []
            self.seats.append(self._process(f"bot.{k}", wrappers))
            self.wrappers.append(wrappers)
        return self.seats[i]

    def _process(self, name: str, wrappers: list[ProvokingTransport]) -> CheckedSeat:
        def sink(line: str) -> None:
            self.stderr.append(line)
            if self.on_stderr is not None:
                self.on_stderr(line)

        launch = make_launcher(self.command, self.transport, name, self.recorder, self.tc,
                               self.cwd, wrappers, sandbox=self.sandbox,
                               memory_mb=self.memory_mb, stderr_sink=sink)
        player = ExternalPlayer(name, launch, time_control=self.tc,
                                on_message=self.recorder.on_message,
                                bye_grace=self.bye_grace, kill_grace=0.2)
        return CheckedSeat(player)

    # -- the checks --------------------------------------------------------------------

    def run(self) -> Report:
        try:
            if self.check_handshake():
                self.check_games()
                self.check_kinds()
                self.check_provocations()
                self.check_replies()
                self.check_timing()
        finally:
            self.check_bye()
            self.describe_causes()
        if self.sandbox is not None and self.sandbox.active:
            crashes = [c.detail for c in self.report.checks if c.status == FAIL]
            self.report.hints = explain([*self.stderr, *crashes], self.sandbox.config)
        return self.report

    def describe_causes(self) -> None:
        """One line per kind of fault the bot made, however many rows it failed."""
        by_kind: dict[str, list[tuple[Fault, list[str]]]] = {}
        for f, lines in self.faults:
            by_kind.setdefault(f.kind, []).append((f, lines))
        for kind, items in by_kind.items():
            n = len(items)
            f, lines = items[0]
            plural = "s" if n > 1 else ""
            if kind == "timeout":
                late = self.recorder.late
                limit = (f"a {self.tc.per_decision:g} s limit per decision"
                         + (f" (plus a {self.tc.bank:g} s bank per game)" if self.tc.bank
                            else ""))
                bound = self.recorder.late_bound
                if late:
                    took = f"the bot took up to {max(late):.2f} s against {limit}"
                elif bound:
                    took = (f"the bot took longer than {limit} (its late replies were read "
                            f"up to {max(bound):.2f} s after the request)")
                else:
                    took = f"the bot never answered, against {limit}"
                answered = len(late) + len(bound)
                if late and answered < n:
                    took += f"; {n - answered} of them were never answered"
                text = f"{n} timeout{plural}: {took}; the first: {f.detail}"
            else:
                word = {"crash": "crash", "illegal": "illegal decision",
                        "malformed": "malformed message", "oversized": "oversized message",
                        "protocol": "protocol error"}.get(kind, f"{kind} fault")
                text = f"{n} {word}{'es' if n > 1 and word == 'crash' else plural}: the first: " \
                       f"{f.bot} turn {f.turn}: {f.detail}"
            self.report.cause(f"fault:{kind}", text, lines)

    def check_handshake(self) -> bool:
        c = self.report.check("starts and says hello")
        player = self.seat(0).inner
        t0 = time.monotonic()
        try:
            player.connect()
        except BotFault as e:
            c.failed(f"{e.kind}: {e.detail}", self.recorder.transcript(player.name))
            return False
        hello = self.recorder.hellos.get(player.name, {})
        version = hello.get("version")
        c.passed(f"hello from {hello.get('name')!r}"
                 + (f" version {version!r}" if version is not None else " (no version)") + ", "
                 f"protocol {hello.get('protocol')}, in {time.monotonic() - t0:.3f}s")
        return True

    def play(self, sc: Scenario, lead: LeadGame | None = None) -> GameRecord:
        n = sc.config.players
        players: list[Player | CheckedSeat]
        if lead is None:
            seats = [self.seat(i) for i in range(n)]
            players = list(seats)
        else:
            # A game as the league plays it: the bot's own fresh process in its seat,
            # built-in bots in the others, under the league's names.
            if not self.lead_seats:
                self.lead_seats.append(self._process(lead.names[lead.seat], []))
            seats = self.lead_seats[:1]
            players = [seats[0] if i == lead.seat else
                       InProcessPlayer(make_bot(lead.opponent, lead.seed + i), lead.names[i])
                       for i in range(n)]
        for s in seats:
            conn = s.inner.conn
            if conn is not None and conn.process is not None and conn.process.returncode == 0:
                self.quit_early.append((s.name, self.recorder.transcript(s.name)))
        if lead is None:
            for i, s in enumerate(seats):
                for w in self.wrappers[i]:
                    w.on = sc.provoke
                if sc.provoke and i == 0 and s.rejected_at is None:
                    s.reject_next = True
        faults: list[tuple[Fault, list[str]]] = []
        provoked: list[tuple[Fault, list[str], float]] = []

        def on_event(kind: str, payload: Any) -> None:
            if kind == "fault":
                assert isinstance(payload, Fault)
                faults.append((payload, self.recorder.transcript(payload.bot)))
                provoked.append((*faults[-1], time.time()))
                # A bot that ended itself with status 0 (the loss is described once its
                # connection is gone, so it is read from the fault, not the process).
                if payload.kind == "crash" and "exited with code 0" in payload.detail:
                    self.quit_early.append((payload.bot, self.recorder.transcript(payload.bot)))
                # A timeout says nothing about a kind of decision (the bot was slow,
                # whatever it was asked); a wrong answer or a crash does.
                answer_kinds = (self.recorder.fault_kinds(payload.bot)
                                if payload.kind != "timeout" else set())
                for k in answer_kinds:
                    self.kind_faults.setdefault(
                        k, (payload.kind, f"{payload.kind}: {payload.detail}",
                            self.recorder.transcript(payload.bot)))

        self.games += 1
        rec = run_game(sc.config, sc.seed, players, game_id=f"check{self.games}",
                       bot_game_id=lead.game_id if lead is not None else None, deck=sc.deck(),
                       first_player=sc.first_player, time_control=self.tc,
                       policy=FaultPolicy("substitute", strike_limit=3), on_event=on_event)
        for w in (w for ws in self.wrappers for w in ws):
            w.on = False
        self.timeouts += [(f, t) for f, t in faults if f.kind == "timeout"]
        self.faults += faults
        if sc.provoke:
            # An illegal answer is the game check's business, a timeout the timing
            # check's (unless the bot fell silent for good); choking on what it did not
            # expect (a crash, garbage) is this one's.
            self.provoked_faults += [(f, t, at) for f, t, at in provoked
                                     if f.seat == 0 and f.kind != "illegal"]
        c = self.report.check(f"game: {sc.title}")
        if faults:
            f, lines = faults[0]
            kinds = Counter(f.kind for f, _ in faults)
            what = ", ".join(f"{n} {k}" for k, n in kinds.items())
            forfeits = sum(fa.action == "forfeit" for fa, _ in faults)
            # The detail is the cause's (listed once, above the table).
            c.failed(f"{len(faults)} fault{'s' if len(faults) > 1 else ''} ({what})"
                     + (f", {forfeits} forfeit{'s' if forfeits > 1 else ''}" if forfeits else "")
                     + f"; the first by {f.bot} at turn {f.turn}: {f.detail}", lines,
                     cause=f"fault:{f.kind}")
            for k in kinds:
                if k != f.kind:
                    c.causes.append(f"fault:{k}")
        else:
            c.passed(f"{rec.ended.how} after {rec.ended.turns} turns, "
                     f"{len(rec.decisions)} decisions ({sc.purpose})")
        return rec

    def check_games(self) -> None:
        for lead in self.lead:
            self.play(Scenario(lead.title, lead.config, lead.seed,
                               "a game as the league plays it"), lead)
        for sc in self.scenarios:
            self.play(sc)
        for kind in KINDS:
            for attempt in range(self.extra_games):
                if self.recorder.offered[kind]:
                    break
                extra = extra_scenario(kind, attempt)
                if extra is None:
                    break
                self.play(extra)

    def check_kinds(self) -> None:
        for kind in KINDS:
            c = self.report.check(f"decision: {kind}")
            asked, chose = self.recorder.offered[kind], self.recorder.chosen[kind]
            answered = self.recorder.answered_kind[kind]
            if kind in self.kind_faults:
                fault_kind, detail, lines = self.kind_faults[kind]
                c.failed(f"a request offering {kind!r} was answered wrongly: {detail}", lines,
                         cause=f"fault:{fault_kind}")
            elif asked and not answered and self.timeouts:
                c.failed(f"offered in {asked} requests, none answered in time", (),
                         cause="fault:timeout")
            elif asked:
                late = asked - answered
                c.passed(f"offered in {asked} request{'s' * (asked != 1)}, chosen {chose} "
                         f"time{'s' * (chose != 1)}"
                         + (f" ({late} not answered in time: see 'decides in time')"
                            if late else ""))
            else:
                forfeits = Counter(f.kind for f, _ in self.faults if f.action == "forfeit")
                if forfeits:
                    # Most likely because the bot forfeited its games: that is the cause.
                    kind = forfeits.most_common(1)[0][0]
                    c.failed(f"never came up in {self.games} game(s), in which the bot "
                             f"forfeited {sum(forfeits.values())} times", (),
                             cause=f"fault:{kind}")
                else:
                    c.failed(f"never came up in {self.games} game(s) (the bot's own choices "
                             f"avoided it?)")

    def check_provocations(self) -> None:
        c = self.report.check("ignores unknown messages and fields")
        seat0 = self.seats[0]
        bot = seat0.name
        injected = any(w.sent_unknown for w in self.wrappers[0])
        if not injected:
            c.status, c.detail = SKIP, "no game with provocations was played"
        elif (choked := [(f, t) for f, t, at in self.provoked_faults
                         if f.kind != "timeout"
                         or self.recorder.last_decision.get(f.bot, 0.0) <= at]):
            # (A timeout counts here only when the bot never answered again.)
            f, lines = choked[0]
            c.failed(f"after an unknown message type and unknown fields: {f.kind}: {f.detail}",
                     lines, cause="row:ignores unknown messages and fields"
                     if f.kind == "timeout" else f"fault:{f.kind}")
        else:
            c.passed("an unknown message type and unknown fields in every message were "
                     "ignored")
        r = self.report.check("carries on after 'rejected'")
        if seat0.rejected_at is None:
            r.status, r.detail = SKIP, "no rejection was sent"
        elif seat0.after_rejection:
            r.passed("answered the next request after a deliberate 'rejected' "
                     "(code timeout, action substituted)")
        else:
            r.failed("no valid answer to the request after a deliberate 'rejected'",
                     self.recorder.transcript(bot))

    def check_replies(self) -> None:
        once = self.report.check("answers each request once")
        extra = {b: n for b, n in self.recorder.stray.items() if n}
        if extra:
            bot = min(extra)
            once.failed(f"{sum(extra.values())} replies answered no pending request (a second "
                        f"answer, or an id never sent); the first from {bot}",
                        self.recorder.first_stray.get(bot, []))
        else:
            once.passed("every reply carried the id of the pending request")
        up = self.report.check("stays up across games")
        # The referee restarts a bot itself after a crash, or after a forfeit for
        # running out of time: those restarts are the crash's and the timeouts' doing
        # (their own rows), not the bot's.  Only a bot that exits by itself fails here.
        restarts = sum(s.inner.starts - 1 for s in self.seats)
        if self.quit_early:
            name, lines = self.quit_early[0]
            up.failed(f"{name} exited (status 0) between games: a bot must keep running from "
                      f"game to game until 'bye'", lines)
        else:
            up.passed(f"{len(self.seats)} processes played {self.games} game(s)"
                      + (f"; the referee restarted them {restarts} time(s) itself, after "
                         f"faults" if restarts else " without a restart"))

    def check_timing(self) -> None:
        c = self.report.check("decides in time")
        lat = sorted(self.recorder.latencies)
        if not lat and not self.timeouts:
            c.status, c.detail = SKIP, "no decisions"
            return
        mid, top = (lat[len(lat) // 2], lat[-1]) if lat else (0.0, 0.0)
        slow = sum(x > self.tc.per_decision for x in lat)
        text = (f"{len(lat)} decisions in time: median {mid * 1000:.1f} ms, max "
                f"{top * 1000:.1f} ms (limit {self.tc.per_decision:.3f}s each plus a "
                f"{self.tc.bank:.1f}s bank" + (f"; {slow} took bank time" if slow else "") + ")")
        if self.timeouts:
            f, lines = self.timeouts[0]
            late = self.recorder.late
            c.failed(f"{len(self.timeouts)} timeout(s)"
                     + (f", the late replies in up to {max(late) * 1000:.0f} ms" if late
                        else "")
                     + f"; {text}", lines, cause="fault:timeout")
        else:
            c.passed(text)

    def check_bye(self) -> None:
        c = self.report.check("exits on bye")
        ok: list[float] = []
        for s in [*self.lead_seats, *self.seats]:
            player = s.inner
            conn = player.conn
            if conn is None or conn.process is None or player.dead:
                continue
            proc = conn.process
            t0 = time.monotonic()
            player.close()
            took = time.monotonic() - t0
            rc = proc.returncode
            if rc == 0 and took < self.bye_grace:
                ok.append(took)
            else:
                how = ("did not exit" if rc is None or took >= self.bye_grace
                       else f"exited with status {rc}")
                c.failed(f"{player.name} {how} within {self.bye_grace:.1f}s of 'bye' "
                         f"(expected exit status 0)", self.recorder.transcript(player.name))
        if ok:
            c.passed(f"{len(ok)} bot processes exited with status 0 after bye "
                     f"(slowest after {max(ok) * 1000:.0f} ms)")
        elif c.status != FAIL:
            c.status, c.detail = SKIP, "no bot process was still running"


def run_checks(command: Sequence[str], **kw: Any) -> Report:
    """Check the bot started by ``command`` (see ``Checker`` for the options)."""
    return Checker(command, **kw).run()
