"""A person in a seat: the table drawn in a terminal, decisions read from the keyboard.

Owns ``HumanPlayer``, a runner ``Player`` that reads from an input stream and writes
to an output stream (so that tests drive it with ``io.StringIO`` or a pseudo-
terminal), and ``draw_table`` (the table as the seat may see it: RULES §6, nothing
more -- it is drawn from the seat's observation only).

A person is not timed like a bot: ``HumanClock`` is a clock for ``run_game`` that
stops while a person is thinking, so the time limits apply to the bots only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..game import Decision, GameConfig
from ..game.cards import CLEAR, KIND_TEXT, CardError, parse_kind_colour
from ..game.decisions import PLAY, SOURCE_NAMES, DecisionSyntaxError, parse_decision
from ..play.replay import HOW_WORDS, describe
from ..play.runner import BotFault, DecisionRequest
from ..play.table import draw_table


class HumanClock:
    """A clock for ``run_game`` that does not run while a person is deciding."""

    def __init__(self, base: Callable[[], float] = time.perf_counter) -> None:
        self.base = base
        self.paused = 0.0

    def __call__(self) -> float:
        return self.base() - self.paused


def _cards(xs: Sequence[str]) -> str:
    return " ".join(xs) if xs else "-"


def _n(n: int, word: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


HELP = """\
Commands:
  NUMBER              the choice with that number (Enter alone: the only choice)
  a decision          as listed, in any case: play hand 7x2, down 1, pickup, draw
  shorthand           7x2 or C+1 (from the hand or the 3UP cards, whichever you play
                      from), or the cards themselves: 7g 7r, play hand 7g 7r
  3 cards             at the set-up: the three cards to lay face up, e.g. 10g 10r Cy
  t, table            draw the table and the choices again
  ?, help             this list
  q, quit             leave the game (you forfeit it; asks first)"""


class HumanPlayer:
    """A person at a terminal (or any pair of text streams)."""

    def __init__(self, inp: TextIO, out: TextIO, name: str = "human",
                 names: Sequence[str] | None = None, clock: HumanClock | None = None) -> None:
        self.inp = inp
        self.out = out
        self.name = name
        self.names: list[str] = list(names or [])
        self.clock = clock or HumanClock()
        self.seat = 0
        self.labels: list[str] = []

    # --- output ---------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _label(self, s: int) -> str:
        name = self.names[s] if s < len(self.names) else f"seat {s}"
        return f"{name} (you)" if s == self.seat else name

    # --- Player ---------------------------------------------------------------------

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        self.seat = seat
        if len(self.names) != config.players:
            self.names = [f"seat {s}" for s in range(config.players)]
        self.labels = [self._label(s) for s in range(config.players)]
        others = ", ".join(f"{self.names[s]} (seat {s})" for s in range(config.players)
                           if s != seat)
        self.say(f"You are seat {seat} in a {config.players}-player game against {others}.")
        if config.variants:
            self.say(f"Variants: {', '.join(sorted(config.variants))}.")
        self.say("Answer with the number of a choice or type the decision; "
                 "'?' lists the commands, 'q' leaves the game.")

    def decide(self, request: DecisionRequest) -> Decision | str:
        for ev in request.events:
            if ev[0] == "deal":
                continue
            self.say(("-- " if ev[0] == "turn" else "   ") + describe(ev, self.labels))
        obs = request.observation
        legal = list(request.legal)
        self._show(obs, legal)
        started = time.perf_counter()
        try:
            return self._ask(obs, legal)
        finally:
            # The person's thinking time does not count against the bots' clocks.
            self.clock.paused += time.perf_counter() - started

    def end_game(self, game_id: str, result: dict[str, Any]) -> None:
        n = len(result["places"])
        self.say("=" * 60)
        self.say(f"Game over: {HOW_WORDS.get(result['how'], result['how'])}, "
                 f"after {result['turns']} turns.")
        order = sorted(range(n), key=lambda s: (result["places"][s], s))
        for s in order:
            self.say(f"  place {result['places'][s]}: {self._label(s)} "
                     f"({result['points'][s]} penalty points)")
        mine = result["places"][self.seat]
        self.say("You won!" if mine == 1 else f"You finished in place {mine}.")

    # --- input ----------------------------------------------------------------------

    def _show(self, obs: dict[str, Any], legal: Sequence[Decision]) -> None:
        self.say()
        for line in draw_table(obs, self.names, self.seat):
            self.say(line)
        self.say("Your choices:")
        for i, d in enumerate(legal, 1):
            self.say(f"  {i:>2}) {d.text}")

    def _readline(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            self.say()
            raise BotFault("crash", "the person at the terminal left (end of input)", fatal=True)
        return line.strip()

    def _ask(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        if len(legal) == 1:
            prompt = f"Your only choice is '{legal[0].text}': press Enter (or type 1): "
        else:
            prompt = f"Your choice (1 to {len(legal)}, ? for help): "
        while True:
            text = self._readline(prompt)
            if not text:
                if len(legal) == 1:
                    return legal[0]
                continue
            word = text.lower()
            if word in ("q", "quit", "exit"):
                answer = self._readline("Leave the game? You forfeit it and finish last "
                                        "[y/N]: ").lower()
                if answer in ("y", "yes"):
                    raise BotFault("crash", "the person at the terminal left the game",
                                   fatal=True)
                self.say("You stay in the game.")
                continue
            if word in ("?", "h", "help"):
                self.say(HELP)
                continue
            if word in ("t", "table"):
                self._show(obs, legal)
                continue
            found = match_choice(text, legal, obs)
            if isinstance(found, Decision):
                return found
            self.say(found)


def match_choice(text: str, legal: Sequence[Decision],
                 obs: dict[str, Any] | None = None) -> Decision | str:
    """The listed decision ``text`` names -- its number, its text (any case, any
    spacing), for the 3UP choice just the three cards, or a play in the bots'
    shorthand (``5x2``, ``C+1``) or by its cards (``5r 5k``, ``play hand 5r 5k``) --
    or a message saying what would be right."""
    t = " ".join(text.split())
    if t.isdigit():
        i = int(t)
        if 1 <= i <= len(legal):
            return legal[i - 1]
        return f"There is no choice {i}: type a number from 1 to {len(legal)}."
    by_text = {d.text.lower(): d for d in legal}
    if t.lower() in by_text:
        return by_text[t.lower()]
    words = t.split()
    if legal and legal[0].text.startswith("3up") and len(words) == 3:
        want = sorted(w.lower() for w in words)
        for d in legal:
            if sorted(x.lower() for x in d.text.split()[1:]) == want:
                return d
    play = _as_play(t, legal, obs)
    if play is not None:
        return play
    try:
        parsed = parse_decision(_fix_case(t))
    except DecisionSyntaxError as e:
        return f"{e}. Type a number from 1 to {len(legal)}."
    for d in legal:
        if d.text == parsed.text:
            return d
    return (f"'{t}' is not allowed now: type a number from 1 to {len(legal)}, "
            "or one of the decisions listed.")


def _as_play(text: str, legal: Sequence[Decision], obs: dict[str, Any] | None,
             ) -> Decision | str | None:
    """A play written the short way -- ``7x2``, ``C+1``, or by its cards (``7g 7r``,
    ``play hand 7g 7r``) -- as the listed play it means (the source is the one you
    play from now, RULES §4.1), a message if it names a play that is not allowed, or
    None if ``text`` is no such play."""
    plays = [d for d in legal if d.code == PLAY]
    if not plays:
        return None
    words = _fix_case(text).split()
    src = SOURCE_NAMES[plays[0].src]
    if len(words) >= 3 and words[0] == "play" and words[1] == src:
        words = words[2:]
    elif words and words[0] == "play":
        return None  # another source, or no cards: the full forms' messages say why
    if len(words) == 1:
        num, sep, count = words[0].partition("x")
        if sep and count.isdigit() and num in KIND_TEXT[:CLEAR]:
            kind, n = KIND_TEXT.index(num), int(count)
        elif words[0] in KIND_TEXT[CLEAR:]:
            kind, n = KIND_TEXT.index(words[0]), 1
        else:
            kind, n = -1, 0
        if kind >= 0:
            for d in plays:
                if d.kind == kind and d.count == n and not d.cards:
                    return d
            return _no_such_play(words[0], plays)
    try:
        cards = [parse_kind_colour(w) for w in words]
    except CardError:
        return None
    if not cards:
        return None
    held: list[str] = []  # the cards of the source played from, when the table is known
    if obs is not None:
        held = list(obs["hand"] if src == "hand" else obs["seats"][obs["seat"]]["up"] or [])
    kinds = {k for k, _ in cards}
    if len(kinds) != 1:
        return "A play is one kind of card: name cards of one number (7g 7r), or one special."
    kind = kinds.pop()
    for w in words:
        if obs is not None and w not in held:
            return f"You hold no {w} in your {'hand' if src == 'hand' else '3UP cards'}."
        if obs is not None:
            held.remove(w)
    named = " ".join(words)
    for d in plays:  # four_of_a_colour: the cards, in the order given
        if d.cards and d.text.split()[2:] == words:
            return d
    for d in plays:
        if not d.cards and d.kind == kind and d.count == len(words):
            return d
    return _no_such_play(named, plays)


def _no_such_play(what: str, plays: Sequence[Decision]) -> str:
    return (f"You cannot play {what} now; the plays allowed: "
            + ", ".join(d.text.split(" ", 2)[2] for d in plays) + ".")


def _fix_case(text: str) -> str:
    """Card kinds are upper-case C, colours lower-case: 'play hand c+1' -> 'C+1'."""
    out = []
    for w in text.split():
        lw = w.lower()
        if lw.startswith("c") and lw not in ("colour",):
            out.append("C" + lw[1:])
        else:
            out.append(lw)
    return " ".join(out)
