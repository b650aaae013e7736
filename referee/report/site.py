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
import os
import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from ..errors import StorageError
from ..play.replay import HOW_WORDS, Record, RecordError, read_record
from ..protocol.messages import FAULT_KINDS
from ..tournament.outcome import GameOutcome
from . import svg
from .frames import build_frames, esc
from .pages import page, viewer_page
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


def _val(v: object) -> str:
    """A figure as the browser tests read it back: its JSON text."""
    return esc(json.dumps(v))


def _pm(v: float | None, ci: float | None, fmt: str, scale: float = 1.0) -> str:
    if v is None:
        return "-"
    s = format(v * scale, fmt)
    return s if ci is None else f"{s} ± {format(ci * scale, fmt)}"


def standings_html(res: Results, slug: dict[str, str], prefix: str = "") -> str:
    st = res.standings
    kinds = [k for k in ("timeouts", "crashes", "illegal", "malformed", "oversized",
                         "protocol", "forfeits")
             if any(getattr(r, k) for r in st.rows)]
    head = ("<tr><th>rank</th><th class=l>bot</th><th>games</th><th>wins</th>"
            "<th>win % (95% CI)</th><th>avg place (95% CI)</th><th>place pts</th>"
            "<th>avg penalty</th><th>rating (95% CI)</th>"
            + "".join(f"<th>{k}</th>" for k in kinds) + "</tr>")
    rows = []
    for r in st.rows:
        d = asdict(r)

        def td(field: str, text: str, cls: str = "", d: dict[str, object] = d) -> str:
            return (f'<td{" class=" + cls if cls else ""} data-field="{field}" '
                    f'data-value="{_val(d[field])}">{text}</td>')

        cells = [
            td("rank", str(r.rank)),
            f'<td class=l data-field="bot" data-value="{_val(r.bot)}"><a href="{prefix}bots/'
            f'{esc(slug[r.bot])}.html">{esc(r.bot)}</a></td>',
            td("games", str(r.games)), td("wins", str(r.wins)),
            # the interval's half-width is on the same cell, read back on its own
            f'<td data-field="win_rate" data-value="{_val(r.win_rate)}" data-ci="{_val(r.win_ci)}">'
            f"{_pm(r.win_rate, r.win_ci, '.1f', 100)}</td>",
            f'<td data-field="avg_place" data-value="{_val(r.avg_place)}" '
            f'data-ci="{_val(r.place_ci)}">{_pm(r.avg_place, r.place_ci, ".2f")}</td>',
            td("place_points", f"{r.place_points:g}"),
            td("avg_penalty", "-" if r.avg_penalty is None else f"{r.avg_penalty:.1f}"),
            f'<td data-field="rating" data-value="{_val(r.rating)}" '
            f'data-low="{_val(r.rating_low)}" data-high="{_val(r.rating_high)}">'
            f"{r.rating:+.0f} [{r.rating_low:+.0f}, {r.rating_high:+.0f}]</td>",
        ]
        cells += [td(k, str(getattr(r, k)), "bad" if getattr(r, k) else "") for k in kinds]
        rows.append(f'<tr data-bot="{esc(r.bot)}">' + "".join(cells) + "</tr>")
    done = "" if st.complete else f" — in progress: {st.played} of {st.scheduled} games"
    note = ("no faults" if not kinds else "fault columns: only the kinds that happened")
    return (f"<h2>Standings</h2><p class=note>{st.played} games, {st.seats} seats{esc(done)}. "
            "Ranked by average place. 95 % intervals over deals (the games of one deal are "
            f"not independent). Rating: Plackett–Luce (Bradley–Terry at 2 seats) fitted to "
            f"every game at once, logistic Elo scale with mean 0, its 95 % interval from a "
            f"bootstrap over deals. {note}.</p>"
            f'<table id="standings">{head}{"".join(rows)}</table>')


def charts_html(res: Results) -> str:
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
    return ('<h2>Intervals</h2><div class="charts">'
            f'<div class="chart"><h3>win rate, 95 % interval</h3>{win}</div>'
            f'<div class="chart"><h3>average place, 95 % interval</h3>{place}</div>'
            f'<div class="chart"><h3>rating, 95 % interval</h3>{rating}</div></div>')


