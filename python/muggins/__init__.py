"""muggins from Python (docs/python.md): OpenSpiel's block and team as game
states with its action ids, and random playouts in batch.

Work in progress (issue 26): docs/python.md lists what is still to come.
"""
import numpy as np

from ._muggins import OpenState
from ._muggins import playouts as playouts_list
from ._muggins import playouts_bytes as _playouts_bytes

__all__ = ["OpenState", "playouts", "playouts_list"]


def playouts(game, n, seed):
    """Seat 0's return in each of `n` random hands of `game` ("block" or
    "team"): uniform deals, uniform legal plays, one stream seeded with
    `seed` (the same seed, the same hands). A numpy int32 array, computed
    with the GIL released."""
    return np.frombuffer(_playouts_bytes(game, n, seed), dtype="<i4")
