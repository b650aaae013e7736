"""A compact notation for writing 3UP 3DOWN positions in tests, and helpers around it.

Owns: ``position()`` (notation -> a real ``Game`` in the play phase), ``render()``
(a ``Game`` -> the notation), ``deal_deck()`` (who-gets-what -> the explicit deck
order that RULES §2 deals into it), ``act()`` (apply a few decisions) and the
card-accounting helper ``all_cards()``.  Test-only: the engine never imports it.

The notation, one item per line (``#`` starts a comment, blank lines are ignored)::

    players 3                      # optional: else the highest seat line + 1
    variants four_of_a_colour      # optional: variant names (RULES §9)
    colours 3                      # optional: a smaller standard deck (RULES §1)
    deck alternative               # optional: the named alternative deck
    turn_limit 20                  # optional (RULES §4; default 1,000)
    turn 12                        # optional: the turn number (default 1)
    to_move 1                      # whose turn it is (default 0)
    direction -1                   # optional (ones_reverse)
    extra 1 drawn nodraw           # optional: the current action is an extra action
                                   #   with 1 more pending after it; 'drawn': a card
                                   #   was already drawn before it; 'nodraw': the
                                   #   optional draw is not offered (draw_once_per_clear)
    finished 2                     # optional: seats that finished, in order
    0: hand 7g 7r Cy | up 10r 4b | down 2g - 5b
    1: hand 3y | down 1r 1b 1y
    2:                             # a seat holding nothing (list it under 'finished')
    pile 3g 5r 5b                  # the discard pile, bottom -> top
    draw 9g 8r                     # the draw pile, top first
    out Cg                         # optional: cards already cleared out of the game

A seat line lists any of ``hand``, ``up`` and ``down`` separated by ``|``; ``down``
takes exactly three slots, ``-`` marking an empty one (a slot keeps its number,
RULES §3.3).  Seats left out hold nothing.  Cards are written in their text form
(RULES §1); a card written twice gets the next copy (the alternative deck).  Every
card of the configured deck that the position does not place is put among the
cleared cards, so that every card is accounted for exactly once.

The position is built by constructing a ``Game`` from an explicit deck order and then
setting its fields (positions in mid-game cannot be dealt).  The pile's run of equal
numbers (RULES §3.5) and run of one colour (RULES §9.6) are derived from the pile.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from referee.game import Game, GameConfig
from referee.game.cards import COLOUR, KIND, MAX_COPIES, card_text, make_card, parse_kind_colour
from referee.game.phases import PLAYING, SETUP

Card = int


class _CardReader:
    """Reads card texts, giving a repeated text its next copy (as ``parse_deck``)."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[int, int]] = Counter()

    def read(self, tokens: Iterable[str]) -> list[Card]:
        out = []
        for t in tokens:
            kc = parse_kind_colour(t)
            copy = self.seen[kc]
            assert copy < MAX_COPIES, f"card {t} written more than {MAX_COPIES} times"
            self.seen[kc] += 1
            out.append(make_card(kc[0], kc[1], copy))
        return out


def cards(text: str) -> list[Card]:
    """``"7g 7r Cy"`` -> card ids (repeated texts get successive copies)."""
    return _CardReader().read(text.split())


def texts(cs: Iterable[Card]) -> str:
    return " ".join(card_text(c) for c in cs)


def _runs(pile: Sequence[Card]) -> tuple[int, int, int, int]:
    """(top number, its run, colour run, its colour) at the top of ``pile``."""
    top = run = colour_run = 0
    run_colour = -1
    if pile and KIND[pile[-1]] <= 10:
        top = KIND[pile[-1]]
        for c in reversed(pile):
            if KIND[c] != top:
                break
            run += 1
        run_colour = COLOUR[pile[-1]]
        for c in reversed(pile):
            if KIND[c] > 10 or COLOUR[c] != run_colour:
                break
            colour_run += 1
    return top, run, colour_run, run_colour


def position(text: str) -> Game:
    """Build the ``Game`` the notation describes (see the module docstring)."""
    reader = _CardReader()
    seats: dict[int, dict[str, list[Card | None]]] = {}
    opts: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        head, _, rest = line.partition(" ")
        if head.endswith(":") and head[:-1].isdigit():
            seat = int(head[:-1])
            parts: dict[str, list[Card | None]] = {}
            body = line[len(head):].strip()
            for part in filter(None, (p.strip() for p in body.split("|"))):
                name, *toks = part.split()
                assert name in ("hand", "up", "down"), f"unknown seat part {name!r} in {raw!r}"
                if name == "down":
                    assert len(toks) == 3, f"down takes three slots ('-' = empty): {raw!r}"
                    got = iter(reader.read(t for t in toks if t != "-"))
                    parts[name] = [None if t == "-" else next(got) for t in toks]
                else:
                    parts[name] = list(reader.read(toks))
            seats[seat] = parts
        else:
            opts[head] = rest.split()
    players = int(opts["players"][0]) if "players" in opts else max(seats) + 1
    variants = frozenset(opts.get("variants", []))
    colours = int(opts["colours"][0]) if "colours" in opts else None
    deck_name = opts["deck"][0] if "deck" in opts else "standard"
    turn_limit = int(opts["turn_limit"][0]) if "turn_limit" in opts else 1000
    config = GameConfig(
        players=players, variants=variants, colours=colours, deck=deck_name, turn_limit=turn_limit
    )
    pile = reader.read(opts.get("pile", []))
    draw = reader.read(opts.get("draw", []))
    out = reader.read(opts.get("out", []))

    placed: list[Card] = [*pile, *draw, *out]
    for parts in seats.values():
        for lst in parts.values():
            placed.extend(c for c in lst if c is not None)
    full = config.deck_cards()
    full_ids = set(full)
    stray = [card_text(c) for c in placed if c not in full_ids]
    assert not stray, f"cards not in the configured deck: {stray}"
    assert len(set(placed)) == len(placed), "a card is placed twice"
    rest = [c for c in full if c not in set(placed)]

    to_move = int(opts.get("to_move", ["0"])[0])
    g = Game(config, seed=0, deck=placed + rest, first_player=to_move)
    n = g.n
    g.hands = [{} for _ in range(n)]
    g.hand_count = [0] * n
    g.up = [[] for _ in range(n)]
    g.down = [[None, None, None] for _ in range(n)]
    g.down_count = [0] * n
    for s, parts in seats.items():
        hand = [c for c in parts.get("hand", []) if c is not None]
        g._take(s, hand)
        g.up[s] = [c for c in parts.get("up", []) if c is not None]
        g.down[s] = list(parts.get("down", [None, None, None]))
        g.down_count[s] = sum(1 for c in g.down[s] if c is not None)
    g.draw_pile = list(reversed(draw))  # the engine keeps the top at the end
    g.pile = list(pile)
    g.top, g.run, g.colour_run, g.run_colour = _runs(pile)
    g.out = out + rest
    g.phase = PLAYING
    g.to_move = to_move
    g.turn = int(opts.get("turn", ["1"])[0])
    g.direction = int(opts.get("direction", ["1"])[0])
    extra = opts.get("extra")
    g.in_extra = extra is not None
    g.pending = int(extra[0]) if extra else 0
    g.drawn = bool(extra and "drawn" in extra)
    g.draw_ok = bool(extra and "nodraw" not in extra)
    g.finished = [int(x) for x in opts.get("finished", [])]
    g.place = [None] * n
    for i, s in enumerate(g.finished):
        g.place[s] = i + 1
    g.choices = [None] * n
    g.events = []
    g._legal = None
    return g


