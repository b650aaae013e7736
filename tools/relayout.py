"""Issue 11's layout, replayed on a checkout of the old one: move the modules into
their layers' folders (``git mv``) and rewrite the imports, dotted names and paths
that name them; the tests' import style and slow markers likewise.  For merging a
branch written against the old layout (s9-m1's first commit, caaa9df, is the pure
move this replays):

    git checkout -b OTHER-relayout OTHER
    python3 tools/relayout.py --init-from caaa9df --renames
    ruff check --fix -q tests; ruff check --fix --select I -q .
    git add -A && git commit -m "relayout (tools/relayout.py)"
    git merge -s ours caaa9df -m "the layout move, replayed above"
    git merge s9-m1        # what is left: the places both branches changed

(Tried on s9-m3: 14 files in conflict, 23 hunks, against 55 files and 95 hunks
for a plain merge after the relayout.)

Relative imports are recomputed from each file's old place; ``from ..transport.zmq
import X`` is sent to the module that holds X now (``SYMBOLS``).  What it cannot
see: a module bound to a name and used as ``name.attr`` (``from .transport import
zmq as zmq_transport``), and the renames ``RemotePlayer`` -> ``ExternalPlayer``,
``executor.Seat`` -> ``PlayerCache`` (``--renames`` does the first; the second by
hand, the word is too common).  Run it once: a second run would move nothing and
rewrite imports already rewritten.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
from pathlib import Path

#: old module -> new module (and so old file -> new file).
MODULES = {
    "referee.botspec": "referee.players.botspec",
    "referee.checkbot": "referee.checkbot.checker",
    "referee.cli": "referee.cli.main",
    "referee.clikit": "referee.cli.kit",
    "referee.human": "referee.players.human",
    "referee.keys": "referee.transport.zmq.keys",
    "referee.process": "referee.players.process",
    "referee.quoting": "referee.text.quoting",
    "referee.remote": "referee.players.external",
    "referee.replay": "referee.play.replay",
    "referee.runner": "referee.play.runner",
    "referee.sandbox": "referee.players.sandbox",
    "referee.session": "referee.play.series",
    "referee.table": "referee.play.table",
    "referee.transcript": "referee.play.transcript",
    "referee.transport.zmq": "referee.transport.zmq.transport",
    "referee.tournament.cli": "referee.cli.tournament",
    "referee.tournament.match_cli": "referee.cli.match",
    "referee.league.cli": "referee.cli.league",
    "referee.report.cli": "referee.cli.report",
    # new on the other branches of issue 11 (m3), at the top level there
    "referee.player_factory": "referee.players.factory",
    "referee.remote_seats": "referee.players.remote_seats",
    "referee.seeds": "referee.game.seeds",
}

#: Names that left the module they were in when it was split: (old module, name) ->
#: new module.  Names not listed stay in MODULES[old module].
SYMBOLS = {
    "referee.transport.zmq": {
        **dict.fromkeys(["MAX_MESSAGE_BYTES", "decode_frame", "_says_hello", "_unpack_error",
                         "_too_large"], "referee.transport.zmq.codec"),
        **dict.fromkeys(["is_loopback", "ZAP_DOMAIN", "_QUEUE_CAP", "_QUEUE_BYTES", "_Frame",
                         "_Held", "_Router", "_ipc_socket_file", "_decode", "_PROTOCOL_ERRORS",
                         "_errno_text", "_KeyCheck", "bind_loopback", "log", "Refusal",
                         "OnRefusal"],
                        "referee.transport.zmq.router"),
        **dict.fromkeys(["RemoteListener", "wait_for_remote_bot"],
                        "referee.transport.zmq.listener"),
        "trivial_bot": "referee.transport.zmq.trivial_bot",
        **dict.fromkeys(["bot_env", "LaunchedZmqBot", "launch_zmq_bot"],
                        "referee.players.launcher"),
    },
    "referee.keys": dict.fromkeys(["keys", "new_command", "server_command", "show_command",
                                   "env_command"], "referee.cli.keys"),
    "referee.checkbot": {"check_bot": "referee.cli.check_bot",
                         "CHECK_BOT_HELP": "referee.cli.check_bot"},
}

#: test files: old path -> new path (directories end in /).
TESTS = {
    "tests/protocol/conftest.py": "tests/players/conftest.py",
    "tests/protocol/test_bots.py": "tests/players/test_bots.py",
    "tests/protocol/test_process.py": "tests/players/test_process.py",
    "tests/protocol/test_remote_memory.py": "tests/players/test_remote_memory.py",
    "tests/protocol/test_quoting.py": "tests/text/test_quoting.py",
    "tests/protocol/test_stdio.py": "tests/transport/test_stdio.py",
    "tests/zmq/": "tests/transport/zmq/",
    "tests/sandbox/": "tests/players/sandbox/",
    "tests/test_game_stops.py": "tests/play/test_game_stops.py",
    "tests/test_runner_errors.py": "tests/play/test_runner_errors.py",
    "tests/test_smoke.py": "tests/play/test_smoke.py",
    "tests/cli/test_cli_botspec.py": "tests/players/test_botspec.py",
    "tests/cli/test_cli_human.py": "tests/players/test_human.py",
    # new on the other branches of issue 11 (m2, m3)
    "tests/test_player_factory.py": "tests/players/test_player_factory.py",
    "tests/test_runner_results.py": "tests/play/test_runner_results.py",
}

NEW_PACKAGE_FILES = [
    "referee/players/__init__.py", "referee/play/__init__.py", "referee/text/__init__.py",
    "referee/checkbot/__init__.py", "referee/cli/__init__.py", "referee/cli/__main__.py",
    "referee/transport/zmq/__init__.py",
]


TEST_PACKAGES = ["tests", "tests/cli", "tests/checkbot", "tests/example_bots", "tests/game",
                 "tests/play", "tests/players", "tests/report", "tests/stats", "tests/text",
                 "tests/tournament", "tests/transport", "tests/transport/zmq"]


def path_of(module: str) -> Path:
    return Path(*module.split(".")).with_suffix(".py")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def move(old: str, new: str) -> None:
    """git mv, also where the new place is a folder of the old file's name."""
    if not Path(old).exists():
        return
    target = Path(new)
    if Path(old).is_file() and target.parent.with_suffix(".py") == Path(old):
        tmp = Path(old).with_name(Path(old).stem + "_relayout_tmp.py")
        git("mv", old, str(tmp))
        old = str(tmp)
    target.parent.mkdir(parents=True, exist_ok=True)
    git("mv", old, new.rstrip("/"))