def heatmap_html(res: Results) -> str:
    st = res.standings
    order = [r.bot for r in st.rows]
    deals = per_deal(res.outcomes, order) if res.duplicate else None
    head = "<tr><th></th>" + "".join(f"<th>{esc(b)}</th>" for b in order) + "</tr>"
    rows = []
    for a in order:
        cells = [f"<th class=l>{esc(a)}</th>"]
        for b in order:
            n = st.met[a][b]
            if a == b or n == 0:
                cells.append('<td style="background:#f0f1f4"></td>')
                continue
            share = st.head[a][b] / n
            # red (behind) through white (level) to green (ahead)
            t = abs(share - 0.5) * 2
            lo, mid = int(255 - 110 * t), int(255 - 40 * t)
            bg = f"rgb({lo},{mid},{lo})" if share >= 0.5 else f"rgb({mid},{lo},{lo})"
            extra = ""
            if deals is not None:
                pd = deals[a][b]
                if pd.diffs:
                    extra = (f"<small>per deal {pd.mean:+.2f} · deals +{pd.won} ={pd.level} "
                             f"−{pd.lost}</small>")
            cells.append(f'<td style="background:{bg}" data-a="{esc(a)}" data-b="{esc(b)}" '
                         f'data-score="{_val(st.head[a][b])}" data-games="{n}">'
                         f"<b>{st.head[a][b]:g}</b> / {n}<small>{100 * share:.0f}% ahead</small>"
                         f"{extra}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    what = ("each cell: the row bot's score against the column bot (a game won 1, level ½) over "
            "the games they played together, and the share of them the row bot finished ahead")
    if deals is not None:
        what += ("; for duplicate deals, the mean per-deal difference (the row bot's score minus "
                 "the column bot's over all seatings of a deal) and the deals won, level, lost")
    return (f"<h2>Head-to-head</h2><p class=note>{what}.</p>"
            f'<table class="heat" id="head-to-head">{head}{"".join(rows)}</table>')


def endings_html(res: Results) -> str:
    total = len(res.outcomes) or 1
    rows = endings(res.outcomes)
    table = "".join(f'<tr><td class=l>{esc(_how(h))}</td><td data-how="{esc(h)}">{n}</td>'
                    f"<td>{100 * n / total:.0f}%</td></tr>" for h, n in rows)
    chart = svg.bars("how games ended", [(_how(h), n) for h, n in rows])
    return ("<h2>How games ended</h2><div class=charts><div class=chart>"
            f'<table id="endings"><tr><th class=l>ended</th><th>games</th><th>share</th></tr>'
            f"{table}</table></div><div class=chart>{chart}</div></div>")


def faults_html(res: Results) -> str:
    by = faults_by_kind(res.outcomes, res.bots)
    kinds = [k for k in (*FAULT_KINDS, "forfeit") if any(by[b][k] for b in res.bots)]
    if not kinds:
        return "<h2>Faults</h2><p>No bot faulted.</p>"
    head = "<tr><th class=l>bot</th>" + "".join(f"<th>{k}</th>" for k in kinds) + "</tr>"
    rows = "".join("<tr><td class=l>" + esc(b) + "</td>" + "".join(
        f'<td class="{"bad" if by[b][k] else ""}" data-kind="{k}">{by[b][k]}</td>' for k in kinds)
        + "</tr>" for b in res.bots if any(by[b][k] for k in kinds))
    return (f"<h2>Faults</h2><p class=note>per bot and kind (PROTOCOL.md's fault kinds; "
            f"forfeit: games forfeited)</p><table id=faults>{head}{rows}</table>")


