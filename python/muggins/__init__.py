"""muggins from Python: the full game's states and random playouts.

Work in progress (issue 26): OpenSpiel's block and team states with its
action ids, and `playouts`.
"""
from ._muggins import OpenState, playouts

__all__ = ["OpenState", "playouts"]