def to_new(mod: str) -> str:
    parts = mod.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        if head in MODULES:
            return ".".join([MODULES[head], *parts[i:]])
    return mod


def to_old(mod: str) -> str:
    inverse = {v: k for k, v in MODULES.items()}
    if mod in inverse:
        return inverse[mod]
    return mod


def module_of(path: Path) -> tuple[str, bool]:
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def is_old_module(mod: str) -> bool:
    if mod in MODULES:
        return True
    p = Path(*to_new(mod).split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def relative(pkg: str, target: str) -> tuple[int, str]:
    a, b = pkg.split("."), target.split(".")
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return len(a) - n + 1, ".".join(b[n:])


def render(level: int, mod: str, names: list[str], indent: str) -> str:
    head = f"{indent}from {'.' * level}{mod} import " if level else f"{indent}from {mod} import "
    one = head + ", ".join(names)
    if len(one) <= 100:
        return one
    return head + "(\n" + "".join(f"{indent}    {n},\n" for n in names) + f"{indent})"


def rewrite_imports(path: Path) -> None:
    """Every ``from X import ...`` naming a moved module or a moved name: relative
    ones (in referee/) recomputed from the file's old place, absolute ones mapped."""
    src = path.read_text()
    new_mod, is_pkg = module_of(path)
    old_mod = to_old(new_mod)
    old_pkg = old_mod if (is_pkg and old_mod == new_mod) else old_mod.rsplit(".", 1)[0]
    new_pkg = new_mod if is_pkg else new_mod.rsplit(".", 1)[0]
    lines = src.splitlines(keepends=True)
    edits = []
    for node in ast.walk(ast.parse(src)):
        if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
            continue
        if node.level and path.parts[0] != "referee":
            continue
        if node.level:
            base = old_pkg.split(".")
            if node.level > 1:
                base = base[: -(node.level - 1)]
            base_mod = ".".join(base + ([node.module] if node.module else []))
        elif node.module and node.module.split(".")[0] == "referee":
            base_mod = node.module
        else:
            continue
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            name = alias.name + (f" as {alias.asname}" if alias.asname else "")
            sub = f"{base_mod}.{alias.name}"
            if alias.name in SYMBOLS.get(base_mod, {}):
                groups.setdefault(SYMBOLS[base_mod][alias.name], []).append(name)
            elif alias.name != "*" and is_old_module(sub) and to_new(sub) != sub:
                parent, leaf = to_new(sub).rsplit(".", 1)
                if leaf != alias.name:
                    name = f"{leaf} as {alias.asname or alias.name}"
                groups.setdefault(parent, []).append(name)
            else:
                groups.setdefault(to_new(base_mod), []).append(name)
        indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)  # type: ignore[union-attr]
        out = []
        for target, names in groups.items():
            if node.level:
                level, rest = relative(new_pkg, target)
                out.append(render(level, rest, names, indent))
            else:
                out.append(render(0, target, names, indent))
        text = "\n".join(out)
        old_text = "".join(lines[node.lineno - 1: node.end_lineno]).rstrip("\n")
        first = lines[node.lineno - 1].rstrip("\n")
        if node.lineno == node.end_lineno:
            seg = ast.get_source_segment(src, node) or ""
            text += first[len(indent) + len(seg):]
        elif "#" in first:  # a comment after the opening parenthesis
            comment = "  " + first[first.index("#"):]
            head, sep, rest = text.partition("\n")
            text = head + comment + sep + rest
        if text != old_text:
            edits.append((node.lineno, node.end_lineno, text + "\n"))
    for start, end, text in sorted(edits, reverse=True):
        lines[start - 1: end] = [text]
    if edits:
        path.write_text("".join(lines))