def game_rows(res: Results, games: Sequence[GameOutcome], prefix: str, bot: str | None,
              faults_of: dict[str, list[str]], pages: set[str]) -> str:
    rows = []
    for o in games:
        seats = list(range(len(o.seats))) if bot is None else [o.seats.index(bot)]
        for s in seats:
            opp = [b for t, b in enumerate(o.seats) if t != s]
            won = "won" if o.places[s] == 1 else "lost"
            mine = [f for f in o.faults if int(f["seat"]) == s]
            kinds = sorted({str(f.get("kind")) for f in mine})
            cell_opp = ", ".join(esc(b) for b in opp)
            lineup = " vs ".join(esc(b) for b in o.seats)
            link = (f'<a href="{prefix}games/{esc(o.game_id)}.html">{esc(o.game_id)}</a>'
                    if o.game_id in pages else
                    f"{esc(o.game_id)} <span class=note>(no replay)</span>")
            rows.append(
                f'<tr data-opp="{esc("|".join(opp))}" data-result="{won}" '
                f'data-faults="{"yes" if mine else "no"}" data-how="{esc(o.how)}">'
                f"<td class=l>{link}</td><td>{o.deal}</td>"
                + (f"<td class=l>{lineup}</td>" if bot is None else
                   f"<td>{s}</td><td class=l>{cell_opp}</td>")
                + f"<td>{o.places[s] if bot else ' '.join(map(str, o.places))}</td>"
                f"<td>{o.points[s] if bot else ' '.join(map(str, o.points))}</td>"
                f"<td class=l>{esc(_how(o.how))}</td><td>{o.turns}</td>"
                f'<td class="l {"bad" if mine or o.faults and bot is None else ""}">'
                + (esc(", ".join(kinds)) if bot else esc(", ".join(faults_of.get(o.game_id, []))))
                + ("; forfeit" if (s in o.forfeits if bot else o.forfeits) else "")
                + "</td></tr>")
            if bot is None:
                break
    return "".join(rows)


def games_table(res: Results, games: Sequence[GameOutcome], prefix: str, bot: str | None,
                pages: set[str]) -> str:
    opps = sorted({b for o in games for b in o.seats if b != bot})
    hows = sorted({o.how for o in games})
    faults_of = {o.game_id: sorted({f"{o.seats[int(f['seat'])]}: {f.get('kind')}"
                                    for f in o.faults}) for o in games}
    filters = ('<form class="filters" id="filters">'
               '<label>opponent <select name="opp"><option value="">any</option>'
               + "".join(f'<option value="{esc(b)}">{esc(b)}</option>' for b in opps)
               + "</select></label>"
               + ('<label>result <select name="result"><option value="">any</option>'
                  '<option value="won">won</option><option value="lost">not won</option>'
                  "</select></label>" if bot else "")
               + '<label>faults <select name="faults"><option value="">any</option>'
               '<option value="yes">with faults</option><option value="no">without</option>'
               "</select></label>"
               '<label>ended <select name="how"><option value="">any</option>'
               + "".join(f'<option value="{esc(h)}">{esc(_how(h))}</option>' for h in hows)
               + '</select></label><span id="shown"></span></form>')
    head = ("<tr><th class=l>game</th><th>deal</th>"
            + ("<th class=l>seats</th>" if bot is None else "<th>seat</th><th class=l>opponents</th>")
            + "<th>place</th><th>penalty</th><th class=l>ended</th><th>turns</th>"
            "<th class=l>faults</th></tr>")
    return (filters + f'<table id="games">{head}'
            f"{game_rows(res, games, prefix, bot, faults_of, pages)}</table>")


def write_site(folder: Path, out: Path, *, games: bool = True) -> Results:
    """Write the report of the results in ``folder`` (a tournament's or a match's,
    or a league's) into ``out``.  A league with several table sizes gets a site per
    size (``out/2-seats/``...) and an index linking them; the first table's results
    are returned."""
    try:
        found = load_league(folder) if is_league(folder) else [load(folder)]
    except StorageError as e:
        raise ReportError(str(e)) from None
    if not found:
        raise ReportError(f"{folder}: the league has no table sizes to report")
    try:
        if len(found) == 1:
            write_results(found[0], out, games=games)
        else:
            for res in found:
                write_results(res, out / f"{res.seats}-seats", games=games)
            _write(out / "index.html", page(
                f"{found[0].standings.name}: results", "<h2>Tables</h2><ul>" + "".join(
                    f'<li><a href="{res.seats}-seats/index.html">{esc(res.name)}</a>: '
                    f"{res.standings.played} games</li>" for res in found) + "</ul>"))
    except OSError as e:
        raise ReportError(f"cannot write the report into {out}: {e}") from None
    return found[0]


