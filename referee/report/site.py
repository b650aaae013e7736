"""The report as a static site: ``index.html`` (standings, how games ended, faults,
head-to-head, charts), ``games.html`` (every game, with filters), one page per bot
under ``bots/`` and one replay viewer per game under ``games/``.

Every page stands alone (``pages.page``): it opens from ``file://`` with no network
and no server.  The site can be written again at any time, also while the results
are still being played: each file is written beside its place and renamed into it,
so a reader never sees half a page.  Owns the site's layout; the figures come from
``results``, the charts from ``svg``, the viewer's data from ``frames``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..errors import StorageError
from ..play.replay import HOW_WORDS, Record, RecordError, read_record
from ..protocol.messages import FAULT_KINDS
from ..tournament.outcome import GameOutcome
from . import svg
from .frames import build_frames, seat_view
from .pages import render, viewer_page
from .results import (
    Results,
    endings,
    faults_by_kind,
    is_league,
    latencies,
    load,
    load_league,
    per_deal,
    rating_history,
)


class ReportError(StorageError):
    """The report cannot be written (one readable line)."""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def slugs(bots: Sequence[str]) -> dict[str, str]:
    """A file name per bot: its name with anything but letters, digits, ``-_.``
    replaced, numbered when two come out the same."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for b in bots:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", b).strip(".") or "bot"
        s, i = base, 2
        while s.lower() in used:
            s, i = f"{base}-{i}", i + 1
        used.add(s.lower())
        out[b] = s
    return out


def _how(how: str) -> str:
    return HOW_WORDS.get(how, how)


def _faults_text(o: GameOutcome) -> str:
    """Who faulted how in ``o`` ("" for a game without a fault)."""
    return ", ".join(sorted({f"{o.seats[f.seat]}: {f.kind}" for f in o.faults}))


def _val(v: object) -> str:
    """A figure as the browser tests read it back: its JSON text."""
    return json.dumps(v)


def _pm(v: float | None, ci: float | None, fmt: str, scale: float = 1.0) -> str:
    if v is None:
        return "-"
    s = format(v * scale, fmt)
    return s if ci is None else f"{s} ± {format(ci * scale, fmt.lstrip('+'))}"


def _cell(field: str, value: object, text: str, cls: str = "", href: str = "",
          **extra: object) -> dict[str, Any]:
    return {"field": field, "value": _val(value), "text": text, "cls": cls, "href": href,
            "extra": [(k, _val(v)) for k, v in extra.items()]}