def rewrite_names(path: Path, renames: bool) -> None:
    """Dotted module names and file paths in any text, in one pass."""
    src = path.read_text()
    names = {**MODULES, **{f"{old}.{name}": f"{new}.{name}"
                           for old, moved in SYMBOLS.items() for name, new in moved.items()}}
    keys = sorted(names, key=len, reverse=True)
    dotted = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, keys)) + r")(?![\w])")
    # ``from referee... import`` lines were rewritten by rewrite_imports already.
    skip = path.suffix == ".py"
    out = "".join(line if skip and re.match(r"\s*from referee[\w.]* import", line)
                  else dotted.sub(lambda m: names[m.group(1)], line)
                  for line in src.splitlines(keepends=True))
    paths = {str(path_of(k)): str(path_of(v)) for k, v in MODULES.items()}
    paths.update(TESTS)
    pk = sorted(paths, key=len, reverse=True)
    out = re.sub(r"(?<![\w/.])(" + "|".join(map(re.escape, pk)) + r")",
                 lambda m: paths[m.group(1)], out)
    if renames:
        out = re.sub(r"\bRemotePlayer\b", "ExternalPlayer", out)
    if out != src:
        path.write_text(out)


#: tests: one import style, helpers by their full name (tests/ is a package tree).
TEST_IMPORTS = [
    (r"^from position import", "from tests.game.position import"),
    (r"^from browser import", "from tests.report.browser import"),
    (r"^from conftest import invoke", "from tests.report.conftest import invoke"),
    (r"^from fakebots import", "from tests.tournament.fakebots import"),
    (r"^from cli_helpers import (.*?)(  # noqa: E402)?$", r"from tests.cli.cli_helpers import \1"),
    (r"^from \.schemacheck import", "from tests.protocol.schemacheck import"),
    (r"^from \.leaguehelpers import", "from tests.league.leaguehelpers import"),
    (r"^import test_tournament_chaos as stdio_chaos.*$",
     "from tests.tournament import test_tournament_chaos as stdio_chaos  # the checks are shared"),
    (r'^sys\.path\.insert\(0, str\(Path\(__file__\)\.resolve\(\)\.parents\[1\] / "(cli|tournament)"\)\)\n',
     ""),
]


def rewrite_tests(path: Path) -> None:
    src = path.read_text()
    out = src
    for pattern, repl in TEST_IMPORTS:
        out = re.sub(pattern, repl, out, flags=re.M)
    pkg = ".".join(path.parent.parts)
    out = re.sub(r"^from \.conftest import", f"from {pkg}.conftest import", out, flags=re.M)
    if out != src:
        path.write_text(out)

