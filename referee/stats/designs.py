"""Balanced seat orders: the Williams design.

``williams(k)`` is a list of orders of 0..k-1 (``order[j]`` is who sits in seat j)
such that every player sits in every seat equally often *and* every player sits
immediately before every other one (seat j, then seat j + 1) equally often: k
orders for even k (each ordered pair adjacent once), 2k for odd k (the square and
its mirror image: twice).  Williams (1949), "Experimental designs balanced for the
estimation of residual effects of treatments"; the rows of the square are the first
row 0, 1, k-1, 2, k-2, ... shifted by 0..k-1 (mod k).

At a card table the order is cyclic too: seat k-1 plays before seat 0.  k orders
cannot balance that wrap-around pair as well (they hold k*k cyclic neighbours for
k(k-1) ordered pairs); in a Williams square it falls on one difference, so each
player has one neighbour twice and the others once (even k) -- against ``rotate``,
where a player has the same neighbour in all k games of a deal.  Who plays which
symbol is drawn at random for each deal, which spreads that remainder evenly.
"""

from __future__ import annotations


def williams(k: int) -> list[tuple[int, ...]]:
    """The Williams design for k players (k >= 1): k orders (even k) or 2k (odd k)."""
    if k < 1:
        raise ValueError(f"a design needs at least one player, not {k}")
    first = [0]
    lo, hi = 1, k - 1
    while len(first) < k:
        first.append(lo)
        lo += 1
        if len(first) < k:
            first.append(hi)
            hi -= 1
    rows = [tuple((v + i) % k for v in first) for i in range(k)]
    if k % 2:
        rows += [tuple(reversed(r)) for r in rows]
    return rows
