"""The table in text: what the terminal shows of a game at one moment, from one
seat's observation (``draw_table``: the human player's table, and ``replay --seat``)
or from every card (``omniscient_lines``: ``replay``).  Reads observations and the
engine's state; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..game import Game
from ..game.cards import card_text


def _cards(xs: Sequence[str]) -> str:
    return " ".join(xs) if xs else "-"


def _n(n: int, word: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def draw_table(obs: dict[str, Any], names: Sequence[str], me: int) -> list[str]:
    """The table from ``me``'s observation: every seat's counts and 3UP cards, the
    pile, the draw pile, whose turn, pending extra actions, and ``me``'s hand."""
    n = obs["players"]
    names = list(names) if len(names) == n else [f"seat {s}" for s in range(n)]
    width = max(len(x) for x in names) + (6 if len(names) else 0)
    to_move = obs.get("to_move")
    lines: list[str] = []
    phase = obs["phase"]
    title = f" turn {obs['turn']} " if phase != "setup" else " set-up: choose your 3UP cards "
    lines.append(f"===={title}".ljust(60, "="))
    lines.append(f"  {'seat':<{width + 2}} {'hand':>4}  {'3UP':<16} {'3DOWN':<6}  ")
    for st in obs["seats"]:
        s = st["seat"]
        mark = ">" if s == to_move else " "
        label = names[s] + (" (you)" if s == me else "")
        up = "(hidden)" if st["up"] is None else _cards(st["up"])
        down = len(st["down"])
        status = ""
        if st.get("finished"):
            status = f"finished, place {st['finished']}"
        elif phase == "setup":
            status = "chosen" if st.get("chosen") else "choosing"
        lines.append(f"{mark} {s} {label:<{width}} {st['hand']:>4}  {up:<16} {down:<6} {status}")
    pile = obs["pile"]
    if pile:
        run = obs.get("pile_run", 0)
        shown = pile[-12:]
        more = f"{len(pile) - len(shown)} more under " if len(pile) > len(shown) else ""
        lines.append(f"  pile ({len(pile)}): {more}{' '.join(shown)}   <- top"
                     + (f" ({run} in a row)" if run and run > 1 else ""))
    else:
        lines.append("  pile: empty (anything may be played)")
    lines.append(f"  draw pile: {_n(obs['draw_pile'], 'card')}    out of the game: "
                 f"{_n(len(obs['cleared']), 'card')}"
                 + ("    direction: counter-clockwise" if obs.get("direction") == -1 else ""))
    if to_move is not None and phase != "setup":
        who = "your" if to_move == me else f"{names[to_move]}'s"
        extra = ""
        if obs.get("extra_action"):
            extra = f" -- an extra action ({obs['pending_extra']} more after this one)"
        elif obs.get("pending_extra"):
            extra = f" -- {obs['pending_extra']} extra action(s) pending"
        lines.append(f"  {who} move{extra}")
        if to_move == me and pile:
            top = pile[-1][:-1]  # a cleared pile is empty, so the top is a number
            lines.append(f"  to play on the pile: {top} or higher, or a special card "
                         "(C, C+1, C+2)")
    if phase == "setup":
        lines.append(f"  your six dealt cards: {_cards(obs.get('dealt', []))}")
    else:
        lines.append(f"  your hand: {_cards(obs['hand'])}")
    return lines


def omniscient_lines(game: Game, names: Sequence[str]) -> list[str]:
    """Every seat's hand, 3UP and 3DOWN cards, the pile and the draw pile."""
    setup = game.phase == 0
    width = max(len(x) for x in names)
    lines = [f"==== turn {game.turn} (every card) ".ljust(60, "=")]
    for s in range(game.n):
        mark = ">" if s == game.to_move else " "
        hand = _cards([card_text(c) for c in (game.dealt[s] if setup else game.hand(s))])
        up = "(not chosen)" if setup else _cards([card_text(c) for c in game.up[s]])
        down = " ".join("-" if c is None else card_text(c) for c in game.down[s])
        place = f"  finished, place {game.place[s]}" if game.place[s] else ""
        lines.append(f"{mark} {s} {names[s]:<{width}}  hand: {hand}   3UP: {up}   "
                     f"3DOWN: {down}{place}")
    pile = [card_text(c) for c in game.pile]
    lines.append(f"  pile ({len(pile)}): {_cards(pile)}   <- top" if pile else "  pile: empty")
    lines.append(f"  draw pile: {len(game.draw_pile)} cards    out of the game: "
                 f"{len(game.out)} cards")
    return lines
