"""RULES §6: what each seat may know.  The observation lists exactly the public facts
and the seat's own private ones; events are filtered per seat.  (The information-set
property over hidden permutations is in ``test_infosets.py``.)"""

from __future__ import annotations

import json

from referee.game import Game, GameConfig
from referee.game.events import event_dict
from tests.game.position import act, event_texts, position

PLAY_KEYS = {"seat", "players", "variants", "phase", "turn", "to_move", "direction",
             "extra_action", "pending_extra", "drawn", "hand", "pile", "pile_run",
             "draw_pile", "cleared", "seats"}
SEAT_KEYS = {"seat", "hand", "up", "down", "finished"}


def _words(obj: object) -> set[str]:
    """Every string anywhere in a JSON-ready value."""
    return {w.strip('"') for w in json.dumps(obj).replace("[", " ").replace("]", " ")
            .replace(",", " ").replace(":", " ").replace("{", " ").replace("}", " ").split()}


POS = """
    players 3
    0: hand 2g 5g 5r | up 10g Cg | down 1g 1r 1b
    1: hand 3y 9y C+2g | up 6k | down 2r 2b 2y
    2: hand 4k 8k | up 7g | down 3r - 3b
    pile 4g 4r
    draw 8o 9o 10o
    out Co 1k
"""


def test_observation_lists_exactly_the_documented_fields() -> None:
    g = position(POS)
    obs = g.observation(1)
    assert set(obs) == PLAY_KEYS
    assert all(set(s) == SEAT_KEYS for s in obs["seats"])
    json.dumps(obs)  # JSON-ready


def test_public_facts_are_in_every_observation() -> None:
    g = position(POS)
    for seat in (0, 1, 2):
        obs = g.observation(seat)
        assert obs["pile"] == ["4g", "4r"] and obs["pile_run"] == 2
        assert obs["draw_pile"] == 3
        assert "Co" in obs["cleared"] and "1k" in obs["cleared"]
        assert [s["hand"] for s in obs["seats"]] == [3, 3, 2]
        assert [s["up"] for s in obs["seats"]] == [["10g", "Cg"], ["6k"], ["7g"]]
        assert [s["down"] for s in obs["seats"]] == [[0, 1, 2], [0, 1, 2], [0, 2]]
        assert obs["to_move"] == 0 and obs["turn"] == 1 and obs["direction"] == 1


def test_own_hand_only_and_no_3down_card_for_anybody() -> None:
    g = position(POS)
    hands = {0: {"2g", "5g", "5r"}, 1: {"3y", "9y", "C+2g"}, 2: {"4k", "8k"}}
    downs = {"1g", "1r", "1b", "2r", "2b", "2y", "3r", "3b"}
    draw = {"8o", "9o", "10o"}
    for seat in (0, 1, 2):
        obs = g.observation(seat)
        assert set(obs["hand"]) == hands[seat]
        words = _words(obs)
        for other in (0, 1, 2):
            if other != seat:
                assert not words & hands[other]
        assert not words & downs  # nobody, the owner included, sees 3DOWN cards
        assert not words & draw


def test_spectator_view_hides_every_private_field() -> None:
    g = Game(GameConfig(players=2), seed=3)
    while not g.over:
        for s in g.to_decide():
            g.apply(s, g.legal(s)[0])
    for e in g.events_for(-1):
        d = event_dict(e)
        if d["type"] in ("deal", "draw"):
            assert d["cards"] is None
        if d["type"] == "fail":
            assert d["card"] is None


def test_draws_are_private_but_their_count_is_public() -> None:
    g = position("""
        0: hand 7g 7r 9g
        1: hand 2y 3y
        draw 4y 4b 4k
    """)
    act(g, "play hand 7x2")
    assert event_texts(g, 0)[1] == "draw 0 2 refill 4y 4b"
    assert event_texts(g, 1)[1] == "draw 0 2 refill ?"
    assert event_dict(g.events_for(1)[1]) == {"type": "draw", "seat": 0, "count": 2,
                                              "why": "refill", "cards": None}


def test_pickups_swaps_plays_and_clears_are_public() -> None:
    g = position("""
        0: hand 3g
        1: hand C+1r 5y
        pile 5r 9b
        draw 4y
    """)
    act(g, "pickup", "play hand C+1")
    public = [t for t in event_texts(g, None) if not t.startswith("draw")]
    for seat in (0, 1, -1):
        assert [t for t in event_texts(g, seat) if not t.startswith("draw")] == public
    assert "pickup 0 5r 9b" in event_texts(g, 1)
    assert "clear 1 C+1 1" in event_texts(g, 0)


def test_observation_in_setup_shows_only_own_dealt_cards() -> None:
    g = Game(GameConfig(players=3), seed=9)
    for seat in range(3):
        obs = g.observation(seat)
        assert obs["phase"] == "setup" and obs["hand"] == [] and obs["to_move"] is None
        own = {t for t in obs["dealt"]}
        assert len(own) == 6
        others = set()
        for s in range(3):
            if s != seat:
                others |= {c for c in _words(g.observation(s)["dealt"])}
        assert not _words(obs) & (others - own)
        assert all(s["up"] is None for s in obs["seats"])


def test_whose_turn_and_pending_extra_actions_are_public() -> None:
    g = position("""
        players 3
        0: hand C+2g 3g 4g
        1: hand 2y 3y
        2: hand 2k
        draw 5y 6y
    """)
    act(g, "play hand C+2")
    for seat in (0, 1, 2):
        obs = g.observation(seat)
        assert (obs["to_move"], obs["extra_action"], obs["pending_extra"]) == (0, True, 1)


def test_every_event_kind_the_engine_emits_has_a_visibility_rule() -> None:
    """Event privacy is an allow-list: the engine's every kind is listed, and a kind
    that is not is an error, never passed through unchanged."""
    import pytest

    from referee.game.events import VISIBILITY, UnknownEventKind, events_for, filter_event
    from referee.game.state import __doc__ as state_doc

    emitted = {line.split('"')[1] for line in (state_doc or "").splitlines()
               if line.strip().startswith('("')}
    assert emitted and emitted == set(VISIBILITY)
    with pytest.raises(UnknownEventKind, match="'peek' has no visibility rule"):
        filter_event(("peek", 0, [1, 2, 3]), 1)
    with pytest.raises(UnknownEventKind, match="'peek'"):
        events_for([("turn", 1, 0), ("peek", 0, [1, 2, 3])], 1)
