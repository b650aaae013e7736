"""The viewer's data (referee/report/frames.py) against the engine and the record:
one frame per decision, the record's events split among them, every seat's table the
engine's observation, faults at the decisions the referee played for them, and text
from bots escaped."""

from __future__ import annotations

import json
from pathlib import Path

from referee.game import Game
from referee.game.cards import card_text, parse_deck
from referee.play.replay import describe, match_faults, parse_event, parse_record, read_record
from referee.play.runner import stop_if_stopped
from referee.report.frames import OMNI, build_frames
from referee.report.pages import viewer_page
from tests.report.browser import CARD


def faulty_record(results_dir: Path) -> Path:
    return next(f for f in sorted((results_dir / "games").glob("*.jsonl"))
                if '"type":"fault"' in f.read_text())


def test_frames_follow_the_record(results_dir: Path) -> None:
    rec = read_record(str(faulty_record(results_dir)))
    fr = build_frames(rec)
    assert not fr.error
    assert len(fr.frames) == len(rec.decisions) + 1
    names = [f"{b} [{s}]" for s, b in enumerate(rec.bots)]
    # the omniscient lines, frame after frame, are the record's events in words
    lines = [x for frame in fr.events[OMNI] for x in frame]
    want = [describe(parse_event(e), names) for e in rec.events]
    assert ["".join(x) for x in lines if x is not None] == want
    # every other segment of a line is a card's text
    assert all(CARD.match(c) for x in lines if x for c in x[1::2])
    game = Game(rec.config, rec.head.seed, deck=parse_deck(list(rec.head.deck)),
                first_player=rec.head.first_player)
    for k, d in enumerate(rec.decisions, 1):
        game.apply(d.seat, d.decision)
        f = fr.frames[k]
        assert (f["seat"], f["turn"], f["pile"]) == (d.seat, game.turn,
                                                     [card_text(c) for c in game.pile])
        for s in range(game.n):
            obs = game.observation(s)
            table = fr.tables[str(s)][k]
            own = table[s]
            assert own[0] == (obs["dealt"] if obs["phase"] == "setup" else obs["hand"])
            for t, row in enumerate(table):
                assert row[2] == ["?" if i in obs["seats"][t]["down"] else None for i in range(3)]
                if t != s:
                    assert isinstance(row[0], int)  # another seat's hand: a count
            # the same deal drawn omnisciently holds the real cards
            assert fr.tables[OMNI][k][s][0] == [card_text(c) for c in game.hand(s)] \
                or obs["phase"] == "setup"
    stop_if_stopped(game, rec.result.how if rec.result else None)  # a game the referee stopped (RULES §5.4)
    assert game.over


def test_each_fault_is_at_the_decision_the_referee_played_for_it(results_dir: Path) -> None:
    rec = read_record(str(faulty_record(results_dir)))
    fr = build_frames(rec)
    shown = [(k, f) for k, frame in enumerate(fr.frames) for f in frame["faults"]]
    assert len(shown) == len(rec.faults) > 0
    for k, f in shown:
        assert fr.frames[k]["sub"] and fr.frames[k]["seat"] == f["seat"]
        assert "banana" in f["detail"]
        assert fr.frames[k - 1]["turn"] == f["turn"]  # decided at the fault's turn
    # with no decision at the faults' turns, they wait for the end
    at = match_faults(rec, [0] * len(rec.decisions))
    assert list(at) == [len(rec.decisions) + 1]


def test_what_bots_wrote_is_escaped(results_dir: Path) -> None:
    src = faulty_record(results_dir)
    lines = src.read_text().splitlines()
    head = json.loads(lines[0])
    head["bots"] = ["</script><script>alert(1)</script>", "x{1r}\x1e7r\x1f"]
    lines[0] = json.dumps(head)
    rec = parse_record(lines)
    fr = build_frames(rec)
    page = viewer_page(fr)
    assert "<script>alert" not in page and "</script><script>" not in page
    # the frames hold text, not HTML: the names as they are (control characters, which
    # have no business in a page, replaced)
    assert fr.names == ["</script><script>alert(1)</script>", "x{1r}\ufffd7r\ufffd"]
    # a brace in a name cannot make a card appear in an event line: it is text
    lines = [x for frame in fr.events[OMNI] for x in frame if x]
    assert any("x{1r}\ufffd7r\ufffd [1]" in x[0] for x in lines)
    assert all(CARD.match(c) for x in lines for c in x[1::2])
