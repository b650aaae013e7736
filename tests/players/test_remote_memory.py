"""ExternalPlayer over the in-memory transport: the protocol as a bot sees it, with
scripted bots (no processes, no clock) -- every message the referee sends is
checked against the published schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.game import GameConfig
from referee.play.runner import FaultPolicy, TimeControl, run_game
from referee.players.external import ExternalPlayer
from referee.players.launcher import Connection
from referee.transport.memory import MemoryPeer, MemoryTransport
from tests.procs import scaled
from tests.protocol.schemacheck import errors

SCHEMAS = {p.stem: json.loads(p.read_text()) for p in
           (Path(__file__).resolve().parents[2] / "protocol" / "schema").glob("*.json")}

Answer = Callable[[dict[str, Any]], Any]


class ScriptedBot:
    """A bot in memory: says hello at connection, answers each request with
    ``answer(request)`` (a decision value, or None for no answer)."""

    def __init__(self, answer: Answer, hello: dict[str, Any] | None = None,
                 on_message: Callable[[dict[str, Any], MemoryPeer], None] | None = None
                 ) -> None:
        self.answer = answer
        self.on_message = on_message  # sees every message first (to misbehave)
        self.hello = hello if hello is not None else {
            "type": "hello", "protocol": [1], "name": "scripted"}
        self.transports: list[MemoryTransport] = []

    @property
    def received(self) -> list[dict[str, Any]]:
        return [m for t in self.transports for m in t.peer.received]

    def launch(self) -> Connection:
        t = MemoryTransport()
        peer = t.peer

        def on_send(msg: dict[str, Any]) -> None:
            problems = errors(SCHEMAS[msg["type"]], msg)
            assert not problems, problems
            if self.on_message is not None:
                self.on_message(msg, peer)
            if msg["type"] == "request":
                d = self.answer(msg)
                if d is not None:
                    peer.send({"type": "decision", "id": msg["id"], "decision": d})

        peer.on_send = on_send
        if self.hello:
            peer.send(self.hello)
        self.transports.append(t)
        return Connection(t)

    def of_type(self, t: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["type"] == t]


def player(bot: ScriptedBot, name: str, **kw: Any) -> ExternalPlayer:
    # scaled (tests/procs.py): a scripted bot answers from a thread of the test's own
    # process, which a busy machine may hold off the CPU for a while
    return ExternalPlayer(name, bot.launch, time_control=TimeControl(
        scaled(1.0), scaled(0.5), scaled(1.0)), **kw)


def first(req: dict[str, Any]) -> int:
    return 0


@pytest.mark.slow
def test_full_game_every_message_follows_the_schema() -> None:
    a, b = ScriptedBot(first), ScriptedBot(lambda r: r["legal"][-1])
    pa, pb = player(a, "a"), player(b, "b")
    rec = run_game(GameConfig(players=2), 5, [pa, pb], game_id="g5")
    pa.close()
    pb.close()
    assert rec.faults == []
    assert [m["type"] for m in a.received[:3]] == ["welcome", "new_game", "request"]
    new_game = a.of_type("new_game")[0]
    assert new_game == {"type": "new_game", "game_id": "g5", "seat": 0, "players": 2,
                        "config": GameConfig(players=2).to_dict(), "bots": ["a", "b"]}
    assert "seed" not in json.dumps(a.received)  # the seed would reveal the deck
    over = a.of_type("game_over")[0]
    assert over["places"] == rec.places and over["points"] == rec.points
    assert over["events"][-1]["type"] == "end"
    assert a.received[-1] == {"type": "bye", "reason": "session over"}
    # Every event reaches each seat exactly once: in requests or in game_over.
    for seat, bot in enumerate((a, b)):
        got = [e for m in bot.of_type("request") for e in m["events"]] + over["events"] \
            if seat == 0 else [e for m in bot.of_type("request") for e in m["events"]] \
            + bot.of_type("game_over")[0]["events"]
        assert len(got) == len(rec.events)
    # Seat 1 answered by text: the last legal decision each time.
    seat1 = [d["decision"] for d in rec.decisions if d["seat"] == 1]
    assert seat1 == [m["legal"][-1] for m in b.of_type("request")]


def test_illegal_text_is_rejected_with_the_substitute_named() -> None:
    bot = ScriptedBot(lambda r: "play hand 99x9" if r["id"] == 2 else 0)
    rec = run_game(GameConfig(), 1, [player(bot, "bad"), player(ScriptedBot(first), "ok")])
    assert [(f.kind, f.action) for f in rec.faults] == [("illegal", "substituted")]
    rej = bot.of_type("rejected")
    req2 = bot.of_type("request")[1]
    assert rej == [{"type": "rejected", "id": 2, "code": "illegal", "message": rej[0]["message"],
                    "action": "substituted", "substitute": req2["legal"][0]}]
    assert "play hand 99x9" in rej[0]["message"]


def test_index_out_of_range_is_illegal() -> None:
    bot = ScriptedBot(lambda r: 50 if r["id"] == 1 else 0)
    rec = run_game(GameConfig(), 1, [player(bot, "bad"), player(ScriptedBot(first), "ok")])
    assert rec.faults[0].kind == "illegal"
    assert "index 50" in rec.faults[0].detail and "indices 0 to" in rec.faults[0].detail
    # RULES §8: like every refused decision, it lists (the start of) the legal list.
    legal = bot.of_type("request")[0]["legal"]
    assert rec.faults[0].detail.endswith(f"; legal now: {', '.join(legal[:8])} and "
                                         f"{len(legal) - 8} more")


@pytest.mark.slow
def test_silence_strikes_then_forfeits_and_the_bot_is_told() -> None:
    bot = ScriptedBot(lambda r: None)
    rec = run_game(GameConfig(), 2, [player(bot, "mute"), player(ScriptedBot(first), "ok")],
                   policy=FaultPolicy("substitute", strike_limit=2))
    assert [f.action for f in rec.faults] == ["substituted", "substituted", "forfeit"]
    assert all(f.kind == "timeout" for f in rec.faults)
    assert rec.places == [2, 1] and rec.forfeits == [0]
    assert [r["action"] for r in bot.of_type("rejected")] == ["substituted"] * 2 + ["forfeit"]
    # The substitute is named under 'forfeit' too: it is played for that request.
    assert all(isinstance(r["substitute"], str) for r in bot.of_type("rejected"))
    # game_over lists the faults with the fields its schema names (checked on sending).
    faults = bot.of_type("game_over")[0]["faults"]
    assert [(f["seat"], f["bot"], f["kind"], f["action"]) for f in faults] == [
        (0, "mute", "timeout", "substituted")] * 2 + [(0, "mute", "timeout", "forfeit")]
    assert len(bot.of_type("request")) == 3  # a forfeited seat is asked no more
    assert bot.of_type("game_over")[0]["forfeits"] == [0]


@pytest.mark.slow
def test_reply_to_an_old_request_is_discarded_and_reported() -> None:
    state = {"held": None}

    def answer(req: dict[str, Any]) -> Any:
        if req["id"] == 1:
            state["held"] = req["id"]  # answer it too late: with the next one
            return None
        if state["held"] is not None:
            bot.transports[-1].peer.send({"type": "decision", "id": state["held"],
                                          "decision": 0})
            state["held"] = None
        return 0

    bot = ScriptedBot(answer)
    notes: list[str] = []
    p = player(bot, "late", on_message=lambda d, n, x, ts: notes.append(x) if d == "note" else None)
    rec = run_game(GameConfig(), 3, [p, player(ScriptedBot(first), "ok")])
    assert [f.kind for f in rec.faults] == ["timeout"]
    rej = bot.of_type("rejected")
    assert [(r["id"], r["code"], r["action"]) for r in rej] == [
        (1, "timeout", "substituted"), (1, "unknown_id", "ignored")]
    assert "substitute" in rej[0] and "substitute" not in rej[1]  # never null
    assert any("no longer pending (request 2 is)" in n for n in notes)


def test_no_hello_is_a_fatal_timeout_and_the_next_game_restarts_the_bot() -> None:
    bot = ScriptedBot(first, hello={})
    p = player(bot, "shy")
    rec = run_game(GameConfig(), 4, [p, player(ScriptedBot(first), "ok")])
    assert [(f.kind, f.action) for f in rec.faults] == [("timeout", "forfeit")]
    assert f"no hello within the startup limit of {scaled(1.0):.3f}s" in rec.faults[0].detail
    bot.hello = {"type": "hello", "protocol": [1], "name": "shy"}
    rec = run_game(GameConfig(), 4, [p, player(ScriptedBot(first), "ok")])
    assert rec.faults == [] and len(bot.transports) == 2 and p.starts == 2


def test_unsupported_version_gets_an_error_and_a_fault() -> None:
    bot = ScriptedBot(first, hello={"type": "hello", "protocol": [9], "name": "future"})
    rec = run_game(GameConfig(), 4, [player(bot, "future"), player(ScriptedBot(first), "ok")])
    assert [(f.kind, f.action) for f in rec.faults] == [("protocol", "forfeit")]
    assert bot.received == [{"type": "error", "code": "unsupported_version",
                             "message": bot.received[0]["message"], "action": "disconnect"}]


def test_connection_lost_mid_game_is_a_crash_and_forfeits() -> None:
    def answer(req: dict[str, Any]) -> Any:
        if req["id"] == 3:
            bot.transports[-1].peer.close()
            return None
        return 0

    bot = ScriptedBot(answer)
    rec = run_game(GameConfig(), 6, [player(ScriptedBot(first), "ok"), player(bot, "gone")])
    assert [(f.seat, f.kind, f.action) for f in rec.faults] == [(1, "crash", "forfeit")]
    assert "ended while deciding request 3: the connection was lost" in rec.faults[0].detail
    assert rec.places == [1, 2]


def test_malformed_reply_then_recovery() -> None:
    def answer(req: dict[str, Any]) -> Any:
        if req["id"] == 2:
            bot.transports[-1].peer.send_raw('{"type":"decision","id":2,"decision":')
            return None
        if req["id"] == 3:
            bot.transports[-1].peer.send({"type": "decision", "id": 3, "choice": 0})
            return None
        return 0

    bot = ScriptedBot(answer)
    rec = run_game(GameConfig(), 6, [player(bot, "sloppy"), player(ScriptedBot(first), "ok")])
    assert [f.kind for f in rec.faults] == ["malformed", "malformed"]
    assert "not JSON" in rec.faults[0].detail
    assert "lacks field 'decision'" in rec.faults[1].detail
    assert [r["code"] for r in bot.of_type("rejected")] == ["malformed", "malformed"]


def test_transcript_sees_every_message_both_ways() -> None:
    seen: list[tuple[str, str]] = []
    p = player(ScriptedBot(first), "t", on_message=lambda d, n, x, ts: seen.append(
        (d, x["type"] if isinstance(x, dict) else x.split()[0])))
    run_game(GameConfig(), 1, [p, player(ScriptedBot(first), "ok")])
    p.close()
    assert seen[:3] == [("recv", "hello"), ("send", "welcome"), ("note", "hello:")]
    assert ("send", "game_over") in seen and seen[-1] == ("send", "bye")
    assert seen.count(("send", "request")) == seen.count(("recv", "decision"))
    assert seen.count(("note", "latency")) == seen.count(("recv", "decision"))


def test_send_to_a_closed_peer_is_a_crash_at_start() -> None:
    bot = ScriptedBot(first)
    p = player(bot, "x")
    p.connect()
    assert p.conn is not None
    p.conn.transport.close()
    rec = run_game(GameConfig(), 1, [p, player(ScriptedBot(first), "ok")])
    assert rec.faults[0].kind == "crash" and rec.faults[0].action == "forfeit"
    assert "was gone at the start of the game" in rec.faults[0].detail


@pytest.mark.slow
def test_variant_games_for_six_seats_follow_the_schema() -> None:
    from referee.game import VARIANTS

    bots = [ScriptedBot(lambda r: len(r["legal"]) // 2) for _ in range(6)]
    players = [player(b, f"b{i}") for i, b in enumerate(bots)]
    config = GameConfig(players=6, variants=frozenset(VARIANTS) - {"match_scoring"})
    rec = run_game(config, 9, players)
    assert rec.faults == []
    for b in bots:
        assert b.of_type("new_game")[0]["config"]["variants"] == sorted(config.variants)
        assert len(b.of_type("game_over")) == 1


def test_a_failing_transcript_hook_is_not_the_bots_fault() -> None:
    def hook(direction: str, name: str, payload: Any, ts: float) -> None:
        if direction == "recv" and payload.get("type") == "decision":
            raise KeyError("transcript bug")

    p = player(ScriptedBot(first), "a", on_message=hook)
    with pytest.warns(RuntimeWarning, match="transcript hook of a failed"):
        rec = run_game(GameConfig(), 1, [p, player(ScriptedBot(first), "b")])
    assert rec.faults == [] and p.on_message is None


def test_a_stray_line_between_requests_is_read_as_the_next_reply() -> None:
    # PROTOCOL.md, request ids: the referee reads a bot's output only while a request
    # is pending, so a line written after new_game is taken as the reply to request 1
    # (a malformed one), and the real reply to request 1 is then a late one.
    def stray(msg: dict[str, Any], peer: MemoryPeer) -> None:
        if msg["type"] == "new_game":
            peer.send_raw("MyLib: tables loaded")

    bot = ScriptedBot(first, on_message=stray)
    rec = run_game(GameConfig(), 3, [player(bot, "stray"), player(ScriptedBot(first), "ok")])
    assert [(f.kind, f.action) for f in rec.faults] == [("malformed", "substituted")]
    assert rec.faults[0].detail.startswith("stray replied to request 1 with a line that is "
                                           "not JSON")
    assert [(r["id"], r["code"], r["action"]) for r in bot.of_type("rejected")] == [
        (1, "malformed", "substituted"), (1, "unknown_id", "ignored")]


@pytest.mark.parametrize("variants", [frozenset(), frozenset({"choose_for_others"}),
                                      frozenset({"swap_piles", "choose_for_others"})])
def test_a_set_up_request_never_shows_the_seats_own_choice(variants: frozenset[str]) -> None:
    # RULES §12: each seat is asked for its 3UP choice once, in seat order, and the last
    # choice ends the set-up -- so a request shows its own 'chosen' false and no
    # 'choice', while the seats asked before it show 'chosen' true.
    bots = [ScriptedBot(first) for _ in range(3)]
    run_game(GameConfig(players=3, variants=variants), 2,
             [player(b, f"b{i}") for i, b in enumerate(bots)])
    for seat, b in enumerate(bots):
        setup = [r["observation"] for r in b.of_type("request")
                 if r["observation"]["phase"] == "setup"]
        assert len(setup) == 1
        assert setup[0]["chosen"] is False and "choice" not in setup[0]
        assert [s["chosen"] for s in setup[0]["seats"]] == [s < seat for s in range(3)]


def test_a_flood_of_stale_replies_neither_extends_the_wait_nor_is_answered_in_full() -> None:
    # PROTOCOL.md, request ids: replies to other requests are discarded and the wait
    # goes on -- but only until the deadline, even while more of them keep coming; and
    # only the first few of them are answered with 'rejected' (a bot flooding the
    # referee is usually not reading its stdin: answering each would block).
    now = [0.0]

    def clock() -> float:
        now[0] += 0.05  # every look at the clock: 50 ms later
        return now[0]

    def answer(req: dict[str, Any]) -> Any:
        if req["id"] == 1:
            # 8, and the late reply to it: 9 (the tenth in a game forfeits: MAX_STRAYS)
            for _ in range(8):
                bot.transports[-1].peer.send({"type": "decision", "id": 99, "decision": 0})
        return 0

    bot = ScriptedBot(answer)
    p = ExternalPlayer("flood", bot.launch, time_control=TimeControl(1.0, 0.5, 0.0), clock=clock)
    rec = run_game(GameConfig(), 1, [p, player(ScriptedBot(first), "ok")],
                   time_control=TimeControl(1.0, 0.5, 0.0))
    p.close()
    assert [(f.seat, f.kind, f.action) for f in rec.faults] == [(0, "timeout", "substituted")]
    assert rec.faults[0].detail == ("flood sent no decision for request 1 within 0.500s (only "
                                    "replies to other requests)")
    told = 0
    for m in bot.received:
        if m["type"] == "request":
            told = 0
        elif m["type"] == "rejected" and m["code"] == "unknown_id":
            told += 1
            assert told <= 5, "more than five discarded replies told of for one request"
    assert sum(m.get("code") == "unknown_id" for m in bot.received) >= 5


def test_a_bot_that_cannot_be_told_of_a_fault_forfeits_saying_why() -> None:
    from referee.transport.base import TransportTimeout

    def stuck(msg: dict[str, Any], peer: MemoryPeer) -> None:
        if msg["type"] == "rejected":
            raise TransportTimeout("the bot stopped reading its stdin (180 of 180 bytes "
                                   "unwritten after 2.000s)")

    bot = ScriptedBot(lambda r: "banana" if r["id"] == 2 else 0, on_message=stuck)
    rec = run_game(GameConfig(), 1, [player(bot, "stuck"), player(ScriptedBot(first), "ok")])
    assert [(f.kind, f.action) for f in rec.faults] == [("illegal", "substituted"),
                                                        ("timeout", "forfeit")]
    # the next decision's fault says why the bot was ended, not just "not running"
    assert rec.faults[1].detail == ("stuck the bot stopped reading its stdin (180 of 180 "
                                    "bytes unwritten after 2.000s)")


def test_a_decision_returned_too_late_is_a_timeout_naming_the_bot() -> None:
    now = [0.0]

    def clock() -> float:  # the runner's clock: each decision seems to take 2 s
        now[0] += 2.0
        return now[0]

    rec = run_game(GameConfig(), 1, [player(ScriptedBot(first), "slow"),
                                     player(ScriptedBot(first), "slower")],
                   time_control=TimeControl(1.0, 0.5, 1.0), clock=clock,
                   policy=FaultPolicy(strike_limit=0))
    assert sorted(f.bot for f in rec.faults) == ["slow", "slower"]
    for f in rec.faults:
        assert (f.kind, f.action) == ("timeout", "forfeit")
        assert f.detail == (f"{f.bot} took 2.000s to decide, 1.500s (0.5 s per decision + "
                            f"1.000 s left of its bank) allowed")
