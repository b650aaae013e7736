"""``referee play``: one game, or a match of games, at this terminal -- the bots'
seats, the narration, the transcript, the records.  Loaded only when ``play`` runs
(``referee.cli.main``)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import click
from tabulate import tabulate

from ..game import VARIANTS, ConfigError, GameConfig
from ..game.cards import DECKS
from ..game.seeds import MAX_SEED
from ..play.replay import HOW_WORDS, Narrator
from ..play.runner import Applied, BotFault, Fault, FaultPolicy, GameRecord, TimeControl
from ..play.series import (
    DeckFileError,
    Session,
    game_summary,
    make_output_dir,
    read_deck_file,
    standings,
)
from ..play.transcript import TracedPlayer, Transcript
from ..players.botspec import (
    DEFAULT_LISTEN,
    NAMING,
    BotSpec,
    BotSpecError,
    names_from_hellos,
    parse_specs,
)
from ..players.external import ExternalPlayer
from ..players.factory import make_player
from ..players.human import HumanClock, HumanPlayer
from ..players.process import DEFAULT_MEMORY_MB
from ..players.remote_seats import RemoteSeats
from ..players.sandbox import MODES as SANDBOX_MODES
from ..players.sandbox import Sandbox, SandboxConfig, SandboxError, resolve
from ..text.quoting import control, printable
from .kit import UserError
from .options import clock_and_fault_options, variant_names

PLAY_HELP = """Play one game, or a match (--games N), among 2 to 6 bots.

\b
Each BOT (or --bot SPEC) takes the next seat, positional bots first:
  random | lowest | heuristic   a built-in bot
  human                         you, at this terminal (same as --human)
  example:python-random         the example bots: python-random,
  example:python-heuristic        python-heuristic, js (needs node)
  example:js
  stdio:COMMAND                 your bot over stdio (JSON lines)
  zmq:COMMAND                   your bot over ZeroMQ (msgpack)
  zmq:example:python-random     an example bot over ZeroMQ
  remote:NAME                   a bot you start yourself (in a debugger, on
                                  another machine) that connects to --listen
  COMMAND                       same as stdio:COMMAND, e.g. "python3 mybot.py"
  NAME=SPEC                     any of the above, with a seat name