def write_results(res: Results, out: Path, *, games: bool = True) -> None:
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
                taken = [(o.seats[int(d["seat"])], float(d.get("ms", 0.0)))
                         for d in rec.decisions if not (d.get("substituted") and not d.get("ms"))]
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
            others = [(f"{g.game_id}: {' vs '.join(g.seats)}", f"{g.game_id}.html")
                      for g, _ in drawn if g.game_id != o.game_id]
            nav = [("standings", "../index.html"), ("all games", "../games.html")]
            nav += [(b, f"../bots/{slug[b]}.html") for b in dict.fromkeys(o.seats)]
            _write(out / "games" / f"{o.game_id}.html",
                   viewer_page(fr, nav, others).replace(
                       f"<title>game {esc(fr.game_id)}",
                       f"<title>{esc(res.name)}: game {esc(fr.game_id)}"))
            pages.add(o.game_id)
    lat = latencies(ms)
    hist = rating_history(res.outcomes, [r.bot for r in res.standings.rows])
    nav = [("standings", "index.html"), ("all games", "games.html")]
    lat_rows = [(b, lat[b].median, lat[b].p99) for b in (r.bot for r in res.standings.rows)]
    lat_table = ("<table id=latency><tr><th class=l>bot</th><th>decisions</th><th>median ms</th>"
                 "<th>p99 ms</th><th>max ms</th></tr>" + "".join(
                     f"<tr><td class=l>{esc(b)}</td><td>{lat[b].decisions}</td>"
                     + "".join("<td>-</td>" if v is None else f"<td>{v:.3f}</td>"
                               for v in (lat[b].median, lat[b].p99, lat[b].max)) + "</tr>"
                     for b, _, _ in lat_rows) + "</table>")
    lengths = [o.turns for o in res.outcomes]
    body = (standings_html(res, slug) + charts_html(res) + endings_html(res) + faults_html(res)
            + heatmap_html(res)
            + "<h2>Over the games</h2><div class=charts>"
            + '<div class="chart"><h3>rating after the games played so far</h3>'
            + svg.lines("rating over games", [(b, list(h)) for b, h in hist.items()],
                        x_label="games played", y_label="rating (Elo)") + "</div>"
            + '<div class="chart"><h3>game length (turns)</h3>'
            + svg.histogram("game length", lengths, x_label="turns") + "</div>"
            + '<div class="chart"><h3>decision time per bot</h3>'
            + svg.latency("decision time", lat_rows) + lat_table + "</div></div>"
            + "<h2>Bots</h2><ul>" + "".join(
                f'<li><a href="bots/{esc(slug[b])}.html">{esc(b)}</a></li>' for b in res.bots)
            + "</ul>"
            + (f"<p class=bad>{len(missing)} game record{'s' if len(missing) > 1 else ''} "
               f"could not be read (left out of the replays and decision times; the standings "
               f"count {'them' if len(missing) > 1 else 'it'}): {esc('; '.join(missing[:5]))}"
               f"</p>" if missing else ""))
    done = "" if res.standings.complete else " (in progress)"
    sub = f"{res.standings.played} of {res.scheduled} games{done}"
    _write(out / "index.html", page(title, body, nav, subtitle=sub))
    _write(out / "games.html", page(
        f"{res.name}: every game", f"<h2>{len(res.outcomes)} games</h2>"
        + games_table(res, res.outcomes, "", None, pages), nav, scripts=("filter.js",), subtitle=sub))
    bnav = [("standings", "../index.html"), ("all games", "../games.html")]
    rows = {r.bot: r for r in res.standings.rows}
    for b in res.bots:
        mine = [o for o in res.outcomes if b in o.seats]
        r = rows[b]
        summary = (f"<p>rank {r.rank} of {len(res.bots)} · {r.games} games · {r.wins} wins · "
                   f"win rate {_pm(r.win_rate, r.win_ci, '.1f', 100)} % · average place "
                   f"{_pm(r.avg_place, r.place_ci, '.2f')} · rating {r.rating:+.0f} "
                   f"[{r.rating_low:+.0f}, {r.rating_high:+.0f}] · decisions: median "
                   + ("-" if lat[b].median is None or lat[b].p99 is None else
                      f"{lat[b].median:.3g} ms, p99 {lat[b].p99:.3g} ms")
                   + "</p>")
        _write(out / "bots" / f"{slug[b]}.html", page(
            f"{res.name}: {b}", summary + games_table(res, mine, "../", b, pages), bnav,
            scripts=("filter.js",), subtitle=sub))


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
