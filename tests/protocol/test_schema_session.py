"""Every message of a recorded real session checked against ``protocol/schema/`` as a
bot author would check them: with ``jsonschema`` (draft 2020-12), and, when Node.js is
there, with ajv in strict mode (installed with npm into a temporary directory).

The session: the installed ``referee play`` runs a logging bot (tests/bots/recorder.py,
a real subprocess over stdio) in games across the variants, so that every kind of
message and event a bot can receive appears; the bot's own messages are checked too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from referee.protocol.game_schema import EVENT_TYPES
from tests.procs import scaled

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "protocol" / "schema"
RECORDER = ROOT / "tests" / "bots" / "recorder.py"

# (players, options): chosen so that between them every event type occurs (a deck
# of one colour makes four_of_a_colour's swaps come up).
GAMES = [
    (2, ["--seed", "1"]),
    (3, ["--seed", "2", "-V", "ones_reverse,swap_piles"]),
    (4, ["--seed", "3", "-V", "may_decline,choose_for_others,play_out"]),
    (2, ["--seed", "4", "-V", "four_of_a_colour,ones_reverse", "--deck", "alternative",
         "--colours", "1"]),
    (5, ["--seed", "5", "-V", "swap_piles,draw_once_per_clear,match_scoring"]),
]


def _referee() -> str:
    found = shutil.which("referee", path=str(Path(sys.executable).parent))
    assert found, "the referee command is not installed next to this Python (make test)"
    return found


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, object]]]:
    """(direction, message) for every line the recorder read ('in') and wrote ('out')."""
    log = tmp_path_factory.mktemp("session") / "session.jsonl"
    bot = f"{sys.executable} {RECORDER} {log}"
    for players, options in GAMES:
        others = ["heuristic", "random", "lowest", "heuristic", "random"][:players - 1]
        # Unsandboxed: the recorder writes its log outside its folder.
        args = [_referee(), "play", bot, *others, *options, "--games", "2", "--quiet",
                "--sandbox", "off"]
        done = subprocess.run(args, capture_output=True, text=True, timeout=scaled(120))
        assert done.returncode == 0, done.stderr
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        direction, _, text = line.partition(" ")
        out.append((direction, json.loads(text)))
    return out


def _schemas() -> dict[str, dict[str, object]]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in SCHEMA_DIR.glob("*.json")}


def test_the_recording_holds_every_kind_of_message_and_event(
        recorded: list[tuple[str, dict[str, object]]]) -> None:
    types = {(d, m["type"]) for d, m in recorded}
    assert types == {("out", "hello"), ("out", "decision"), ("in", "welcome"),
                     ("in", "new_game"), ("in", "request"), ("in", "rejected"),
                     ("in", "game_over"), ("in", "bye")}
    events = {e["type"] for _, m in recorded for e in m.get("events", [])}  # type: ignore[attr-defined]
    assert events == set(EVENT_TYPES)


def test_every_recorded_message_is_valid_with_jsonschema(
        recorded: list[tuple[str, dict[str, object]]]) -> None:
    validators = {}
    for name, schema in _schemas().items():
        Draft202012Validator.check_schema(schema)
        validators[name] = Draft202012Validator(schema)
    problems = []
    for direction, msg in recorded:
        for e in validators[str(msg["type"])].iter_errors(msg):
            problems.append(f"{direction} {msg['type']} {e.json_path}: {e.message}")
    assert problems == []


def test_the_schemas_catch_a_wrong_observation_and_event(
        recorded: list[tuple[str, dict[str, object]]]) -> None:
    # The recording's first request, spoilt in its observation and its events: the
    # schemas look inside them (not just "an object").
    request = Draft202012Validator(_schemas()["request"])
    first = next(m for _, m in recorded if m["type"] == "request")
    obs = dict(first["observation"])  # type: ignore[call-overload]
    obs["pile_run"] = 3
    assert [e.json_path for e in request.iter_errors({**first, "observation": obs})] == [
        "$.observation.pile_run"]
    bad_event = {"type": "deal", "seat": 0, "cards": ["1g"]}
    assert list(request.iter_errors({**first, "events": [bad_event]}))


AJV_CHECK = r"""
const Ajv2020 = require("ajv/dist/2020").default;
const fs = require("fs"), path = require("path");
const [dir, log] = process.argv.slice(2);
const ajv = new Ajv2020({strict: true, allErrors: true});
const validate = {};
for (const f of fs.readdirSync(dir))
  validate[f.replace(/\.json$/, "")] = ajv.compile(JSON.parse(fs.readFileSync(path.join(dir, f))));
let bad = 0, n = 0;
for (const line of fs.readFileSync(log, "utf8").split("\n")) {
  if (!line) continue;
  const msg = JSON.parse(line.slice(line.indexOf(" ") + 1));
  n++;
  if (!validate[msg.type](msg)) { bad++; console.log(msg.type, JSON.stringify(validate[msg.type].errors)); }
}
console.log(`${n} messages, ${bad} invalid`);
process.exit(bad ? 1 : 0);
"""


def test_every_recorded_message_is_valid_with_ajv_in_strict_mode(
        recorded: list[tuple[str, dict[str, object]]], tmp_path: Path) -> None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Node.js and npm are needed for the ajv check (apt-get install nodejs npm)")
        pytest.skip("Node.js/npm not installed")
    subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent", "ajv@8"],
                   cwd=tmp_path, check=True, capture_output=True, timeout=scaled(300))
    log = tmp_path / "session.jsonl"
    log.write_text("".join(f"{d} {json.dumps(m)}\n" for d, m in recorded), encoding="utf-8")
    (tmp_path / "check.js").write_text(AJV_CHECK, encoding="utf-8")
    done = subprocess.run([node, "check.js", str(SCHEMA_DIR), str(log)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=scaled(120))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(recorded)} messages, 0 invalid" in done.stdout
