#!/usr/bin/env python3
"""Writes a model file without its belief head: the same tensors and
description less `w_b`, `b_b` (and its own layer `w_bt`, `b_bt`) and
the `belief` entries, so that a guided
search with it draws its worlds from the constraints belief alone. With the
file it came from, it measures what the head adds to the search with every
other weight the same (docs/train.md, "A belief head"):

    python3 scripts/without-belief.py models/train-block-belief.safetensors /tmp/plain.safetensors
"""
import argparse
import json
import sys

from safetensors.numpy import save_file

from muggins.net import META_KEY, load_file


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a muggins model file with a belief head")
    ap.add_argument("out", help="the file to write")
    args = ap.parse_args()
    try:
        meta, tensors = load_file(args.model)
    except ValueError as e:
        sys.exit(str(e))
    if "belief" not in meta:
        sys.exit(f"{args.model}: it has no belief head")
    tensors = {k: v for k, v in tensors.items() if k not in ("w_b", "b_b", "w_bt", "b_bt")}
    for key in ("belief", "belief_prior", "belief_hidden"):
        meta.pop(key, None)
    meta["provenance"]["made_by"] += " (its belief head removed by scripts/without-belief.py)"
    save_file(tensors, args.out, metadata={META_KEY: json.dumps(meta)})
    print(f"{args.out}: {args.model} without its belief head")


if __name__ == "__main__":
    main()