\b
Remote bots (protocol/ZEROMQ.md): the referee listens on --listen and waits
up to --wait seconds for every remote:NAME bot to connect and say hello.
With --keys DIR and --server-key FILE (both needed off loopback) it uses
CURVE: NAME is admitted only with the keypair whose public half is
DIR/NAME.key ('referee keys new NAME'; 'referee keys server' makes the
referee's). On loopback without keys, any local program whose hello says
"name": "NAME" takes the seat.

\b
Examples:
  referee play heuristic example:python-random
  referee play heuristic --bot "python3 mybot.py" --transcript
  referee play --human heuristic random --seed 7
  referee play lowest lowest --deck-file deal.txt --first-player 0
  referee play heuristic random --games 20 -V match_scoring --quiet
  referee play heuristic remote:alice --wait 600
  referee play heuristic remote:alice --listen tcp://0.0.0.0:5555 \\
      --keys keys/bots --server-key keys/referee.key_secret
"""


CliError = UserError  # a user mistake: one line, 'Error: ...', exit status 1


def _variants(values: tuple[str, ...]) -> frozenset[str]:
    try:
        return frozenset(variant_names(values))
    except ValueError as e:
        raise CliError(str(e)) from None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _use_colour(flag: bool | None, stream: Any) -> bool:
    if flag is not None:
        return flag
    try:
        return bool(stream.isatty()) and not os.environ.get("NO_COLOR")
    except (AttributeError, ValueError):
        return False


@click.command("play", help=PLAY_HELP, context_settings={"max_content_width": 100})
@click.argument("bots", nargs=-1, metavar="[BOT]...")
@click.option("--bot", "bot_opts", multiple=True, metavar="SPEC",
              help="A bot for the next seat (after the positional ones); repeatable.")
@click.option("--human", is_flag=True, help="Take seat 0 yourself, in this terminal.")
@click.option("-n", "--games", default=1, show_default=True, type=click.IntRange(min=1),
              help="Games in the match (seeds SEED, SEED+1, ...; the seats rotate).")
@click.option("--rotate/--no-rotate", default=True, show_default=True,
              help="In a match, rotate the seats from game to game (game 2: the first "
                   "bot takes seat 1, ...), so that no bot keeps the same neighbours; "
                   "--no-rotate keeps every bot in its seat.")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None,
              help="Seed of the (first) game, 0 to 2**63-1; default: a random one, printed.")
@click.option("-V", "--variant", "variant_opts", multiple=True, metavar="NAME",
              help=f"A rules variant (RULES §9), repeatable or comma-separated: "
                   f"{', '.join(VARIANTS)}.")
@click.option("--colours", "--colors", "colours", type=int, default=None,
              help="Number of colours in the deck (1-7; RULES §1, §9.9).")
@click.option("--deck", "deck_name", default="standard", show_default=True, metavar="NAME",
              help="Deck composition: standard (84 cards) or alternative (RULES §1).")
@click.option("--deck-file", type=click.Path(dir_okay=False), default=None,
              help="Deal exactly this deck: card texts in deal order (first = top), "
                   "whitespace separated, '#' comments.")
@click.option("--first-player", type=int, default=None, metavar="SEAT",
              help="The seat that plays first (default: drawn from the seed).")
@click.option("--turn-limit", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Turns after which the game ends; the players who have not finished "
                   "are placed by penalty points (RULES §5.2).")
@clock_and_fault_options(config_keys=False)
@click.option("--record", "record_file", type=click.Path(dir_okay=False), default=None,
              help="Write the game record here (a match: FILE-1.jsonl, FILE-2.jsonl, ...).")
@click.option("--record-dir", type=click.Path(file_okay=False), default=None,
              help="Write each game's record into this directory.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the result.")
@click.option("-v", "--verbose", is_flag=True, help="In a match, narrate every game.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON only.")
@click.option("--transcript", is_flag=True,
              help="Print every message to and from each bot (debugging).")
@click.option("--transcript-file", type=click.Path(dir_okay=False), default=None,
              help="Save the transcript to this file.")
@click.option("--only", "only", metavar="NAME", default=None,
              help="Show only this seat's lines in the transcript.")
@click.option("--short/--full", "short", default=None,
              help="Transcript: show a request's observation as {...} and its legal "
                   "list and events by their counts, or every message whole (default: "
                   "short on a terminal, full in a file or a pipe).")
@click.option("--bot-log-dir", type=click.Path(file_okay=False), default=None,
              help="Save each external bot's stderr in this directory.")
@click.option("--memory-mb", type=click.IntRange(min=0), default=DEFAULT_MEMORY_MB,
              show_default=True, metavar="MB",
              help="Each external bot's memory limit, for its whole process tree in the "
                   "sandbox (0: none without the sandbox), e.g. to test under a "
                   "tournament's limit.")
@click.option("--colour/--no-colour", "--color/--no-color", "colour", default=None,
              help="Colour the output (default: when it is a terminal).")
@click.option("--listen", default=DEFAULT_LISTEN, show_default=True, metavar="ENDPOINT",
              help="Where remote:NAME bots connect (ZeroMQ: tcp://ADDRESS:PORT or "
                   "ipc://PATH; CURVE keys needed unless loopback).")
@click.option("--keys", "keys_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR", help="The remote bots' public keys, NAME.key ('referee keys "
                                  "new NAME'): turns CURVE on, with --server-key.")
@click.option("--server-key", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="The referee's secret key file ('referee keys server' writes "
                   "referee.key_secret).")
@click.option("--wait", type=click.FloatRange(min=0), default=300.0, show_default=True,
              metavar="SECONDS",
              help="How long to wait for the remote bots to connect (and, in a match, "
                   "to come back after losing their connection).")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(SANDBOX_MODES), default="auto",
              show_default=True,
              help="Run the external bots in the bubblewrap sandbox: auto (where it works, "
                   "else with a warning), on (refuse to start without it), off.")
@click.option("--allow-read", "allow_read", multiple=True, metavar="PATH",
              type=click.Path(exists=True),
              help="A path the sandboxed bots may read besides their own folder (a model "
                   "file); repeatable.")
@click.option("--freeze-between-turns/--no-freeze-between-turns", "freeze", default=False,
              show_default=True,
              help="Freeze each sandboxed bot between its turns, so that it takes no CPU on "
                   "the other seats' turns (RULES.md, Time control; remote bots cannot be "
                   "frozen).")
@click.option("--names", "naming", type=click.Choice(NAMING), default="spec", show_default=True,
              help="How seats are named: spec (NAME=, else the program's name) or hello (the "
                   "name each started bot gives in its hello, as chess GUIs do; a NAME= "
                   "given is kept; made a plain name of at most 32 characters, numbered "
                   "when two are alike).")
def play(bots: tuple[str, ...], bot_opts: tuple[str, ...], human: bool, games: int,
         rotate: bool, seed: int | None, variant_opts: tuple[str, ...], colours: int | None,
         deck_name: str, deck_file: str | None, first_player: int | None, turn_limit: int,
         startup: float, move_time: float, bank: float, game_time: float | None,
         fault_mode: str, strikes: int,
         record_file: str | None, record_dir: str | None, quiet: bool, verbose: bool,
         as_json: bool, transcript: bool, transcript_file: str | None,
         only: str | None, short: bool | None, bot_log_dir: str | None,
         memory_mb: int | None, colour: bool | None, listen: str, keys_dir: str | None,
         server_key: str | None, wait: float, sandbox_mode: str,
         allow_read: tuple[str, ...], freeze: bool, naming: str) -> None:
    specs = _play_specs((["human"] if human else []) + list(bots) + list(bot_opts), as_json)
    if record_file and record_dir:
        raise CliError("give --record FILE or --record-dir DIR, not both")
    remotes = [s.remote for s in specs if s.remote]
    if not remotes and (keys_dir or server_key):
        raise CliError("--keys and --server-key are for remote bots: add a remote:NAME bot, "
                       "or drop them")
    config = _play_config(len(specs), variant_opts, colours, deck_name, turn_limit)
    deck = None
    if deck_file:
        try:
            deck = read_deck_file(deck_file)
        except DeckFileError as e:
            raise CliError(str(e)) from None
    if first_player is not None and not 0 <= first_player < len(specs):
        raise CliError(f"--first-player must be a seat from 0 to {len(specs) - 1}, "
                       f"not {first_player}")
    if seed is None:
        seed = random.SystemRandom().randrange(1, 10**9)
    if seed + games - 1 > MAX_SEED:
        raise CliError(f"--seed {seed} with --games {games} would need seeds up to "
                       f"{seed + games - 1}; seeds go up to {MAX_SEED} (2**63-1)")
    sandbox = _sandbox(SandboxConfig(mode=sandbox_mode, memory_mb=memory_mb or DEFAULT_MEMORY_MB,
                                     read_only=tuple(os.path.abspath(p) for p in allow_read),
                                     freeze_between_turns=freeze or None),
                       specs, record_file, record_dir, bot_log_dir, transcript_file, keys_dir,
                       server_key)
    session = Session(config, seed, games, deck, first_player,
                      TimeControl(startup, move_time, bank, game_time),
                      FaultPolicy(fault_mode, strikes), record_file, record_dir,
                      sandbox=sandbox.describe(), rotate=rotate)
    try:
        session.prepare()
        if bot_log_dir:
            make_output_dir(bot_log_dir, "the bots' log directory")
    except ConfigError as e:
        raise CliError(f"{e}" + (f" (deck file {deck_file})" if deck_file else "")) from None
    except OSError as e:
        raise CliError(str(e)) from None

    names = [s.name for s in specs]
    tr, tr_file = _open_transcript(names, transcript, transcript_file, only, short, colour,
                                   as_json)
    view = _PlayView(session, names, quiet=quiet, verbose=verbose, as_json=as_json,
                     colour=colour, human=any(s.kind == "human" for s in specs), transcript=tr)
    remote: RemoteSeats | None = None
    if remotes:
        try:
            remote = RemoteSeats(remotes, listen, keys_dir=keys_dir, server_key=server_key,
                                 wait=wait,
                                 on_warning=lambda text: click.echo(f"referee: {text}",
                                                                    err=True),
                                 on_status=view.note)
        except BotSpecError as e:
            if tr_file is not None:
                tr_file.close()
            raise CliError(str(e)) from None

    clock = HumanClock()
    players: list[Any] = []

    def cleanup() -> None:
        _close(players)
        if remote is not None:
            remote.close()
        if tr_file is not None:
            tr_file.close()

    try:
        for i, spec in enumerate(specs):  # appended one by one: cleanup closes them
            players.append(_seat_player(
                spec, session, view, clock, tr, seed=seed * 7919 + i, remote=remote,
                sandbox=sandbox, log_dir=bot_log_dir))
        if remote is not None:
            _connect_remote_seats(remote, specs, players, view.note)
        if naming == "hello":
            names = _hello_names(specs, players, names)
            view.rename(names)
            if tr is not None:
                tr.set_names(names)
    except BotSpecError as e:
        cleanup()
        raise CliError(str(e)) from None
    except KeyboardInterrupt:
        cleanup()
        raise CliError("interrupted while waiting for the remote bots") from None
    except BaseException:
        cleanup()
        raise

    try:
        records = session.run(players, on_event=view.on_event, on_game=view.on_game,
                              on_result=view.on_result, clock=clock)
    except KeyboardInterrupt:
        raise CliError("interrupted: the game was not finished") from None
    except BrokenPipeError:  # the output was cut short ('referee play ... | head')
        sys.stderr.close()
        sys.exit(1)
    except OSError as e:
        raise CliError(f"cannot write the game record: {e}") from None
    finally:
        cleanup()

    table = standings(names, records, config.has("match_scoring"),
                      [session.seating(i) for i in range(len(records))])
    if as_json:
        paths = [session.record_path(i) for i in range(games)]
        click.echo(json.dumps({
            "seed": seed,
            "config": config.to_dict(),
            "bots": names,
            "games": [game_summary(r, p) for r, p in zip(records, paths, strict=True)],
            "standings": [s.to_dict() for s in table],
            "match_scoring": config.has("match_scoring"),
        }, indent=2))
        return
    if games > 1:
        _match_standings(view.echo, session, table, record_file, record_dir)
    if transcript_file:
        view.echo(f"transcript: {transcript_file}")


def _play_specs(texts: Sequence[str], as_json: bool) -> list[BotSpec]:
    """The seats' bot specs, or CliError: 2 to 6 bots, at most one person."""
    if not 2 <= len(texts) <= 6:
        raise CliError(
            f"a game needs 2 to 6 bots, {len(texts)} given: "
            + ("add bots, e.g. 'referee play heuristic random'" if len(texts) < 2
               else "give at most 6")
        )
    try:
        specs = parse_specs(texts)
    except BotSpecError as e:
        raise CliError(str(e)) from None
    humans = [i for i, s in enumerate(specs) if s.kind == "human"]
    if len(humans) > 1:
        raise CliError("only one person can play at this terminal: give 'human' (or --human) once")
    if humans and as_json:
        raise CliError("--json cannot be combined with a human seat: drop --json to play yourself")
    return specs


def _play_config(players: int, variant_opts: tuple[str, ...], colours: int | None,
                 deck_name: str, turn_limit: int) -> GameConfig:
    if deck_name not in DECKS:
        raise CliError(f"unknown deck {deck_name!r}: choose {' or '.join(DECKS)} (RULES §1)")
    try:
        return GameConfig(players=players, variants=_variants(variant_opts),
                          colours=colours, deck=deck_name, turn_limit=turn_limit)
    except ConfigError as e:
        raise CliError(str(e)) from None


def _open_transcript(names: Sequence[str], transcript: bool, transcript_file: str | None,
                     only: str | None, short: bool | None, colour: bool | None,
                     as_json: bool) -> tuple[Transcript | None, TextIO | None]:
    """The transcript (to the terminal, stderr under --json, and/or a file) and the
    file it writes, if any; (None, None) without --transcript or --transcript-file."""
    if (only is not None or short is not None) and not (transcript or transcript_file):
        raise CliError("--only and --short/--full shape the transcript: add --transcript "
                       "(or --transcript-file FILE)")
    if only is not None and only not in names:
        raise CliError(f"--only {only}: no seat is named {only!r}; the seats are "
                       f"{', '.join(names)}")
    if not (transcript or transcript_file):
        return None, None
    tr = Transcript(only=only)
    tr.set_names(names)
    tr_file = None
    if transcript:
        stream = sys.stderr if as_json else sys.stdout
        on_terminal = _isatty(stream)
        tr.add_sink(stream, _use_colour(colour, stream),
                    short=on_terminal if short is None else short)
    if transcript_file:
        try:
            tr_file = open(transcript_file, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as e:
            raise CliError(f"cannot write the transcript {transcript_file}: {e}") from None
        tr.add_sink(tr_file, False, short=bool(short))
    return tr, tr_file


def _seat_player(spec: BotSpec, session: Session, view: _PlayView, clock: HumanClock,
                 tr: Transcript | None, *, seed: int, remote: RemoteSeats | None,
                 sandbox: Sandbox, log_dir: str | None) -> Any:
    """The player of one seat: a person at this terminal sees the table by the current
    seating, and a built-in bot's decisions go into the transcript."""
    p = make_player(spec, time_control=session.time_control,
                    on_message=tr.on_message if tr else None, log_dir=log_dir, seed=seed,
                    remote_seats=remote, sandbox=sandbox)
    if isinstance(p, HumanPlayer):
        p.names = view.seat_names
        p.clock = clock
        p.out = view.out
    elif tr is not None and spec.kind == "builtin":
        p = TracedPlayer(p, tr)
    return p


def _hello_names(specs: Sequence[BotSpec], players: Sequence[Any],
                 names: Sequence[str]) -> list[str]:
    """``--names hello``: start each external bot not given a NAME= (it would be
    started for its first game anyway) and name its seat from its hello
    (``names_from_hellos``: hostile text made a plain, bounded, unique name).  A bot
    that does not start keeps its name, and its first game records why."""
    hellos: list[str | None] = []
    for spec, p in zip(specs, players, strict=True):
        if spec.named or spec.remote or not isinstance(p, ExternalPlayer):
            hellos.append(None)
            continue
        if p.hello is None:
            with contextlib.suppress(BotFault):
                p.connect()
        hellos.append(p.hello.name if p.hello is not None else None)
    new = names_from_hellos(names, hellos)
    for p, name in zip(players, new, strict=True):
        if isinstance(p, ExternalPlayer):
            p.name = name
    return new


def _connect_remote_seats(remote: RemoteSeats, specs: Sequence[BotSpec], players: list[Any],
                          note: Callable[[str], None]) -> None:
    """Wait for the remote bots to connect into their seats, saying so."""
    note(remote.waiting_line())
    remote.connect(
        [(s.remote, players[i]) for i, s in enumerate(specs) if s.remote],
        on_connected=lambda name, p: note(
            f"remote bot {name} connected"
            + (f" (version {p.hello.version})" if p.hello and p.hello.version else "")))


class _PlayView:
    """What ``play`` shows while its games run: the narration, faults, the transcript's
    applied decisions, each game's header and result (``session.run``'s callbacks)."""

    def __init__(self, session: Session, names: Sequence[str], *, quiet: bool, verbose: bool,
                 as_json: bool, colour: bool | None, human: bool,
                 transcript: Transcript | None) -> None:
        self.session = session
        self.names = list(names)
        self.labels = [f"{n} [{i}]" for i, n in enumerate(names)]
        # The current game's names and labels by seat (a match rotates the seats).
        self.seat_names = list(self.names)
        self.seat_labels = list(self.labels)
        self.quiet, self.verbose, self.as_json = quiet, verbose, as_json
        self.colour = colour
        self.human = human
        self.tr = transcript
        self.out = sys.stdout
        self.narrate = not quiet and not as_json and not human and (
            session.games == 1 or verbose)
        self.narrator = Narrator(self.seat_labels, self.echo)

    def rename(self, names: Sequence[str]) -> None:
        """The seats' names changed before the first game (``--names hello``)."""
        self.names = list(names)
        self.labels = [f"{n} [{i}]" for i, n in enumerate(names)]
        self.seat_names[:] = self.names
        self.seat_labels[:] = self.labels

    def echo(self, text: str) -> None:
        if not self.as_json:
            click.echo(text)

    def note(self, text: str) -> None:
        """A status line: never mixed into --json or --quiet output."""
        click.echo(text, err=self.as_json or self.quiet)

    def on_event(self, kind: str, payload: Any) -> None:
        if kind == "event":
            if self.narrate:
                self.narrator.event(payload)
        elif kind == "fault":
            self._fault(payload)
        elif kind == "decision" and self.tr is not None:
            d: Applied = payload
            self.tr.applied(self.seat_names[d.seat], d.text, d.elapsed,
                            substituted=d.substituted)

    def _fault(self, f: Fault) -> None:
        if self.tr is not None:
            self.tr.fault(f)
        if not self.as_json and not self.quiet:
            # A fault's detail may list the bot's legal decisions, hence its hand: a
            # person at the table sees it only once the game is over.
            text = (f"   FAULT {f.bot} (seat {f.seat}): {f.kind} [{f.action}]" if self.human
                    else f"   FAULT {f}")
            if not _use_colour(self.colour, self.out):
                self.echo(text)
            elif not self.as_json:
                control(self.out, "\x1b[31m")
                self.out.write(text)
                control(self.out, "\x1b[0m")
                self.out.write("\n")
        if f.action == "forfeit" and self.narrate:
            self.narrator.forfeit(f.seat, f.held)

    def on_game(self, i: int, gid: str) -> None:
        seating = self.session.seating(i)
        self.seat_names[:] = [self.names[b] for b in seating]
        self.seat_labels[:] = [f"{self.names[b]} [{s}]" for s, b in enumerate(seating)]
        self.narrator.names = list(self.seat_labels)
        if self.narrate:
            self.echo(_header(self.session, i, self.seat_labels, whole_match=False))
        elif i == 0 and not self.quiet:
            self.echo(_header(self.session, i, self.seat_labels, whole_match=True))

    def on_result(self, i: int, rec: GameRecord, path: str | None) -> None:
        if self.as_json:
            return
        games = self.session.games
        if games == 1 or self.verbose:
            for line in _result_lines(rec, self.seat_labels)[1 if self.quiet else 0:]:
                self.echo(line)
            if path:
                self.echo(f"record: {path}")
        elif not self.quiet:
            win = ", ".join(self.seat_labels[s] for s in range(len(self.labels))
                            if rec.places[s] == 1)
            self.echo(f"game {i + 1}/{games} (seed {rec.seed}): won by {win}; points "
                      + " ".join(str(p) for p in rec.points)
                      + (f"; {len(rec.faults)} fault(s)" if rec.faults else ""))


def _match_standings(echo: Callable[[str], None], session: Session, table: Sequence[Any],
                     record_file: str | None, record_dir: str | None) -> None:
    games, config = session.games, session.config
    echo("")
    scoring = ("match standings (match_scoring: fewest total penalty points wins)"
               if config.has("match_scoring") else "match standings (by mean place)")
    echo(f"{scoring}, {games} games"
         + (", the seats rotating:" if session.rotate else ", the seats fixed:"))
    echo(tabulate([(s.place, s.bot, s.seat, s.wins, f"{s.mean_place:.2f}", s.total_points)
                   for s in table],
                  headers=["place", "bot", "first seat" if session.rotate else "seat", "wins",
                           "mean place", "total points"]))
    if record_dir:
        echo(f"records: {record_dir}/")
    elif record_file:
        echo(f"records: {session.record_path(0)} ... {session.record_path(games - 1)}")


def _sandbox(config: SandboxConfig, specs: Sequence[BotSpec], *hidden: str | None) -> Sandbox:
    """The sandbox of ``play``'s external bots (one warning line where ``auto`` runs
    without), hiding what the referee writes (records, logs, transcripts, keys)."""
    try:
        sandbox = resolve(config)
    except SandboxError as e:
        raise CliError(str(e)) from None
    if any(s.external for s in specs):
        for w in sandbox.warnings:
            click.echo(f"referee: {w}", err=True)
    return sandbox.hide(*hidden)


def _close(players: Sequence[Any]) -> None:
    for p in players:
        close = getattr(p, "close", None) or getattr(getattr(p, "player", None), "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # closing must not hide the outcome
                close()


def _header(session: Session, i: int, labels: Sequence[str], *, whole_match: bool) -> str:
    cfg = session.config
    deck = f"deck {cfg.deck}" + (f", {cfg.colours} colours" if cfg.colours else "")
    if session.deck is not None:
        deck = f"deck from file ({len(session.deck)} cards)"
    seed = f"seed {session.game_seed(i)}"
    if whole_match and session.games > 1:
        seed = f"seeds {session.seed} to {session.game_seed(session.games - 1)}"
    parts = [seed, deck,
             "variants " + (", ".join(sorted(cfg.variants)) or "none")]
    if session.first_player is not None:
        parts.append(f"first player {labels[session.first_player]}")
    if whole_match and session.games > 1:
        parts.append("the seats rotate from game to game" if session.rotate
                     else "the seats fixed")
    if session.games == 1:
        title = "game"
    elif whole_match:
        title = f"match of {session.games} games"
    else:
        title = f"game {i + 1}/{session.games}"
    return f"{title}: " + ", ".join(labels) + "\n  " + "; ".join(parts)


def _result_lines(rec: GameRecord, labels: Sequence[str]) -> list[str]:
    res = rec.ended
    n = len(labels)
    order = sorted(range(n), key=lambda s: (rec.places[s], s))
    how = HOW_WORDS.get(res.how, res.how)
    lines = ["", f"result: {how}, after {res.turns} turns "
                 f"(seed {rec.seed}, first player {labels[rec.first_player]})"]
    rows = []
    for s in order:
        faults = sum(1 for f in rec.faults if f.seat == s)
        row: tuple[Any, ...] = (rec.places[s], labels[s], rec.points[s], faults)
        if rec.forfeits:
            row += ("forfeit" if s in rec.forfeits else "",)
        rows.append(row)
    headers = ["place", "bot", "penalty points", "faults"] + (["forfeit"] if rec.forfeits else [])
    lines += tabulate(rows, headers=headers).splitlines()
    if rec.faults:
        lines.append("faults:")
        lines += [f"  {printable(str(f))}" for f in rec.faults]
    else:
        lines.append("faults: none")
    return lines
