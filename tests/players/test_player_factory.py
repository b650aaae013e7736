"""One BotSpec and one make_player for ``referee play``, matches and tournaments: a
bot described on the command line and in a tournament file is the same spec, and
becomes its player the same way; in-process bots draw from their seat, or (duplicate
deals) from the deal's seat, or from their own stream, wherever they sit."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from referee.game import GameConfig
from referee.game.seeds import derive_seed
from referee.play.runner import InProcessPlayer
from referee.players.botspec import BotSpec, BotSpecError, parse_spec
from referee.players.external import ExternalPlayer
from referee.players.factory import make_player
from referee.players.human import HumanPlayer
from referee.tournament.config import parse_config

RECORDER = '''
SEEDS = []

class Recorder:
    name = "recorder"

    def __init__(self, seed):
        self.seed = seed

    def new_game(self, seed):
        SEEDS.append(seed)

    def decide(self, observation, legal):
        return legal[0]
'''


def test_a_tournament_bot_and_a_command_line_bot_are_one_spec(tmp_path: Path) -> None:
    cfg = parse_config({"bots": [{"name": "z", "command": "zmq:python3 bot.py --level 2"},
                                 {"name": "h", "builtin": "heuristic"}]},
                       base_dir=str(tmp_path))
    z = parse_spec("z=zmq:python3 bot.py --level 2", check=False)
    assert type(cfg.bot("z")) is BotSpec and cfg.bot("z") == z  # text and NAME= aside
    assert (z.kind, z.transport, z.command, z.external) == (
        "zmq", "zmq", ("python3", "bot.py", "--level", "2"), True)
    assert cfg.bot("h") == parse_spec("h=heuristic")
    assert cfg.bot("z").to_dict()["transport"] == "zmq"


@pytest.mark.parametrize("fields", [{}, {"builtin": "random", "human": True},
                                    {"command": ("x",), "remote": "x"}])
def test_a_spec_is_exactly_one_kind_of_bot(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="exactly one of builtin, python, command, remote"):
        BotSpec("b", **fields)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="transport must be one of stdio, zmq"):
        BotSpec("b", command=("x",), transport="tcp")  # type: ignore[arg-type]


def _seeds(tmp_path: Path, *, streams: bool, stream: str | None = None) -> list[int]:
    """The seeds an in-process bot is given for one game's seed in seats 0 and 1."""
    tmp_path.mkdir()
    (tmp_path / "recorder.py").write_text(RECORDER)
    spec = BotSpec("rec", python="recorder.py:Recorder", stream=stream)
    player = make_player(spec, base_dir=str(tmp_path), streams=streams, seed=5)
    assert isinstance(player, InProcessPlayer) and player.name == "rec"
    assert player.bot.seed == 5  # made with make_player's seed
    for seat in (0, 1):
        player.start_game("g1", seat, GameConfig(), 42)
    seeds: list[int] = sys.modules[type(player.bot).__module__].SEEDS
    return seeds


def test_in_process_bots_draw_from_their_seat_or_from_their_stream(tmp_path: Path) -> None:
    assert _seeds(tmp_path / "a", streams=False) == [42 * 7919, 42 * 7919 + 1]
    # duplicate deals: the deal's and the seat's numbers, whoever sits there
    by_seat = [derive_seed(42, "bot", "seat", 0), derive_seed(42, "bot", "seat", 1)]
    assert _seeds(tmp_path / "b", streams=True) == by_seat
    paired = derive_seed(42, "bot", "paired")
    assert _seeds(tmp_path / "c", streams=True, stream="paired") == [paired, paired]


def test_every_kind_becomes_its_player(tmp_path: Path) -> None:
    builtin = make_player(parse_spec("alice=random"), seed=3)
    assert isinstance(builtin, InProcessPlayer) and builtin.name == "alice"
    human = make_player(parse_spec("human"), human_io=(io.StringIO(), io.StringIO()))
    assert isinstance(human, HumanPlayer) and human.name == "human"
    external = make_player(parse_spec("python3 bot.py", check=False))
    assert isinstance(external, ExternalPlayer) and external.name == "bot"
    with pytest.raises(BotSpecError, match="a remote bot needs a listening endpoint"):
        make_player(parse_spec("remote:alice"))