def standings_context(res: Results, slug: dict[str, str], prefix: str = "") -> dict[str, Any]:
    st = res.standings
    kinds = [k for k in ("timeouts", "crashes", "illegal", "malformed", "oversized",
                         "protocol", "forfeits")
             if any(getattr(r, k) for r in st.rows)]
    rows = []
    for r in st.rows:
        cells = [
            _cell("rank", r.rank, str(r.rank)),
            _cell("bot", r.bot, r.bot, "l", f"{prefix}bots/{slug[r.bot]}.html"),
            _cell("games", r.games, str(r.games)),
            # luck-adjusted and raw score (share of opponents beaten), side by side
            _cell("adj_score", r.adj_score, _pm(r.adj_score, r.adj_score_ci, ".1f", 100),
                  ci=r.adj_score_ci),
            _cell("score", r.score, _pm(r.score, r.score_ci, ".1f", 100), ci=r.score_ci),
            _cell("variance_removed", r.variance_removed,
                  "-" if r.variance_removed is None else f"{100 * r.variance_removed:.0f}%"),
            _cell("wins", r.wins, str(r.wins)),
            # the interval's half-width is on the same cell, read back on its own
            _cell("win_rate", r.win_rate, _pm(r.win_rate, r.win_ci, ".1f", 100), ci=r.win_ci),
            _cell("avg_place", r.avg_place, _pm(r.avg_place, r.place_ci, ".2f"), ci=r.place_ci),
            _cell("place_points", r.place_points, f"{r.place_points:g}"),
            _cell("avg_penalty", r.avg_penalty,
                  "-" if r.avg_penalty is None else f"{r.avg_penalty:.1f}"),
            _cell("rating", r.rating,
                  f"{r.rating:+.0f} [{r.rating_low:+.0f}, {r.rating_high:+.0f}]",
                  low=r.rating_low, high=r.rating_high),
        ]
        cells += [_cell(k, getattr(r, k), str(getattr(r, k)), "bad" if getattr(r, k) else "")
                  for k in kinds]
        rows.append({"bot": r.bot, "cells": cells})
    done = "" if st.complete else f" — in progress: {st.played} of {st.scheduled} games"
    if res.match is not None:
        m = res.match.match
        done = f" — {res.match.status}"
        ranked = (f"Ranked by the match's result ({m.new} against {m.old}: its set score, "
                  "above), then the field's bots by "
                  + ("luck-adjusted score." if st.scores == "adjusted" else "average place."))
        return {"st": st, "kinds": kinds, "standings": rows, "done": done, "ranked": ranked}
    ranked = ("Ranked by luck-adjusted score: the share of opponents beaten, less what the "
              "cards drawn and the 3DOWN cards turned were worth (an unbiased estimate with "
              "less variance; raw score beside it, and how much of its variance the "
              "adjustment removed). The rating is fitted to the "
              + ("adjusted shares." if st.rating_scores == "adjusted" else
                 "finishing orders (no game has adjusted scores).")
              if st.scores == "adjusted" else
              "Ranked by average place (raw scores). The rating is fitted to the "
              "finishing orders.")
    return {"st": st, "kinds": kinds, "standings": rows, "done": done, "ranked": ranked}


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def _elo(e: float | None, iv: tuple[float, float] | None) -> str:
    if e is None:
        return "-"
    if not math.isfinite(e):
        return f"{e:+}"
    text = f"{e + 0.0:+.1f}"
    if iv is None:
        return text
    if iv[0] == iv[1]:
        return text + (" (every set even: the two bots never played differently)" if e == 0
                       else " (every set scored alike)")
    return f"{text} [{iv[0] + 0.0:+.1f}, {iv[1] + 0.0:+.1f}]"


PAIRS = ("0-2", "0.5-1.5", "1-1", "1.5-0.5", "2-0")