def render(g: Game) -> str:
    """The notation of ``g``'s play-phase state (``position(render(g))`` rebuilds it,
    but for the cleared cards' order and the event history)."""
    lines = [f"players {g.n}"]
    if g.config.variants:
        lines.append("variants " + " ".join(sorted(g.config.variants)))
    if g.config.colours is not None:
        lines.append(f"colours {g.config.colours}")
    if g.config.deck != "standard":
        lines.append(f"deck {g.config.deck}")
    if g.config.turn_limit != 1000:
        lines.append(f"turn_limit {g.config.turn_limit}")
    lines.append(f"turn {g.turn}")
    lines.append(f"to_move {g.to_move}")
    if g.direction != 1:
        lines.append(f"direction {g.direction}")
    if g.in_extra:
        flags = (" drawn" if g.drawn else "") + ("" if g.draw_ok else " nodraw")
        lines.append(f"extra {g.pending}{flags}")
    if g.finished:
        lines.append("finished " + " ".join(map(str, g.finished)))
    for s in range(g.n):
        parts = []
        if g.hand_count[s]:
            parts.append("hand " + texts(g.hand(s)))
        if g.up[s]:
            parts.append("up " + texts(g.up[s]))
        if g.down_count[s]:
            parts.append("down " + " ".join("-" if c is None else card_text(c) for c in g.down[s]))
        lines.append(f"{s}: {' | '.join(parts)}".rstrip())
    if g.pile:
        lines.append("pile " + texts(g.pile))
    if g.draw_pile:
        lines.append("draw " + texts(reversed(g.draw_pile)))
    return "\n".join(lines)


def deal_deck(
    down: Sequence[str],
    six: Sequence[str],
    draw: str = "",
) -> list[Card]:
    """The explicit deck order (top first) that RULES §2 deals into: ``down[s]`` (three
    cards, slots 0..2) and ``six[s]`` (the six cards to choose from) for each seat,
    then ``draw`` (top first).  Dealing is one card at a time, clockwise from seat 0:
    three rounds of 3DOWN cards, then six rounds of the six."""
    reader = _CardReader()
    downs = [reader.read(d.split()) for d in down]
    sixes = [reader.read(x.split()) for x in six]
    assert all(len(d) == 3 for d in downs) and all(len(x) == 6 for x in sixes)
    n = len(downs)
    order: list[Card] = []
    for r in range(3):
        order.extend(downs[s][r] for s in range(n))
    for r in range(6):
        order.extend(sixes[s][r] for s in range(n))
    order.extend(reader.read(draw.split()))
    return order


def act(g: Game, *decisions: str) -> Game:
    """Apply ``decisions`` in order, each by the seat to move (``"2: pickup"`` names
    the seat explicitly, e.g. in set-up)."""
    for d in decisions:
        head, sep, rest = d.partition(":")
        if sep and head.strip().isdigit():
            g.apply(int(head), rest.strip())
        else:
            (seat,) = g.to_decide()
            g.apply(seat, d)
    return g


def legal_texts(g: Game, seat: int | None = None) -> list[str]:
    if seat is None:
        (seat,) = g.to_decide()
    return [d.text for d in g.legal(seat)]


def all_cards(g: Game) -> list[Card]:
    """Every card the game holds, wherever it is: hands (or the six dealt cards in
    set-up), 3UP, 3DOWN, the draw pile, the pile and the cleared cards."""
    out: list[Card] = []
    for s in range(g.n):
        if g.phase == SETUP:
            out.extend(g.dealt[s])
        else:
            out.extend(g.hand(s))
            out.extend(g.up[s])
        out.extend(c for c in g.down[s] if c is not None)
    out.extend(g.draw_pile)
    out.extend(g.pile)
    out.extend(g.out)
    return out


def event_texts(g: Game, seat: int | None = None, start: int = 0) -> list[str]:
    from referee.game.events import event_text

    return [event_text(e) for e in g.events_for(seat, start)]
