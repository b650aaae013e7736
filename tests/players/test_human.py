"""A person in a seat: HumanPlayer driven through whole games, via streams, the CLI and a pty."""

from __future__ import annotations

import io
import os
import select
import sys
import time
from pathlib import Path

import pytest

from referee.bots import make_bot
from referee.game import GameConfig
from referee.game.cards import parse_deck
from referee.play.runner import InProcessPlayer, TimeControl, run_game
from referee.players.human import HumanClock, HumanPlayer, draw_table, match_choice
from tests.cli.cli_helpers import (
    KNOWN_DEAL,
    env_for_subprocess,
    invoke,
    referee_command,
    write_deal,
)
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

# The known deal (cli_helpers) with the person in seat 0 against the heuristic bot:
# three 1s, then the three 10s face up, then the three 3DOWN cards: a win in 9 turns.
WINNING_ANSWERS = [
    "",                 # empty: asked again
    "99",               # no such choice
    "play hand 1x3",    # not legal during set-up
    "10b 10g 10r",      # the three cards, in any order
    "Play  Hand 1x3",   # any case and spacing
    "t",                # redraw the table
    "3",                # play 3up 10x3 (of 10x1, 10x2, 10x3)
    "down 0",
    "1",                # down 1 (of down 1, down 2)
    "1",                # down 2
]


def _deck() -> list[int]:
    words = [w for line in KNOWN_DEAL.splitlines() for w in line.split("#")[0].split()]
    return parse_deck(words)


def test_human_player_through_a_whole_game() -> None:
    inp = io.StringIO("\n".join(WINNING_ANSWERS) + "\n")
    out = io.StringIO()
    clock = HumanClock()
    human = HumanPlayer(inp, out, names=["me", "bot"], clock=clock)
    rec = run_game(GameConfig(players=2), 1, [human, InProcessPlayer(make_bot("heuristic"))],
                   deck=_deck(), first_player=0, clock=clock)
    text = out.getvalue()
    assert rec.places == [1, 2] and rec.points == [0, 30] and not rec.faults
    assert "your six dealt cards: 1g 1r 1b 10g 10r 10b" in text
    assert "There is no choice 99: type a number from 1 to 20." in text
    assert "'play hand 1x3' is not allowed now" in text
    assert text.count("==== turn 3 ") == 2  # drawn again after 't'
    assert "bot turns 3DOWN slot 1: a card that cannot be played" in text  # RULES §6
    assert "You won!" in text
    # The person never sees the bot's dealt cards before they are played, its failed
    # 3DOWN card (6g) or its unplayed 3DOWN card (7g) (RULES §6).
    assert "2g 2r 2b 3g" not in text and "6g" not in text and "7g" not in text