def match_context(res: Results) -> dict[str, Any] | None:
    """A match's own result on its home page: the verdict, the test, the figures
    ``referee match`` prints (Elo with its interval, the scores used), the pairs'
    counts and the LLR over sets between its bounds."""
    mf = res.match
    if mf is None:
        return None
    m, s = mf.match, mf.summary
    new, old = m.new, m.old
    sp = s.sprt
    test = ""
    if sp is not None:
        t = sp.test
        test = (f"SPRT elo0={t.elo0:g} elo1={t.elo1:g} alpha={t.alpha:g} beta={t.beta:g}: "
                f"it stops when the LLR leaves [{sp.lower:.2f}, {sp.upper:.2f}], at most "
                f"{m.max_sets} sets (--max-sets)")
        if sp.verdict == "H1":
            headline, cls = (f"H1 accepted: {new} is better than {old} (LLR {sp.llr:.2f} ≥ "
                             f"{sp.upper:.2f})"), "h1"
        elif sp.verdict == "H0":
            headline, cls = (f"H0 accepted: {new} is not {t.elo1:g} Elo better than {old} "
                             f"(LLR {sp.llr:.2f} ≤ {sp.lower:.2f})"), "h0"
        else:
            why = "stopped at the cap" if s.sets >= m.max_sets else "not decided yet"
            headline, cls = (f"no decision: LLR {sp.llr:.2f} is between {sp.lower:.2f} and "
                             f"{sp.upper:.2f} after {s.sets} sets ({why})"), "open"
    else:
        headline, cls = f"{new} − {old} after {s.sets} sets ({s.games} games)", "open"
    adjusted = s.scores == "adjusted"
    scale = ("logistic, on the pair score" if m.head_to_head
             else "the Elo-equivalent of the score against the field")
    rows = [
        ("sets", "sets", s.sets, f"{s.sets} ({s.games} games, {m.per_set} per set)",
         f"{s.sets_after_verdict} more played after the verdict, not counted"
         if s.sets_after_verdict else "a set: every game of one deal (duplicate)"),
        ("scores", "scores used", s.scores,
         "luck-adjusted" if adjusted else "raw",
         "the set scores the test read (--scores): " + (
             "each game's shares less the luck of the cards drawn and turned" if adjusted
             else "the places as they fell")),
        ("score", "set score", s.score, _pm(s.score, s.score_ci, ".4f"),
         "equal bots: 0.5000; 95 % interval"),
    ]
    if adjusted:
        rows.append(("raw_score", "raw set score", s.raw_score,
                     _pm(s.raw_score, s.raw_score_ci, ".4f"), "the places as they fell"))
    rows += [
        ("elo", "Elo", _finite(s.elo), _elo(s.elo, s.elo_interval),
         f"{new} over {old}; {scale}; 95 % interval"),
        ("score_diff", "score diff", s.score_diff, _pm(s.score_diff, s.score_diff_ci, "+.4f"),
         f"share of opponents beaten, {new} minus {old}"),
        ("place_diff", "place diff", s.place_diff, _pm(s.place_diff, s.place_diff_ci, "+.3f"),
         f"mean place of {old} minus {new}: positive, {new} finished higher"),
        ("los", "LOS", s.los, "-" if s.los is None else f"{100 * s.los:.1f} %",
         f"the probability that {new} is better"),
    ]
    if sp is not None:
        rows.append(("llr", "LLR", sp.llr, f"{sp.llr:.3f} (bounds {sp.lower:.3f}, "
                     f"{sp.upper:.3f})", "log-likelihood ratio of H1 against H0"))
    rows.append(("faults", "faults", s.faulty_sets,
                 f"{s.faulty_sets} of {s.sets} sets had faults ({new} {s.faults.new}, "
                 f"{old} {s.faults.old}, field {s.faults.field})",
                 "scored by the rules: substituted decisions, forfeits"))
    elo_extra = [] if s.elo_interval is None else \
        [("low", _val(_finite(s.elo_interval[0]))), ("high", _val(_finite(s.elo_interval[1])))]
    return {
        "new": new, "old": old, "field": ", ".join(m.field), "headline": headline,
        "cls": cls, "verdict": sp.verdict if sp and sp.verdict else "", "test": test,
        "rows": [{"field": f, "label": label, "value": _val(v), "text": text, "note": note,
                  "extra": elo_extra if f == "elo" else []}
                 for f, label, v, text, note in rows],
        "penta": list(zip(PAIRS, s.pentanomial, strict=True)) if s.pentanomial else [],
        "chart": svg.llr("LLR over sets", mf.llr, sp.lower, sp.upper) if sp else None,
    }


def charts(res: Results) -> dict[str, Markup]:
    st = res.standings
    win = svg.error_bars("win rate", [(r.bot, None if r.win_rate is None else 100 * r.win_rate,
                                       None if r.win_ci is None else 100 * r.win_ci)
                                      for r in st.rows], 0, 100, fmt=".1f", unit="%",
                         better="higher is better →")
    place = svg.error_bars("average place", [(r.bot, r.avg_place, r.place_ci) for r in st.rows],
                           1, st.seats, better="← lower is better")
    spans = [(r.rating_low, r.rating_high) for r in st.rows] or [(0.0, 1.0)]
    rating = svg.error_bars("rating", [(r.bot, r.rating, (r.rating_low, r.rating_high))
                                       for r in st.rows],
                            min(a for a, _ in spans) - 10, max(b for _, b in spans) + 10,
                            fmt="+.0f", better="Elo, higher is better →")
    return {"win": win, "place": place, "rating": rating}


