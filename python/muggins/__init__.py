"""muggins from Python (docs/python.md).

- `State(game, **knobs)`: a game state of any preset ("all-fives", "block",
  "team", "thesis") with OpenSpiel's method names; block and team are
  OpenSpiel's games with its action ids and observations.
- `Bot(engine, **settings)`: muggins' engines and fixed strategies, deciding
  from the acting player's information only; `ENGINES` and `STRATEGIES`
  name them.
- `playouts(game, n, seed)`: random block or team hands in batch.
- `VecEnv(game, num_envs, ...)`: many games stepped together in Rust, a
  `gymnasium.vector.VectorEnv` (docs/rl.md); `muggins.pettingzoo` and
  `muggins.gym` hold the PettingZoo and Gymnasium environments.
- `muggins.net`: networks as model files (`Net`, `save`); a model file
  plays as `Bot("net", model=PATH)`.
- `import muggins.openspiel` registers muggins_all_fives, muggins_block and
  muggins_team with OpenSpiel.
"""
import numpy as np

from ._muggins import ENGINES, STRATEGIES, Bot, State
from ._muggins import playouts as playouts_list
from ._muggins import playouts_bytes as _playouts_bytes

__all__ = ["ENGINES", "STRATEGIES", "Bot", "OpenState", "State", "VecEnv", "playouts", "playouts_arrow", "playouts_list"]


def __getattr__(name):
    # VecEnv imports gymnasium: only when asked for.
    if name == "VecEnv":
        from .vector import VecEnv

        return VecEnv
    raise AttributeError(f"module 'muggins' has no attribute {name!r}")


def OpenState(game):
    """OpenSpiel's block or team game as a state: `State(game)`."""
    return State(game)


def playouts(game, n, seed):
    """Seat 0's return in each of `n` random hands of `game` ("block" or
    "team"): uniform deals, uniform legal plays, one stream seeded with
    `seed` (the same seed, the same hands). A numpy int32 array, computed
    with the GIL released."""
    return np.frombuffer(_playouts_bytes(game, n, seed), dtype="<i4")


def playouts_arrow(game, n, seed):
    """`playouts` as a pyarrow Int32Array (zero-copy from the same buffer);
    needs pyarrow."""
    import pyarrow as pa

    data = _playouts_bytes(game, n, seed)
    return pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(data)])


try:
    from .gym import register as _register_gymnasium
except ImportError:  # gymnasium is a dependency; a broken install still imports muggins
    pass
else:
    _register_gymnasium()
