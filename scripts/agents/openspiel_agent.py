#!/usr/bin/env python3
"""OpenSpiel's Python bots as a muggins agent (docs/agents.md, protocol 2).

    python3 openspiel_agent.py --bot ismcts|mcts|random [--simulations N]

Plays block and team, and All Fives when the muggins package is installed
(`pip install ./python`: OpenSpiel's bots on its `muggins_all_fives`, the
state rebuilt by `muggins.State.from_view`, ISMCTS's worlds from its exact
`resample_from_infostate`). At each block or team decision the agent rebuilds an OpenSpiel
state from what the protocol tells its seat (its tiles, every play, the
hand sizes): the other seats' tiles are drawn uniformly among the deals
that replay the public history exactly (a seat skipped while holding a
playable tile would have played it), on OpenSpiel's own
`python_block_dominoes` / `python_team_dominoes`. ISMCTS samples its worlds
with that same sampler (`ISMCTSBot.set_resampler`); MCTS searches one
sampled world per decision (MCTS needs a full state); random plays a
uniform legal action. The sampler rejects against the pips each seat
showed it lacks and, when 20,000 tries find nothing, draws among every
such placement enumerated. Needs `pip install open_spiel`.

With the muggins package installed, block and team are played on its
drop-in `muggins_block` / `muggins_team` (the same ids, strings and
tensors, checked move for move against OpenSpiel's): a decision's state is
still rebuilt by rejection once, but ISMCTS's worlds then come from the
game's exact `resample_from_infostate` (the constraints belief) instead of
a rejection sample per simulation, which late in a team hand took seconds.
"""
import argparse
import json
import random
import sys

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts
from open_spiel.python.games import block_dominoes, team_dominoes  # noqa: F401 (registers)

GAMES = {"block": "python_block_dominoes", "team": "python_team_dominoes"}
try:
    import muggins
    import muggins.openspiel  # noqa: F401 (registers muggins_all_fives, muggins_block, muggins_team)

    GAMES = {"block": "muggins_block", "team": "muggins_team"}
except ImportError:
    muggins = None


class FivesWorld:
    """All Fives on muggins_all_fives: one hand at a time (the protocol's
    history is the hand's), rebuilt from the seat's view."""

    def __init__(self, rules):
        self.knobs = {k: rules[k] for k in ("set", "seats", "hand", "teams", "keep", "round", "blocked", "lead")}
        params = ",".join(f"{k}={str(v).lower()}" for k, v in self.knobs.items())
        self.game = pyspiel.load_game(f"muggins_all_fives({params})")
        self.draw = 4 * (rules["set"] + 1) * (rules["set"] + 2) // 2

    def sample(self, seat, tiles, history, rng, hand=1):
        seats = self.knobs["seats"]
        turns = sum(1 for a in history if a != self.draw)
        leader = (seat - turns) % seats
        # A later hand under lead = "winner" was led by the previous hand's
        # winner (or, after a blocked hand, by the highest double).
        tries = [leader, None] if hand > 1 and self.knobs["lead"] == "winner" else [None]
        for winner in tries:
            try:
                core = muggins.State.from_view("all-fives", seat, tiles, history, winner=winner,
                                               seed=rng.getrandbits(53), **self.knobs)
                break
            except ValueError:
                if winner is None:
                    raise
        state = muggins.openspiel.MugginsState(self.game, core.restart())
        for a in core.history():
            state.apply_action(a)
        return state