def heatmap_context(res: Results) -> tuple[dict[str, Any], str]:
    """The head-to-head table, and the style of its cells' colours (figures only)."""
    st = res.standings
    order = [r.bot for r in st.rows]
    deals = per_deal(res.outcomes, order) if res.duplicate else None
    colours: dict[str, str] = {}
    rows = []
    for a in order:
        cells: list[dict[str, Any] | None] = []
        for b in order:
            n = st.met[a][b]
            if a == b or n == 0:
                cells.append(None)
                continue
            share = st.head[a][b] / n
            # red (behind) through white (level) to green (ahead)
            t = abs(share - 0.5) * 2
            lo, mid = int(255 - 110 * t), int(255 - 40 * t)
            bg = f"rgb({lo},{mid},{lo})" if share >= 0.5 else f"rgb({mid},{lo},{lo})"
            cls = colours.setdefault(bg, f"h{len(colours)}")
            deal = ""
            if deals is not None:
                pd = deals[a][b]
                if pd.diffs:
                    deal = (f"per deal {pd.mean:+.2f} · deals +{pd.won} ={pd.level} "
                            f"−{pd.lost}")
            cells.append({"b": b, "cls": cls, "n": n, "score": f"{st.head[a][b]:g}",
                          "score_json": _val(st.head[a][b]), "ahead": f"{100 * share:.0f}",
                          "deal": deal})
        rows.append((a, cells))
    what = ("each cell: the row bot's score against the column bot (a game won 1, level ½) over "
            "the games they played together, and the share of them the row bot finished ahead")
    if deals is not None:
        what += ("; for duplicate deals, the mean per-deal difference (the row bot's score minus "
                 "the column bot's over all seatings of a deal) and the deals won, level, lost")
    css = "".join(f".heat td.{c}{{background:{bg}}}" for bg, c in colours.items())
    return {"order": order, "rows": rows, "what": what}, css


def endings_context(res: Results) -> tuple[list[dict[str, Any]], Markup]:
    total = len(res.outcomes) or 1
    rows = endings(res.outcomes)
    table = [{"how": h, "words": _how(h), "n": n, "share": f"{100 * n / total:.0f}%"}
             for h, n in rows]
    return table, svg.bars("how games ended", [(_how(h), n) for h, n in rows])


def faults_context(res: Results) -> dict[str, Any]:
    by = faults_by_kind(res.outcomes, res.bots)
    kinds = [k for k in (*FAULT_KINDS, "forfeit") if any(by[b][k] for b in res.bots)]
    rows = [(b, [(k, by[b][k]) for k in kinds]) for b in res.bots
            if any(by[b][k] for k in kinds)]
    return {"kinds": kinds, "rows": rows}


def game_rows(res: Results, games: Sequence[GameOutcome], prefix: str, bot: str | None,
              faults_of: dict[str, list[str]], pages: set[str]) -> list[dict[str, Any]]:
    rows = []
    for o in games:
        seats = list(range(len(o.seats))) if bot is None else [o.seats.index(bot)]
        for s in seats:
            opp = [b for t, b in enumerate(o.seats) if t != s]
            mine = [f for f in o.faults if f.seat == s]
            kinds = sorted({str(f.kind) for f in mine})
            text = ", ".join(kinds) if bot else ", ".join(faults_of.get(o.game_id, []))
            forfeit = s in o.forfeits if bot else bool(o.forfeits)
            rows.append({
                "opp": "|".join(opp), "result": "won" if o.places[s] == 1 else "lost",
                "faults": "yes" if mine else "no", "how": o.how,
                "link": f"{prefix}games/{o.game_id}.html" if o.game_id in pages else "",
                "game_id": o.game_id, "deal": res.shown_deal(o), "seat": s,
                "opponents": ", ".join(opp), "lineup": " vs ".join(o.seats),
                "places": o.places[s] if bot else " ".join(map(str, o.places)),
                "points": o.points[s] if bot else " ".join(map(str, o.points)),
                "ended": _how(o.how), "turns": o.turns,
                "bad": bool(mine or o.faults and bot is None),
                "fault_text": text + ("; forfeit" if forfeit else ""),
            })
            if bot is None:
                break
    return rows


def games_table(res: Results, games: Sequence[GameOutcome], prefix: str, bot: str | None,
                pages: set[str]) -> dict[str, Any]:
    hows = sorted({o.how for o in games})
    faults_of = {o.game_id: sorted({f"{o.seats[f.seat]}: {f.kind}"
                                    for f in o.faults}) for o in games}
    return {"bot": bot, "opponents": sorted({b for o in games for b in o.seats if b != bot}),
            "hows": [(h, _how(h)) for h in hows],
            "rows": game_rows(res, games, prefix, bot, faults_of, pages)}