#: make test-fast: the modules and tests marked slow (as on s9-m1).
SLOW_MODULES = ["tests/players/test_process.py", "tests/players/test_bots.py", "tests/players/test_human.py", "tests/league/test_league_report.py", "tests/league/test_league_dask.py", "tests/league/test_league_growth_real.py", "tests/league/test_league_watch.py", "tests/league/test_league_remote.py", "tests/league/test_league_cli.py", "tests/league/test_league_archives.py", "tests/tournament/test_tournament_verify.py", "tests/tournament/test_match_dask.py", "tests/tournament/test_match.py", "tests/tournament/test_tournament_remote.py", "tests/tournament/test_tournament_chaos.py", "tests/tournament/test_tournament_hard_use.py", "tests/tournament/test_tournament_dask.py", "tests/tournament/test_tournament_friction.py", "tests/tournament/test_tournament_run.py", "tests/report/test_browser_setup.py", "tests/report/test_browser.py", "tests/report/test_report_cli.py", "tests/cli/test_cli_errors.py", "tests/cli/test_cli_installed.py", "tests/cli/test_remote.py", "tests/cli/test_cli_transcript.py", "tests/cli/test_cli_play.py", "tests/cli/test_cli_friction.py", "tests/play/test_game_stops.py", "tests/players/sandbox/test_secrets_and_text.py", "tests/players/sandbox/test_settings.py", "tests/players/sandbox/test_attacks.py", "tests/protocol/test_schema_session.py", "tests/transport/zmq/test_zmq_keys.py", "tests/transport/zmq/test_zmq_launched.py", "tests/transport/zmq/test_zmq_remote.py", "tests/transport/zmq/test_zmq_chaos.py", "tests/example_bots/test_example_bots.py", "tests/example_bots/test_js_zmq_bot.py", "tests/checkbot/test_checkbot_causes.py", "tests/checkbot/test_checkbot.py"]
SLOW_TESTS = {
    "tests/game/test_playouts.py": ["test_random_playouts_keep_the_invariants"],
    "tests/game/test_infosets.py": ["test_hidden_cards_do_not_change_a_seats_view"],
    "tests/game/test_repeated_cards.py": ["test_deals_differing_only_in_hidden_cards_give_identical_hands"],
    "tests/players/test_remote_memory.py": ["test_full_game_every_message_follows_the_schema",
                                            "test_variant_games_for_six_seats_follow_the_schema"],
    "tests/league/test_league_growth.py": ["test_a_grown_league_equals_a_fresh_league_of_its_final_field"],
}


def _with_pytest(t: str) -> str:
    if re.search(r"^import pytest$", t, re.M):
        return t
    m = re.search(r"^(from referee|from tests|import referee)", t, re.M)
    assert m is not None
    return t[:m.start()] + "import pytest\n\n" + t[m.start():]


def mark_slow() -> None:
    for f in SLOW_MODULES:
        p = Path(f)
        if not p.exists() or "pytestmark" in p.read_text():
            continue
        t = _with_pytest(p.read_text())
        last = max(n.end_lineno or n.lineno for n in ast.parse(t).body
                   if isinstance(n, (ast.Import, ast.ImportFrom)))
        lines = t.split("\n")
        lines[last:last] = ["", "pytestmark = pytest.mark.slow"]
        p.write_text("\n".join(lines))
    for f, names in SLOW_TESTS.items():
        p = Path(f)
        if not p.exists():
            continue
        lines = _with_pytest(p.read_text()).split("\n")
        for name in names:
            i = next((k for k, line in enumerate(lines) if line.startswith(f"def {name}(")), None)
            if i is None or lines[i - 1] == "@pytest.mark.slow":
                continue
            k = i
            while k > 0 and (lines[k - 1].startswith("@") or (
                    lines[k - 1].startswith((" ", ")")) and lines[k - 1].strip() != "")):
                k -= 1
            lines.insert(k, "@pytest.mark.slow")
        p.write_text("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--init-from", metavar="REF",
                    help="take the new packages' __init__ files from this commit")
    ap.add_argument("--renames", action="store_true", help="also RemotePlayer -> ExternalPlayer")
    ap.add_argument("--no-move", action="store_true",
                    help="rewrite only (the files are at their new places already)")
    args = ap.parse_args()
    if not args.no_move:
        for old, new in MODULES.items():
            move(str(path_of(old)), str(path_of(new)))
        for old, new in TESTS.items():
            move(old, new)
        for f in NEW_PACKAGE_FILES:
            if not Path(f).exists():
                text = git("show", f"{args.init_from}:{f}") if args.init_from else ""
                Path(f).write_text(text)
                git("add", f)
        for d in TEST_PACKAGES:
            if Path(d).is_dir() and not (Path(d) / "__init__.py").exists():
                (Path(d) / "__init__.py").write_text("")
                git("add", f"{d}/__init__.py")
    # the new packages' files are written in the new layout already
    files = [Path(f) for f in git("ls-files").split() if f not in NEW_PACKAGE_FILES]
    for f in files:
        if f.suffix == ".py" and f.exists():
            rewrite_imports(f)
    for f in files:
        if f.suffix == ".py" and f.parts[0] == "tests" and f.parts[1] != "bots" and f.exists():
            rewrite_tests(f)
    mark_slow()
    for f in files:
        if f.exists() and (f.suffix in (".py", ".md", ".toml", ".txt") or f.name == "Makefile"):
            rewrite_names(f, args.renames)


if __name__ == "__main__":
    main()