TILES = 28


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class World:
    """The deals consistent with one seat's view, and states built from them."""

    def __init__(self, game, kind):
        self.game, self.kind = game, kind
        self.players = game.num_players()
        self.per_seat = game.num_distinct_actions() // self.players
        # Which tile each action id plays (from a probe state's strings).
        self.tile_of, self.pips_of, self.covered = {}, {}, {}
        probe = game.new_initial_state()
        for a in range(game.num_distinct_actions()):
            text = probe.action_to_string(0, a)
            # "p0 tile:(2.0, 5.0) pip:5.0"
            pips = text.split("tile:(")[1].split(")")[0].split(", ")
            x, y = int(float(pips[0])), int(float(pips[1]))
            self.tile_of[a] = self._index(x, y)
            self.pips_of[self.tile_of[a]] = (x, y)
            covered = text.split("pip:")[1]
            self.covered[a] = None if covered == "None" else int(float(covered))

    @staticmethod
    def _index(a, b):
        return sum(7 - i for i in range(a)) + (b - a)

    def deal_order(self):
        """The seat each chance action deals to, in order."""
        if self.kind == "team":
            return [k % 4 for k in range(TILES)]
        return [k // 7 for k in range(14)]

    def voids(self, history, seat):
        """The pips each seat showed it lacks: a seat skipped between two
        plays, or between the last play and `seat`'s decision now, held no
        tile matching either open end then (there are no draws)."""
        void = [set() for _ in range(self.players)]
        ends, last = None, None

        def skipped(until):
            q = (last + 1) % self.players
            while q != until:
                void[q].update(ends)
                q = (q + 1) % self.players

        for a in history:
            mover = a // self.per_seat
            if last is not None:
                skipped(mover)
            x, y = self.pips_of[self.tile_of[a]]
            if ends is None:
                ends = [x, y]
            else:
                covered = self.covered[a]
                ends[ends.index(covered)] = y if x == covered else x
            last = mover
        if last is not None:
            skipped(seat)
        return void

    def sample(self, seat, tiles, history, rng, tries=20000):
        """A state after `history` where `seat` holds `tiles`; the others'
        tiles uniform among the deals that replay the history: each other
        seat's unseen tiles avoid the pips it showed it lacks. Drawn by
        rejection, then, if that finds none in `tries`, uniformly from
        every such deal (few by then: the constraints are tight)."""
        played = {s: [] for s in range(self.players)}
        for a in history:
            played[a // self.per_seat].append(self.tile_of[a])
        own = sorted(set(tiles) | set(played[seat]))
        order = self.deal_order()
        unseen = [t for t in range(TILES) if t not in own and all(t not in p for p in played.values())]
        void = self.voids(history, seat)
        others = [s for s in range(self.players) if s != seat]
        need = {s: order.count(s) - len(played[s]) for s in others}
        fits = {s: {t for t in unseen if not (set(self.pips_of[t]) & void[s])} for s in others}
        hidden = None
        for _ in range(tries):
            rng.shuffle(unseen)
            hands, rest = {}, list(unseen)
            for s in others:
                hands[s], rest = rest[:need[s]], rest[need[s]:]
            if all(t in fits[s] for s in others for t in hands[s]):
                hidden = hands
                break
        if hidden is None:
            every = list(self._placements(sorted(unseen), others, need, fits))
            if not every:
                raise RuntimeError("no deal replays the history")
            hidden = rng.choice(every)
        hands = {s: played[s] + list(hidden[s]) for s in others}
        hands[seat] = own
        state = self.game.new_initial_state()
        left = {s: sorted(h) for s, h in hands.items()}
        for s in order:
            state.apply_action(left[s].pop(0))
        for a in history:
            if a not in state.legal_actions():
                raise RuntimeError(f"the sampled deal does not replay action {a}")
            state.apply_action(a)
        return state

    @staticmethod
    def _placements(unseen, others, need, fits):
        """Every placement of `unseen` tiles: `need[s]` of them to each seat
        of `others`, each a tile it `fits`, the rest left out (block's
        undealt tiles); as {seat: tiles}."""
        spare = len(unseen) - sum(need.values())

        # Each tile goes to a seat or is left out, so the seats' needs are
        # met exactly when the tiles run out.
        def place(i, hands, spare):
            if i == len(unseen):
                yield {s: tuple(h) for s, h in hands.items()}
                return
            t = unseen[i]
            for s in others:
                if len(hands[s]) < need[s] and t in fits[s]:
                    hands[s].append(t)
                    yield from place(i + 1, hands, spare)
                    hands[s].pop()
            if spare > 0:
                yield from place(i + 1, hands, spare - 1)

        yield from place(0, {s: [] for s in others}, spare)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bot", choices=["ismcts", "mcts", "random"], default="ismcts")
    p.add_argument("--simulations", type=int, default=1000)
    args = p.parse_args()
    rng = random.Random(0)
    world = bot = None
    view = None
    for line in sys.stdin:
        m = json.loads(line)
        kind = m.get("type")
        if kind == "hello":
            games = list(GAMES) + (["all-fives"] if muggins else [])
            send({"type": "hello", "protocol": 2, "name": f"openspiel-{args.bot}", "games": games})
        elif kind == "game":
            rng = random.Random(m["seed"])
            if m["game"] == "all-fives":
                world = FivesWorld(m["rules"])
                game = world.game
            else:
                game = pyspiel.load_game(GAMES[m["game"]])
                world = World(game, m["game"])
            np_rng = np.random.RandomState(m["seed"] % 2**32)
            evaluator = mcts.RandomRolloutEvaluator(1, np_rng)
            if args.bot == "ismcts":
                bot = ismcts.ISMCTSBot(game, evaluator, 2.0, args.simulations, random_state=np_rng)
                if muggins is None:  # the muggins games resample exactly themselves
                    bot.set_resampler(
                        lambda state, player: world.sample(view["seat"], view["tiles"], view["history"], rng))
            elif args.bot == "mcts":
                bot = mcts.MCTSBot(game, 2.0, args.simulations, evaluator, random_state=np_rng)
        elif kind == "decide":
            view = m
            if args.bot == "random":
                action = rng.choice(m["legal"])
            else:
                try:
                    if isinstance(world, FivesWorld):
                        state = world.sample(m["seat"], m["tiles"], m["history"], rng, m["hand"])
                    else:
                        state = world.sample(m["seat"], m["tiles"], m["history"], rng)
                    action = bot.step(state)
                except RuntimeError as e:
                    # The rejection sampler found no deal that replays the
                    # history (rare, late in a team hand): a uniform legal
                    # play rather than a forfeit.
                    print(f"no world sampled ({e}): a random legal play", file=sys.stderr, flush=True)
                    action = rng.choice(m["legal"])
                if args.bot == "ismcts":
                    bot.reset()
            send({"type": "action", "id": m["id"], "action": int(action)})
        elif kind == "quit":
            return


if __name__ == "__main__":
    main()
