"""Networks as model files (docs/rl.md, "Model files").

A model file is safetensors: the tensors `w0, b0, ..., w_pi, b_pi, w_v,
b_v` (float32; weights `inputs x outputs`, tanh after each hidden layer, a
policy head of one logit per action id and a value head; optionally `w_b,
b_b`, a belief head: `Net.belief`) and, in the
header's metadata under the key "muggins", a JSON description: game,
encoding and its version, widths, and provenance. The `net` crate reads
it, and so does the engine `Bot("net", model=PATH)`.

- `Net(path)`: a model file read and checked; `net.forward(obs)` gives the
  logits and values (muggins' own forward pass, the engines' numbers).
- `save(path, params, game=..., encoding=..., made_by=...)`: writes one from
  numpy arrays (needs the `safetensors` package).
- `from_npz(npz, path, game=..., made_by=...)`: converts the numpy archive
  that earlier `python/examples/ppo_block.py` runs wrote.
"""
import json
import os

import numpy as np

from ._muggins import NetCore

META_KEY = "muggins"
FORMAT_VERSION = 1
ENCODING_VERSION = 1


class Net:
    """A model file, read and checked (a bad file raises ValueError naming
    it and the problem). `meta` is its description, `sha256` the file's
    hash, `inputs` and `actions` its widths."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._core = NetCore(self.path)
        self.meta = json.loads(self._core.meta_json())
        self.sha256 = self._core.sha256
        self.inputs = self.meta["inputs"]
        self.actions = self.meta["actions"]

    def forward(self, obs, threads=1):
        """`obs`: observations, float32 `[N, inputs]` (or one `[inputs]`).
        Returns `(logits [N, actions], values [N])` as float32 (one row:
        `([actions], scalar)`); evaluated in Rust with the GIL released, on
        `threads` threads (the same numbers whatever the count)."""
        x = np.asarray(obs, dtype=np.float32)
        one = x.ndim == 1
        if one:
            x = x[None, :]
        if x.ndim != 2 or x.shape[1] != self.inputs:
            raise ValueError(f"obs: shape {np.shape(obs)}, expected [N, {self.inputs}] (this model's inputs)")
        x = np.require(x, np.float32, ["C", "W"])
        n = x.shape[0]
        logits = np.empty((n, self.actions), np.float32)
        values = np.empty(n, np.float32)
        self._core.forward(x, n, logits, values, int(threads))
        return (logits[0], values[0]) if one else (logits, values)

    def belief(self, obs, prior=None):
        """Where the belief head places each tile for one observation `obs`
        (float32 `[inputs]`): an array `[tiles, holders]` whose rows are
        probabilities (holder `k` is the seat `k + 1` places after the
        observer around the table, the last the boneyard; docs/train.md, "A
        belief head"), or None when the model has no belief head. A head
        that corrects the constraints belief (`meta["belief_prior"]`) needs
        that belief, `prior = state.belief_prior(seat)`: its rows are then
        the prior times the head's exponentiated logits, normalised (a row
        the prior gives nothing, a seen tile, is all 0)."""
        x = np.require(np.asarray(obs, dtype=np.float32), np.float32, ["C"])
        if x.shape != (self.inputs,):
            raise ValueError(f"obs: shape {np.shape(obs)}, expected [{self.inputs}] (this model's inputs)")
        wants = self.meta.get("belief_prior")
        if wants is not None and prior is None:
            raise ValueError(f"prior: this model's belief head corrects the {wants} belief; "
                             "pass prior=state.belief_prior(seat)")
        if wants is None and prior is not None:
            raise ValueError("prior: this model's belief head has no prior (meta has no belief_prior)")
        z = self._core.belief_logits(x)
        if z is None:
            return None
        shape = self.meta["belief"]
        z = np.asarray(z, dtype=np.float64).reshape(shape["tiles"], shape["holders"])
        if prior is not None:
            m = np.asarray(prior, dtype=np.float64)
            if m.shape != z.shape or not np.all(np.isfinite(m)) or np.any(m < 0):
                raise ValueError(f"prior: shape {m.shape} with values at least 0 expected {z.shape} "
                                 "(State.belief_prior of the observing seat)")
            with np.errstate(divide="ignore"):
                z = z + np.log(m)
            seen = ~np.any(m > 0, axis=1)
            z[seen] = 0.0
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p = p / p.sum(axis=1, keepdims=True)
        if prior is not None:
            p[seen] = 0.0
        return p.astype(np.float32)

    def __repr__(self):
        return f"muggins.net.Net({self.path!r}: {self.meta['game']}, {self.meta['encoding']}, hidden {self.meta['hidden']}, sha256 {self.sha256[:12]})"


def save(path, params, *, game, encoding, made_by, spec_id=None, generation=None, belief_holders=None,
         belief_prior=None):
    """Writes the network `params` (numpy arrays `w0, b0, ..., w_pi, b_pi,
    w_v, b_v`, tanh hidden layers; with `belief_holders`, a belief head
    `w_b, b_b` of `tiles x belief_holders` outputs, over a layer of its own
    `w_bt, b_bt` over the observation when given, which corrects the
    constraints belief with `belief_prior="constraints"`) as a model file at
    `path`, described as playing `game` on observations in `encoding`, made
    by `made_by` (the command; an experiment's `spec_id` and `generation`
    when one made it).
    Returns the `Net` read back from it (so a file that would be refused
    is never left unchecked)."""
    from safetensors.numpy import save_file

    hidden = []
    while f"w{len(hidden)}" in params:
        hidden.append(int(np.shape(params[f"w{len(hidden)}"])[1]))
    if not hidden or "w_pi" not in params or "w_v" not in params:
        raise ValueError("params: need w0, b0, ... and the heads w_pi, b_pi, w_v, b_v")
    provenance = {"made_by": str(made_by)}
    if spec_id is not None:
        provenance["spec_id"] = str(spec_id)
    if generation is not None:
        provenance["generation"] = int(generation)
    meta = {
        "format_version": FORMAT_VERSION,
        "game": game,
        "encoding": encoding,
        "encoding_version": ENCODING_VERSION,
        "inputs": int(np.shape(params["w0"])[0]),
        "actions": int(np.shape(params["w_pi"])[1]),
        "hidden": hidden,
        "activation": "tanh",
        "provenance": provenance,
    }
    if ("w_b" in params) != (belief_holders is not None):
        raise ValueError("params: a belief head (w_b, b_b) goes with belief_holders, and belief_holders with one")
    if belief_holders is not None:
        width = int(np.shape(params["w_b"])[1])
        if belief_holders < 1 or width % belief_holders:
            raise ValueError(f"belief_holders = {belief_holders}: w_b's {width} outputs are tiles x holders")
        meta["belief"] = {"tiles": width // belief_holders, "holders": int(belief_holders)}
        if "w_bt" in params:
            meta["belief_hidden"] = int(np.shape(params["w_bt"])[1])
    if belief_prior is not None:
        if belief_prior != "constraints" or belief_holders is None:
            raise ValueError(f"belief_prior = {belief_prior!r}: \"constraints\", for a belief head")
        meta["belief_prior"] = belief_prior
    tensors = {k: np.ascontiguousarray(np.asarray(v, dtype=np.float32)) for k, v in params.items()}
    save_file(tensors, os.fspath(path), metadata={META_KEY: json.dumps(meta)})
    return Net(path)


def load_file(path):
    """A muggins model file's description (a dict) and tensors (numpy
    arrays by name), as written, unchecked (for tools that rewrite a file:
    scripts/without-belief.py, scripts/widen-encoding.py); ValueError for a
    file without a muggins description."""
    from safetensors import safe_open

    with safe_open(os.fspath(path), framework="numpy") as f:
        meta = json.loads((f.metadata() or {}).get(META_KEY, "null") or "null")
        if not isinstance(meta, dict):
            raise ValueError(f"{path}: no {META_KEY!r} metadata: not a muggins model file")
        return meta, {k: f.get_tensor(k) for k in f.keys()}


def from_npz(npz, path, *, game, made_by):
    """Converts a numpy archive of `w0, b0, ..., w_pi, b_pi, w_v, b_v` (and
    its `encoding`) into a model file at `path`; returns its `Net`."""
    with np.load(npz) as f:
        encoding = str(f["encoding"]) if "encoding" in f.files else "info_state"
        params = {k: f[k] for k in f.files if k != "encoding"}
    return save(path, params, game=game, encoding=encoding, made_by=made_by)