def write_site(folder: Path, out: Path, *, games: bool = True, stamp: str = "",
               scores: str = "adjusted") -> Results:
    """Write the report of the results in ``folder`` (a tournament's or a match's,
    or a league's) into ``out``.  A league with several table sizes gets a site per
    size (``out/2-seats/``...) and an index linking them; the first table's results
    are returned.  ``stamp``: a line on every page saying when and in what state it
    was written (``league run --report``), none by default."""
    league = is_league(folder)
    try:
        found = load_league(folder, scores=scores) if league else [load(folder, scores)]
        history = load_league(folder, history=True, scores=scores) if league else []
    except StorageError as e:
        raise ReportError(str(e)) from None
    if not found:
        raise ReportError(f"{folder}: the league has no table sizes to report")
    try:
        if not league:
            write_results(found[0], out, games=games, stamp=stamp)
        else:
            # A league: a site per table size (SITE/2-seats/...), whatever their
            # number, an index linking them, and the history of every version
            # (retired and withdrawn ones too) under SITE/history/.
            for res in found:
                write_results(res, out / f"{res.seats}-seats", games=games, stamp=stamp)
            for res in history:  # the figures and the games, without replays
                write_results(res, out / "history" / f"{res.seats}-seats", games=False,
                              stamp=stamp)
            _write(out / "index.html", render(
                "tables.html", title=f"{found[0].standings.name}: results", stamp=stamp,
                tables=[(res.name, f"{res.seats}-seats/index.html", res.standings.played)
                        for res in found],
                history=[(res.name, f"history/{res.seats}-seats/index.html",
                          len(res.bots), res.standings.played) for res in history]))
    except OSError as e:
        raise ReportError(f"cannot write the report into {out}: {e}") from None
    return found[0]


