"""What the bots were sent, checked against the oracle: the referee's whole path
(runner, protocol session, transport), not only the engine.

A game is played by `run_game` with bots that log every message they receive and
answer random legal decisions.  Afterwards the game is re-run on the oracle from the
record's deck order, first player and decisions (the record is "everything needed to
re-run a game exactly, with this project or any other implementation of the rules"),
and each request a seat was sent must hold exactly what the oracle says that seat may
know at that moment: its observation, its legal list, the events since its previous
request (JSON form, P§11); each `game_over` the result and the last events; the
record its events and result.
"""

from __future__ import annotations

import random
from typing import Any

from referee.play.runner import GameRecord
from tests.oracle.rules import Config, event_json
from tests.oracle.rules import Game as OracleGame


class WireDisagreement(AssertionError):
    """A message or the record differs from the oracle."""


def random_answer(seed: int, message: dict[str, Any]) -> int:
    """A bot's random legal choice, reproducible from its seed and the request."""
    rng = random.Random(f"{seed}:{message['game_id']}:{message['id']}")
    return rng.randrange(len(message["legal"]))


def check_game(
    record: GameRecord, received: list[list[dict[str, Any]]], seeds: list[int]
) -> int:
    """Re-run `record` on the oracle and check the messages each seat received
    (`received[seat]`, in order; its bot answered `random_answer(seeds[seat], …)`);
    returns the number of requests checked."""
    c = record.config
    config = Config(c.players, frozenset(c.variants), c.colours, c.deck, c.turn_limit)
    piles = next(
        ([int(p) for p in e.split()[1:]] for e in record.events if e.startswith("piles ")),
        None,
    )
    oracle = OracleGame(config, list(record.deck), record.first_player, piles)
    where = f"game {record.game_id} ({record.config.to_dict()})"
    requests = [[m for m in msgs if m["type"] == "request"] for msgs in received]
    asked = [0] * c.players
    seen = [0] * c.players
    checked = 0

    def events_since(seat: int) -> list[dict[str, object]]:
        out = [event_json(e.seen_by(seat)) for e in oracle.events[seen[seat] :]]
        seen[seat] = len(oracle.events)
        return out

    for n, row in enumerate(record.decisions):
        seat = row["seat"]
        if row.get("substituted"):
            raise WireDisagreement(f"{where}: decision {n} was substituted: {record.faults}")
        req = requests[seat][asked[seat]]
        asked[seat] += 1
        expect = {
            "observation": oracle.observation(seat),
            "legal": oracle.legal(seat),
            "events": events_since(seat),
        }
        for key, value in expect.items():
            if req[key] != value:
                raise WireDisagreement(
                    f"{where}, decision {n}, seat {seat}, request {req['id']}: {key}\n"
                    f"  sent:   {req[key]!r}\n  oracle: {value!r}"
                )
        if row["decision"] != req["legal"][random_answer(seeds[seat], req)]:
            raise WireDisagreement(f"{where}, decision {n}: not the bot's answer was played")
        oracle.apply(seat, row["decision"])
        checked += 1
    how, places, points = oracle.result()
    for seat in range(c.players):
        if asked[seat] != len(requests[seat]):
            raise WireDisagreement(f"{where}: seat {seat} was sent requests never answered")
        over = [m for m in received[seat] if m["type"] == "game_over"]
        if len(over) != 1:
            raise WireDisagreement(f"{where}: seat {seat} got {len(over)} game_over messages")
        got = {k: over[0][k] for k in ("how", "places", "points", "events")}
        want = {"how": how, "places": places, "points": points, "events": events_since(seat)}
        if got != want:
            raise WireDisagreement(f"{where}: seat {seat}'s game_over\n  sent:   {got}\n  oracle: {want}")
    if record.events != [e.text for e in oracle.events]:
        raise WireDisagreement(f"{where}: the record's events differ from the oracle's")
    res = record.ended
    if (res.how, list(res.places), list(res.points)) != (how, places, points):
        raise WireDisagreement(f"{where}: the record's result differs from the oracle's")
    return checked

