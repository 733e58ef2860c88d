"""Hashes an experiment's report and classifier files for pin-behaviour.sh,
masking the measured timings (keys and columns named *_ms / "... ms")."""
import csv, hashlib, io, json, pathlib, re, sys

def strip_ms(v):
    if isinstance(v, dict):
        return {k: strip_ms(x) for k, x in v.items() if not k.endswith("_ms")}
    if isinstance(v, list):
        return [strip_ms(x) for x in v]
    return v

def mask_md(text):
    out, masked = [], []
    for line in text.splitlines():
        cells = line.split("|")
        if line.startswith("|") and not masked and any(re.search(r"\bms\b", c) for c in cells):
            masked = [i for i, c in enumerate(cells) if re.search(r"\bms\b", c)]
        elif not line.startswith("|"):
            masked = []
        elif masked and not set(line) <= set("|-: "):
            cells = [("#" if i in masked else c) for i, c in enumerate(cells)]
        out.append("|".join(cells))
    return "\n".join(out)

def mask_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return text
    cols = [i for i, h in enumerate(rows[0]) if h.endswith("_ms")]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for n, r in enumerate(rows):
        w.writerow([("#" if n and i in cols else c) for i, c in enumerate(r)])
    return buf.getvalue()

d = pathlib.Path(sys.argv[1])
for f in sorted(p for sub in ("report", "classifier") for p in (d / sub).rglob("*") if p.is_file()):
    rel = f.relative_to(d).as_posix()
    data = f.read_bytes()
    if f.suffix == ".json":
        data = json.dumps(strip_ms(json.loads(data)), sort_keys=True).encode()
    elif f.suffix == ".md":
        data = mask_md(data.decode()).encode()
    elif f.suffix == ".csv":
        data = mask_csv(data.decode()).encode()
    print(hashlib.sha256(data).hexdigest(), rel)