def write_results(res: Results, out: Path, *, games: bool = True, stamp: str = "") -> None:
    """Write the report of ``res`` into ``out`` (a league builds its ``Results`` and
    calls this, after each batch of games if it likes)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot create the report folder {out}: {e}") from None
    slug = slugs(res.bots)
    ms: dict[str, list[float]] = {b: [] for b in res.bots}
    deals = res.deals()
    missing: list[str] = []
    title = f"{res.name}: results"
    pages: set[str] = set()
    # A deal at a time: its games' pages link to each other, and only to the pages
    # that could be drawn.
    for group in deals.values():
        drawn = []
        for o in group:
            try:
                rec = read_record(str(res.record_path(o)))
                fr = build_frames(rec) if games else None
                # a decision the referee played for a forfeited seat took the bot no time
                taken = [(o.seats[d.seat], d.ms)
                         for d in rec.decisions if not (d.substituted and not d.ms)]
            except (RecordError, KeyError, IndexError, TypeError, ValueError) as e:
                missing.append(f"{o.game_id}: {e}")
                continue
            for bot, t in taken:
                ms[bot].append(t)
            drawn.append((o, fr))
        if not games:
            continue
        for o, fr in drawn:
            assert fr is not None
            others = [(f"{g.game_id}: {' vs '.join(g.seats)}", f"{g.game_id}.html",
                       _faults_text(g)) for g, _ in drawn if g.game_id != o.game_id]
            nav = [("standings", "../index.html"), ("all games", "../games.html")]
            nav += [(b, f"../bots/{slug[b]}.html") for b in dict.fromkeys(o.seats)]
            _write(out / "games" / f"{o.game_id}.html",
                   viewer_page(fr, nav, others, title=f"{res.name}: game {fr.game_id}"))
            pages.add(o.game_id)
    lat = latencies(ms)
    hist = rating_history(res.outcomes, [r.bot for r in res.standings.rows],
                          scores=res.standings.scores)
    nav = [("standings", "index.html"), ("all games", "games.html")]
    lat_rows = [(b, lat[b].median, lat[b].p99) for b in (r.bot for r in res.standings.rows)]
    lengths = [o.turns for o in res.outcomes]
    heat, heat_css = heatmap_context(res)
    ends, ends_chart = endings_context(res)
    figures = charts(res) | {
        "endings": ends_chart,
        "history": svg.lines("rating over games", [(b, list(h)) for b, h in hist.items()],
                             x_label="games played", y_label="rating (Elo)"),
        "lengths": svg.histogram("game length", lengths, x_label="turns"),
        "latency": svg.latency("decision time", lat_rows),
    }
    latency_table = [(b, lat[b].decisions, ["-" if v is None else f"{v:.3f}"
                                            for v in (lat[b].median, lat[b].p99, lat[b].max)])
                     for b, _, _ in lat_rows]
    unread = ""
    if missing:
        many = len(missing) > 1
        unread = (f"{len(missing)} game record{'s' if many else ''} could not be read (left "
                  f"out of the replays and decision times; the standings count "
                  f"{'them' if many else 'it'}): {'; '.join(missing[:5])}")
    done = "" if res.standings.complete else " (in progress)"
    sub = f"{res.standings.played} of {res.scheduled} games{done}"
    if res.match is not None:  # a match's cap is no count of games to play
        sub = f"match {res.match.match.new} vs {res.match.match.old}: {res.match.status}"
    _write(out / "index.html", render(
        "index.html", title=title, nav=nav, subtitle=sub, css=heat_css, stamp=stamp,
        scripts=("sort.js",),
        **standings_context(res, slug), match=match_context(res), charts=figures, endings=ends,
        faults=faults_context(res), heat=heat, latency=latency_table,
        bots=[(b, f"bots/{slug[b]}.html") for b in res.bots], missing=unread))
    _write(out / "games.html", render(
        "games.html", title=f"{res.name}: every game", nav=nav, subtitle=sub, stamp=stamp,
        scripts=("filter.js", "sort.js"), count=len(res.outcomes),
        table=games_table(res, res.outcomes, "", None, pages)))
    bnav = [("standings", "../index.html"), ("all games", "../games.html")]
    rows = {r.bot: r for r in res.standings.rows}
    for b in res.bots:
        mine = [o for o in res.outcomes if b in o.seats]
        r = rows[b]
        summary = (f"rank {r.rank} of {len(res.bots)} · {r.games} games · {r.wins} wins · "
                   f"win rate {_pm(r.win_rate, r.win_ci, '.1f', 100)} % · average place "
                   f"{_pm(r.avg_place, r.place_ci, '.2f')} · rating {r.rating:+.0f} "
                   f"[{r.rating_low:+.0f}, {r.rating_high:+.0f}] · decisions: median "
                   + ("-" if lat[b].median is None or lat[b].p99 is None else
                      f"{lat[b].median:.3g} ms, p99 {lat[b].p99:.3g} ms"))
        _write(out / "bots" / f"{slug[b]}.html", render(
            "bot.html", title=f"{res.name}: {b}", nav=bnav, subtitle=sub, stamp=stamp,
            scripts=("filter.js", "sort.js"), summary=summary,
            table=games_table(res, mine, "../", b, pages)))


def author_game_html(record: Path, seats: Sequence[int] | None,
                     scrub: Callable[[str], str] = str) -> str:
    """The replay viewer of the game in ``record`` as one page: with ``seats``, only
    what those seats could see (``frames.seat_view``: an author's own game in a
    league that does not publish full records); None: every card.  ``scrub``: applied
    to every text the referee wrote of a fault (a path of the server's machine in
    it), as ``league serve`` does to its replies.  ValueError: no such record."""
    try:
        fr = build_frames(read_record(str(record)))
    except RecordError as e:
        raise ValueError(str(e)) from None
    for f in fr.frames:
        for x in f["faults"]:
            for k in ("detail", "action"):
                if k in x:
                    x[k] = scrub(x[k])
    fr.error, fr.result = scrub(fr.error), scrub(fr.result)
    return viewer_page(fr if seats is None else seat_view(fr, seats))


def write_game_html(rec: Record, out: Path, *, seat: int | None = None,
                    turn: int | None = None) -> None:
    """One game as one self-contained file (``referee replay FILE --html OUT``),
    opening at ``turn`` from ``seat``'s view when given."""
    fr = build_frames(rec)
    if seat is not None:
        fr.start_view = str(seat)
    if turn is not None:
        fr.start_turn = turn
    try:
        _write(out, viewer_page(fr))
    except OSError as e:
        raise ReportError(f"cannot write {out}: {e}") from None