def test_thinking_time_does_not_count_as_a_timeout() -> None:
    # The human thinks 2.5 times the decision limit at every answer: counted, each
    # answer would time out.  The limit (scaled by the suite's time factor) binds
    # the bot too, so it is 100 ms, not less: the bot's decisions (the heuristic's
    # rule part, without the endgame search: some milliseconds) must fit even when
    # a loaded machine holds its thread back (10 ms failed once at load ~20).
    limit = scaled(0.1)

    class Slow(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            time.sleep(2.5 * limit)
            return super().readline()

    clock = HumanClock()
    human = HumanPlayer(Slow("\n".join(WINNING_ANSWERS) + "\n"), io.StringIO(), clock=clock)
    rule = InProcessPlayer(make_bot("heuristic"))
    rule.bot.SEARCH_CARDS = -1  # no seat ever holds fewer cards: it never searches
    rec = run_game(GameConfig(players=2), 1, [human, rule],
                   deck=_deck(), first_player=0, clock=clock,
                   time_control=TimeControl(per_decision=limit, bank=0.0))
    assert not rec.faults and rec.places == [1, 2]


def test_end_of_input_leaves_the_game() -> None:
    human = HumanPlayer(io.StringIO("1\n"), io.StringIO())
    rec = run_game(GameConfig(players=2), 3, [human, InProcessPlayer(make_bot("lowest"))])
    assert rec.forfeits == [0] and rec.faults[0].kind == "crash"
    assert "end of input" in rec.faults[0].detail


def test_table_and_choices() -> None:
    from referee.game import Game

    g = Game(GameConfig(players=3), 5)
    for s in range(3):
        g.apply(s, g.legal(s)[0])
    seat = g.to_move
    lines = draw_table(g.observation(seat), ["a", "b", "c"], seat)
    assert any(line.startswith(">") and "(you)" in line for line in lines)
    assert any("draw pile:" in line for line in lines)
    legal = g.legal(seat)
    assert match_choice("1", legal) == legal[0]
    assert match_choice(legal[-1].text.upper(), legal) == legal[-1]
    assert isinstance(match_choice("pass", legal), str)


def test_human_seat_through_the_cli(tmp_path: Path) -> None:
    deal = write_deal(tmp_path)
    r = invoke("play", "--human", "heuristic", "--deck-file", str(deal), "--first-player", "0",
               input="\n".join(WINNING_ANSWERS) + "\n")
    assert r.exit_code == 0, r.output
    assert "You are seat 0 in a 2-player game against heuristic (seat 1)" in r.stdout
    assert "You won!" in r.stdout
    # No omniscient narration: the bot's dealt cards stay hidden.
    assert "heuristic [1] is dealt 2g" not in r.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_human_seat_in_a_pseudo_terminal(tmp_path: Path, children: Children) -> None:
    import pty

    deal = write_deal(tmp_path)
    cmd = [referee_command(), "play", "human", "heuristic", "--deck-file", str(deal),
           "--first-player", "0"]
    master, slave = pty.openpty()
    proc = children.popen(cmd, stdin=slave, stdout=slave, stderr=slave,
                          env=env_for_subprocess(), close_fds=True, start_new_session=False)
    os.close(slave)
    seen = b""
    answers = ["10g 10r 10b", "3", "3", "1", "1", "1"]
    deadline = time.monotonic() + scaled(15)
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
                prompts = seen.count(b"Your choice (") + seen.count(b"Your only choice")
                while answers and prompts > 6 - len(answers):
                    os.write(master, (answers.pop(0) + "\n").encode())
            elif proc.poll() is not None:
                break
        proc.wait(timeout=scaled(5))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = seen.decode(errors="replace")
    assert proc.returncode == 0, text
    assert "You won!" in text and "place 1: human (you)" in text


# The same winning game, typed the short ways: help, a 'q' taken back, the hand's
# cards by name, the bots' shorthand for a 3UP play, Enter for the only choice.
SHORT_ANSWERS = [
    "?",                # the commands
    "10b 10g 10r",
    "q", "n",           # leave? no
    "1g 1r 1y",         # a card not held: said so
    "1g 1r 1b",         # the hand's cards by name: play hand 1x3
    "10x2",             # shorthand: play 3up 10x2 (from the 3UP cards now)
    "10x1",             # the last 10 (play 3up 10x1)
    "down 0",
    "1",                # down 1 (of down 1, down 2)
    "",                 # Enter: down 2, the only choice
]


def test_shorthand_card_names_help_and_a_confirmed_quit() -> None:
    out = io.StringIO()
    clock = HumanClock()
    human = HumanPlayer(io.StringIO("\n".join(SHORT_ANSWERS) + "\n"), out, names=["me", "bot"],
                        clock=clock)
    rec = run_game(GameConfig(players=2), 1, [human, InProcessPlayer(make_bot("heuristic"))],
                   deck=_deck(), first_player=0, clock=clock)
    text = out.getvalue()
    assert rec.places[0] == 1 and not rec.faults, text
    assert "Commands:" in text and "q, quit" in text and "7x2 or C+1" in text
    assert "Leave the game? You forfeit it and finish last [y/N]: " in text
    assert "You stay in the game." in text
    assert "You hold no 1y in your hand." in text
    assert "[1-" not in text and "Your choice (1 to 20, ? for help): " in text
    assert "Your only choice is 'down 2': press Enter (or type 1): " in text
    plays = [line.split(": ")[-1] for line in text.splitlines() if " me (you) plays " in line]
    assert plays[:3] == ["   me (you) plays 1g 1r 1b from the hand",
                         "   me (you) plays 10g 10r from the 3UP cards",
                         "   me (you) plays 10b from the 3UP cards"], plays


def test_quit_confirmed_forfeits() -> None:
    human = HumanPlayer(io.StringIO("q\ny\n"), io.StringIO())
    rec = run_game(GameConfig(players=2), 3, [human, InProcessPlayer(make_bot("lowest"))])
    assert rec.forfeits == [0] and rec.faults[0].kind == "crash"
    assert "left the game" in rec.faults[0].detail


def test_shorthand_that_is_not_allowed_says_what_is() -> None:
    from referee.game import Game

    g = Game(GameConfig(players=2), 5)
    for s in range(2):
        g.apply(s, g.legal(s)[0])
    seat = g.to_move
    obs, legal = g.observation(seat), g.legal(seat)
    assert obs["hand"] == ["6r", "10r", "Cr"] and obs["pile"] == []
    assert match_choice("6r", legal, obs).text == "play hand 6x1"  # type: ignore[union-attr]
    assert match_choice("PLAY HAND 10r", legal, obs).text == "play hand 10x1"  # type: ignore[union-attr]
    assert match_choice("c", legal, obs).text == "play hand C"  # type: ignore[union-attr]
    assert match_choice("9x2", legal, obs) == (
        "You cannot play 9x2 now; the plays allowed: 6x1, 10x1, C.")
    assert match_choice("6r 10r", legal, obs) == (
        "A play is one kind of card: name cards of one number (7g 7r), or one special.")


def test_counts_agree_with_their_nouns() -> None:
    from referee.play.replay import describe

    assert describe(("clear", 0, "C", 1), ["me"]) == "the pile is cleared by C (1 card leaves the game)"
    assert describe(("clear", 0, "three", 4), ["me"]).endswith("(4 cards leave the game)")
    obs = {"players": 2, "phase": "play", "turn": 3, "to_move": 1, "seats": [
        {"seat": s, "hand": 1, "up": [], "down": [0], "finished": None} for s in range(2)],
        "pile": [], "draw_pile": 1, "cleared": ["5g"], "hand": ["7g"]}
    table = "\n".join(draw_table(obs, ["a", "b"], 0))
    assert "draw pile: 1 card    out of the game: 1 card" in table
