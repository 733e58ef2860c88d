#!/usr/bin/env python3
"""Writes a network that reads the "rich" encoding as one that reads
"rich_history" (docs/rl.md): the rich encoding's values come first in
both, so the first layer (and a belief head's own layer) gets zero
weights for the inputs that rich_history adds and every output is the
same; a `[train]` spec can then
start from it (`train.start`) and learn what the plays show. The rest of
the file (the heads, a belief head and its prior, the provenance) is kept;
the provenance says it was widened.

    python3 scripts/widen-encoding.py models/train-team-ismcts.safetensors models/train-team-ismcts-history.safetensors
"""
import argparse
import hashlib
import json
import sys

import numpy as np
from safetensors.numpy import save_file

import muggins
from muggins.net import META_KEY, load_file


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a muggins model file reading the \"rich\" encoding")
    ap.add_argument("out", help="the file to write")
    args = ap.parse_args()
    try:
        meta, tensors = load_file(args.model)
    except ValueError as e:
        sys.exit(str(e))
    if meta.get("encoding") != "rich":
        sys.exit(f"{args.model}: it reads the {meta.get('encoding')!r} encoding, not \"rich\"")
    state = muggins.State(meta["game"])
    rich, wide = len(state.encode(0, "rich")), len(state.encode(0, "rich_history"))
    w0 = tensors["w0"]
    if w0.shape[0] != rich or meta["inputs"] != rich:
        sys.exit(f"{args.model}: {w0.shape[0]} inputs, and {meta['game']}'s rich encoding has {rich}")
    for name in ("w0", "w_bt"):  # the layers that read the observation
        if name in tensors:
            w = tensors[name]
            tensors[name] = np.concatenate([w, np.zeros((wide - rich, w.shape[1]), np.float32)])
    meta["encoding"], meta["inputs"] = "rich_history", wide
    sha = hashlib.sha256(open(args.model, "rb").read()).hexdigest()
    meta["provenance"]["made_by"] += f" (widened to rich_history by scripts/widen-encoding.py from {sha[:12]})"
    save_file(tensors, args.out, metadata={META_KEY: json.dumps(meta)})
    print(f"{args.out}: {args.model} reading rich_history ({rich} -> {wide} inputs, the new ones weighed 0)")


if __name__ == "__main__":
    main()
