"""``referee play`` through click's CliRunner: games, matches, records, transcripts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.cli_helpers import invoke, write_deal

pytestmark = pytest.mark.slow


def test_known_deal_gives_the_predicted_game(tmp_path: Path) -> None:
    deal = write_deal(tmp_path)
    r = invoke("play", "heuristic", "heuristic", "--deck-file", str(deal), "--first-player", "0")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "heuristic [0] plays 1g 1r 1b from the hand" in out
    assert "heuristic-2 [1] turns 3DOWN slot 1: 6g, which cannot be played" in out
    assert "after 9 turns" in out
    lines = out.splitlines()
    table = lines[lines.index(next(x for x in lines if x.startswith("  place"))):]
    assert "heuristic [0]" in table[2] and table[2].split()[-2:] == ["0", "0"]
    assert "heuristic-2 [1]" in table[3] and table[3].split()[-2:] == ["30", "0"]

    r = invoke("play", "heuristic", "heuristic", "--deck-file", str(deal), "--first-player", "0",
               "--json")
    res = json.loads(r.stdout)
    game = res["games"][0]
    assert (game["how"], game["places"], game["points"], game["turns"]) == (
        "winner", [1, 2], [0, 30], 9)
    assert game["faults"] == [] and res["bots"] == ["heuristic", "heuristic-2"]


def test_quiet_prints_only_the_result() -> None:
    r = invoke("play", "heuristic", "random", "--seed", "5", "--quiet")
    assert r.exit_code == 0
    assert "-- turn 1" not in r.stdout
    assert "result:" in r.stdout and "penalty points" in r.stdout


def test_variants_colours_and_a_six_player_game() -> None:
    r = invoke("play", *["random"] * 6, "--seed", "2", "-V", "play_out,ones-reverse",
               "-V", "four_of_a_colour", "--json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["config"]["variants"] == ["four_of_a_colour", "ones_reverse", "play_out"]
    assert sorted(res["games"][0]["places"]) == [1, 2, 3, 4, 5, 6]
    r = invoke("play", "lowest", "heuristic", "--colours", "2", "--deck", "alternative",
               "--json", "--seed", "4")
    assert json.loads(r.stdout)["config"]["colours"] == 2


def test_match_with_match_scoring_standings(tmp_path: Path) -> None:
    r = invoke("play", "heuristic", "random", "lowest", "--games", "4", "--seed", "10",
               "-V", "match_scoring", "--json", "--record-dir", str(tmp_path / "recs"))
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert [g["seed"] for g in res["games"]] == [10, 11, 12, 13]
    # The seats rotate: each game's "bots" says who sat where.
    assert [g["bots"] for g in res["games"]][:2] == [["heuristic", "random", "lowest"],
                                                    ["random", "lowest", "heuristic"]]
    totals = {b: sum(g["points"][g["bots"].index(b)] for g in res["games"])
              for b in res["bots"]}
    for s in res["standings"]:
        assert s["total_points"] == totals[s["bot"]]
        assert s["place"] == 1 + sum(1 for t in totals.values() if t < s["total_points"])
    assert len(list((tmp_path / "recs").glob("*.jsonl"))) == 4

    r = invoke("play", "heuristic", "random", "--games", "3", "--seed", "1", "-V",
               "match_scoring")
    assert "match standings (match_scoring: fewest total penalty points wins), 3 games" in r.stdout
    assert r.stdout.count("game ") >= 3


def test_replay_says_a_record_is_truncated(tmp_path: Path) -> None:
    rec = tmp_path / "game.jsonl"
    assert invoke("play", "heuristic", "random", "--seed", "8", "--quiet",
                  "--record", str(rec)).exit_code == 0
    data = rec.read_bytes()
    lines = data.splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:40]) + lines[40][:15])  # in the middle of line 41
    r = invoke("replay", str(cut), "--check")
    assert r.exit_code != 0
    assert r.stderr.strip() == (
        f"Error: {cut} is truncated: it ends in the middle of line 41 (was its writing "
        "interrupted, or the disk full?); a tournament plays such a game again when resumed")
    cut.write_bytes(b"".join(lines[:40]))  # at the end of a line: no result line
    r = invoke("replay", str(cut))
    assert r.exit_code != 0
    assert f"{cut} is truncated: it ends at line 40 without the game's result line" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_record_replay_and_a_tampered_record(tmp_path: Path) -> None:
    rec = tmp_path / "game.jsonl"
    r = invoke("play", "heuristic", "random", "--seed", "8", "--quiet", "--record", str(rec))
    assert r.exit_code == 0 and f"record: {rec}" in r.stdout

    r = invoke("replay", str(rec))
    assert r.exit_code == 0, r.output
    assert "view: omniscient" in r.stdout and "3DOWN:" in r.stdout
    assert "verified:" in r.stdout and "re-runs identically" in r.stdout

    # Seat 1's view: seat 0's dealt cards and drawn cards are hidden (RULES §6).
    r = invoke("replay", str(rec), "--seat", "1")
    assert r.exit_code == 0
    assert "heuristic [0] is dealt six cards" in r.stdout
    assert "random [1] is dealt " in r.stdout and "3DOWN:" not in r.stdout

    r = invoke("replay", str(rec), "--check")
    assert r.exit_code == 0 and r.stdout.count("\n") == 1

    # Tamper with one event: the record no longer re-runs identically.
    lines = rec.read_text().splitlines()
    i = next(k for k, x in enumerate(lines)
             if json.loads(x).get("event", "").startswith("play 0 hand"))
    row = json.loads(lines[i])
    row["event"] = row["event"].rsplit(" ", 1)[0] + " C+2g"
    lines[i] = json.dumps(row)
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    r = invoke("replay", str(bad))
    assert r.exit_code == 2
    assert "does NOT re-run identically" in r.stderr and "differs" in r.stderr

    # Tamper with a decision: an illegal decision is reported too.
    lines = rec.read_text().splitlines()
    j = next(k for k, x in enumerate(lines)
             if json.loads(x).get("decision", "").startswith("play hand"))
    row = json.loads(lines[j])
    row["decision"] = "down 2"
    lines[j] = json.dumps(row)
    bad.write_text("\n".join(lines) + "\n")
    r = invoke("replay", str(bad), "--check")
    assert r.exit_code == 2 and "illegal" in r.stderr


def test_transcript_of_builtin_bots(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    r = invoke("play", "heuristic", "lowest", "--seed", "3", "--quiet", "--transcript",
               "--transcript-file", str(path))
    assert r.exit_code == 0
    saved = path.read_text()
    assert saved.strip() in r.stdout.replace("\x1b", "")  # same lines, no colour
    # Built-in bots exchange no messages: their lines have their own arrows, and the
    # first line of the transcript says they are not the wire format.
    lines = saved.splitlines()
    assert ".. referee" in lines[0] and "NOT the wire format" in lines[0]
    assert not any(" -> " in x or " <- " in x for x in lines[1:])
    first = next(x for x in lines[1:] if "~>" in x)
    assert "~> heuristic" in first and '"type": "request"' in first
    assert "<~ heuristic" in saved and "ms]" in saved and "referee applies" in saved


def test_transcript_shows_a_misbehaving_bot(tmp_path: Path) -> None:
    bot = tmp_path / "bad_bot.py"
    bot.write_text(
        "import json, sys\n"
        "print(json.dumps({'type': 'hello', 'protocol': [1], 'name': 'bad'}), flush=True)\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'request':\n"
        "        print('thinking hard', file=sys.stderr, flush=True)\n"
        "        print(json.dumps({'type': 'decision', 'id': m['id'],\n"
        "                          'decision': 'play hand C+2'}), flush=True)\n"
        "    elif m['type'] == 'bye':\n"
        "        break\n"
    )
    r = invoke("play", "heuristic", f"me={sys.executable} {bot}", "--seed", "2", "--quiet",
               "--transcript", "--strikes", "1", "--no-colour")
    assert r.exit_code == 0, r.output
    t = r.stdout
    assert '<- me' in t and '"decision": "play hand C+2"' in t
    assert "~> heuristic" in t and "NOT the wire format" in t.splitlines()[0]
    assert "-> me" in t and '"game_id"' in next(x for x in t.splitlines() if "-> me" in x
                                                and '"request"' in x)
    assert "!! me" in t and "stderr: thinking hard" in t
    assert "XX me" in t and "REJECTED illegal" in t and "[forfeit]" in t
    assert "referee plays the substitute" in t
    assert "forfeit" in t.split("result:")[1]


def test_json_keeps_stdout_clean_with_a_transcript() -> None:
    r = invoke("play", "heuristic", "lowest", "--seed", "3", "--json", "--transcript")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["games"][0]["bots"] == ["heuristic", "lowest"]
    assert "~> heuristic" in r.stderr


def test_example_bots_over_stdio_and_zmq() -> None:
    r = invoke("play", "example:python-random", "zmq:example:python-heuristic", "--seed", "6",
               "--json")
    assert r.exit_code == 0, r.output
    game = json.loads(r.stdout)["games"][0]
    assert game["bots"] == ["example-python-random", "example-python-heuristic-zmq"]
    assert game["faults"] == [] and sorted(game["places"]) == [1, 2]


def test_match_records_are_numbered(tmp_path: Path) -> None:
    r = invoke("play", "heuristic", "random", "--games", "2", "--seed", "3",
               "--record", str(tmp_path / "m.jsonl"))
    assert r.exit_code == 0
    assert "game 1/2 (seed 3): won by" in r.stdout
    assert (tmp_path / "m-1.jsonl").exists() and (tmp_path / "m-2.jsonl").exists()
    assert "match standings (by mean place), 2 games" in r.stdout
    step = invoke("replay", str(tmp_path / "m-2.jsonl"), "--step", input="\n\nq\n")
    assert step.exit_code == 0 and "-- turn 2:" in step.stdout and "-- turn 3:" not in step.stdout


def test_a_recorded_deal_written_out_and_played_again(tmp_path: Path) -> None:
    rec, deck = tmp_path / "g.jsonl", tmp_path / "deal.txt"
    bots = ["heuristic", "random", "lowest"]
    first = json.loads(invoke("play", *bots, "--seed", "8", "--json", "--record",
                              str(rec)).stdout)["games"][0]
    r = invoke("replay", str(rec), "--check", "--write-deck", str(deck))
    assert r.exit_code == 0 and f"--first-player {first['first_player']}" in r.stdout
    again = json.loads(invoke("play", *bots, "--seed", "8", "--json", "--deck-file", str(deck),
                              "--first-player", str(first["first_player"])).stdout)["games"][0]
    assert (again["points"], again["turns"]) == (first["points"], first["turns"])


def test_a_bot_that_forfeits_every_game_loses_a_match_scored_in_points(
        tmp_path: Path) -> None:
    # The garbage bot forfeits each game at its first request; the referee then plays
    # its first legal decision, which may well empty its hand first.  Its points must
    # still put it last (one more than the highest of the game), or it could win the
    # match on points it never played for.
    bot = Path(__file__).resolve().parents[1] / "bots" / "garbage.py"
    recs = tmp_path / "recs"
    r = invoke("play", f"stdio:{sys.executable} {bot}", "lowest", "--games", "6", "--seed", "4",
               "-V", "match_scoring", "--faults", "forfeit", "--no-rotate", "--json", "--record-dir", str(recs))
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    for g in res["games"]:
        assert g["forfeits"] == [0] and g["places"] == [2, 1]
        assert g["points"][0] > max(g["game_points"]), g
        assert g["points"][0] > g["points"][1], g
    assert [(s["bot"], s["place"]) for s in res["standings"]] == [("lowest", 1), ("garbage", 2)]
    # A forfeit never pays (RULES §5.4): each game is played out by the referee's
    # substitutes, so that the other seat scores what it would against them.
    assert not any(g["how"] == "forfeits" for g in res["games"])
    for rec in recs.glob("*.jsonl"):  # the records check out, forfeits and all
        assert invoke("replay", str(rec), "--check").exit_code == 0


def test_a_forfeit_is_told_when_it_happens_and_the_game_over_line_counts_it(
        tmp_path: Path) -> None:
    bot = Path(__file__).resolve().parents[1] / "bots" / "garbage.py"
    rec = tmp_path / "g.jsonl"
    r = invoke("play", f"stdio:{sys.executable} {bot}", "lowest", "--seed", "4", "--faults",
               "forfeit", "--record", str(rec))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    fault = next(i for i, x in enumerate(lines) if x.startswith("   FAULT garbage"))
    assert lines[fault + 1] == ("   garbage [0] forfeits the game: it will be placed last; "
                                "the referee plays its first legal decision from now on")
    over = next(x for x in lines if "game over" in x)
    assert "places garbage [0] 2, lowest [1] 1;" in over
    assert over.endswith("(after forfeits: garbage [0] placed last)")
    # The replay tells it the same way.
    shown = invoke("replay", str(rec)).stdout.splitlines()
    assert ("   garbage [0] forfeits the game: it will be placed last; the referee plays its "
            "first legal decision from now on") in shown
    assert over in shown
