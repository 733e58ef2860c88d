#!/usr/bin/env python3
"""The web view in a real browser (docs/web.md): Debian's chromium, driven
through chromedriver's WebDriver protocol (a few HTTP calls, no client
library), against live muggins processes.

1. `muggins run jobs/specs/smoke.toml --keep-web`: the experiments page
   shows the run, its progress grows between two looks without a reload
   (live.js), the experiment page shows stages, tasks and the spec, and
   once finished the report's plots load (no broken image).
2. `muggins coordinator --token T --web-token V --web-listen` with a worker,
   and two specs submitted: a small agents spec with `[stop] sprt` and
   scripts/web/escaping.toml (name, agent names and comments hold
   `<script>` and `"><img onerror>` payloads). Without the token the view
   refuses (401, a login form); the browser signs in with the read-only
   token; the SPRT page shows the Elo table and the SPRT chart; the
   escaping page's DOM holds no element and runs no script from the
   payloads, and shows them as text; no action is reachable with a GET
   and other methods are refused.
3. `muggins run jobs/specs/train-all-fives-smoke.toml --keep-web`: the
   training run's page follows it, and once finished says so and its
   curve loads; the training list names it.

Screenshots of each page at 1280 px and at phone width (390 px) go to the
directory given as the second argument.

Usage: web-test.py path/to/muggins OUT_DIR
"""

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SPRT_SPEC = """
name = "web-sprt"
seed = 8
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
starting_states = "spread:400"
repeats = 1
agents = ["searching"]
opponents = ["random"]
[search]
depth = 2
[agents.searching]
engine = "expectimax"
[stop]
sprt = { elo0 = 0, elo1 = 60, alpha = 0.05, beta = 0.05 }
[shards]
games = 10
"""

checks = 0


def check(cond, what):
    global checks
    if not cond:
        raise SystemExit(f"web test FAILED: {what}")
    checks += 1
    print(f"  ok: {what}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    """A headless chromium session through chromedriver."""

    def __init__(self, out):
        self.out = out
        self.port = free_port()
        self.proc = subprocess.Popen(
            [CHROMEDRIVER, f"--port={self.port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(self.base + "/status", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        self.profile = tempfile.mkdtemp(prefix="muggins-chromium-")
        caps = {
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": CHROMIUM,
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                            "--no-first-run", "--disable-background-networking",
                            "--disable-component-update", "--disable-sync",
                            "--disable-dev-shm-usage", f"--user-data-dir={self.profile}",
                        ],
                    },
                }
            }
        }
        self.sid = self.call("POST", "/session", caps)["sessionId"]

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.load(r)["value"]
        except urllib.error.HTTPError as e:
            raise SystemExit(f"webdriver {method} {path}: {e.code} {e.read()[:400]!r}")

    def s(self, path):
        return f"/session/{self.sid}{path}"

    def get(self, url):
        self.call("POST", self.s("/url"), {"url": url})

    def js(self, script, *args):
        return self.call("POST", self.s("/execute/sync"), {"script": script, "args": list(args)})

    def size(self, width, height):
        self.call("POST", self.s("/window/rect"), {"width": width, "height": height})

    def shoot(self, name):
        """Screenshots of the page at 1280 px and at phone width, each tall
        enough for the whole page."""
        for width, label in ((1280, "1280"), (390, "phone")):
            self.size(width, 900)
            time.sleep(0.3)
            height = min(int(self.js("return document.documentElement.scrollHeight")) + 120, 8000)
            self.size(width, height)
            time.sleep(0.3)
            png = base64.b64decode(self.call("GET", self.s("/screenshot")))
            path = os.path.join(self.out, f"{name}-{label}.png")
            with open(path, "wb") as f:
                f.write(png)
        self.size(1280, 900)

    def quit(self):
        try:
            self.call("DELETE", self.s(""))
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            shutil.rmtree(self.profile, ignore_errors=True)


# Every muggins process started, killed at the end if a failed check left
# one running.
PROCS = []


class Proc:
    """A muggins process whose stderr is kept (and echoed on failure)."""

    def __init__(self, args, env=None):
        PROCS.append(self)
        self.lines = []
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env=env, cwd=ROOT)
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_line(self, prefix, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in self.lines:
                if line.startswith(prefix):
                    return line
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"no line starting {prefix!r}; the process said:\n" + "\n".join(self.lines[-30:]))

    def stop(self, sig=signal.SIGINT):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise SystemExit("a muggins process did not stop on " + str(sig))


def http(url, method="GET", token=None, data=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(url, method=method, headers=headers, data=data)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode(errors="replace"), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace"), e.headers


BROKEN_IMAGES = """
return Array.from(document.images).filter(function (i) { return !i.complete || i.naturalWidth === 0; })
  .map(function (i) { return i.getAttribute('src'); });
"""

WAIT_IMAGES = """
var done = arguments[0];
return Array.from(document.images).every(function (i) { return i.complete; });
"""


def wait_images(d):
    for _ in range(100):
        if d.js("return Array.from(document.images).every(function (i) { return i.complete; })"):
            return
        time.sleep(0.1)


def part_one(d, muggins, tmp):
    print("== muggins run of the smoke spec with the web view")
    # One worker on one thread, so that the games stage lasts a few seconds.
    run = Proc([muggins, "run", "jobs/specs/smoke.toml", "--out", os.path.join(tmp, "run"), "--keep-web",
                "--workers", "1", "--threads", "1"])
    url = run.wait_line("web view at ").split()[-1]
    check(url.startswith("http://127.0.0.1:") and url.endswith("/"), f"muggins run prints the web view's address ({url})")
    run.wait_line("this experiment's page: ")
    d.get(url)
    check("smoke" in d.js("return document.body.innerText"), "the experiments page lists the run")
    # Two looks (page loads) while the games are played.
    progress = "var p = document.querySelector('#experiments progress'); return p ? [p.value, p.max] : null;"
    first = None
    for _ in range(1200):
        d.get(url)
        first = d.js(progress)
        if first and 0 < first[0] < first[1] and "games" in d.js("return document.body.innerText"):
            break
        time.sleep(0.05)
    check(first is not None and 0 < first[0] < first[1], f"the experiments page shows the games' progress bar ({first})")
    # The experiment's page, left to live.js from here (no reload).
    page = url + "experiments/" + run.wait_line("this experiment's page: ").rsplit("/", 1)[-1]
    d.get(page)
    bar = "var p = document.querySelector('#summary progress'); return p ? p.value : null;"
    live_first = d.js(bar)
    check(d.js("return document.body.getAttribute('data-refresh')") is not None, "the running experiment's page refreshes itself")
    text = d.js("return document.body.innerText")
    check("Tasks" in text and "Cross-checks" in text and "Spec" in text, "the experiment page shows stages, tasks, checks and the spec")
    check(d.js("return document.querySelectorAll('.toml .t-k').length") > 3, "the spec's TOML is highlighted")
    live_next = live_first
    for _ in range(1800):
        live_next = d.js(bar)
        if live_next is not None and live_first is not None and live_next > live_first:
            break
        time.sleep(0.1)
    check(live_next > live_first, f"its progress grows without a reload ({live_first} then {live_next} games)")
    for _ in range(1800):
        if "succeeded" in d.js("return document.querySelector('h1 .state').textContent"):
            break
        time.sleep(0.5)
    check("succeeded" in d.js("return document.querySelector('h1 .state').textContent"),
          "the page turns to succeeded by itself when the run ends (live.js)")
    check(d.js("return document.getElementById('updated').textContent").startswith("finished"), "live.js says it stopped")
    d.get(url)
    second = d.js(progress)
    check(second[0] > first[0], f"the experiments page's progress grew between two looks ({first[0]} then {second[0]} games)")
    d.shoot("experiments")
    d.get(page)
    wait_images(d)
    n = d.js("return document.querySelectorAll('.report img').length")
    check(n >= 3, f"the finished report shows its plots inline ({n} images)")
    check(d.js(BROKEN_IMAGES) == [], f"every plot loads (broken: {d.js(BROKEN_IMAGES)})")
    links = d.js("return Array.from(document.querySelectorAll('.links a')).map(function (a) { return a.href; })")
    check(len(links) == 3, "links to report.md, the report's files and the Parquet directory")
    for link in links:
        status, body, _ = http(link)
        check(status == 200, f"{link} answers 200")
    status, body, _ = http(links[2])
    check(".parquet" in body, "the Parquet directory lists the partitions")
    d.shoot("experiment-finished")
    d.get(url + "workers")
    check(d.js("return document.querySelectorAll('#workers tbody tr').length") >= 1, "the workers page lists the run's workers")
    d.shoot("workers")
    run.stop()
    check(run.proc.returncode is not None, "Ctrl-C stops `muggins run --keep-web`")


def part_two(d, muggins, tmp):
    print("== a coordinator with a token and a read-only web token, a worker, two specs")
    token, view = "coordinator-token-0123456789", "view-only-token-0123456789"
    port = free_port()
    env = dict(os.environ, MUGGINS_TOKEN=token)
    results = os.path.join(tmp, "results")
    coord = Proc([muggins, "coordinator", "--listen", f"127.0.0.1:{port}", "--state", os.path.join(tmp, "state.sqlite"),
                  "--results", results, "--web-listen", "127.0.0.1:0", "--web-token", view], env=env)
    url = coord.wait_line("web view at ").split()[-1]
    grpc = f"http://127.0.0.1:{port}"
    worker = Proc([muggins, "worker", "--coordinator", grpc, "--results", results, "--threads", "2", "--id", "web-test-worker"], env=env)
    spec = os.path.join(tmp, "sprt.toml")
    with open(spec, "w") as f:
        f.write(SPRT_SPEC)
    for s in (spec, os.path.join(ROOT, "scripts", "web", "escaping.toml")):
        subprocess.run([muggins, "submit", s, "--coordinator", grpc], env=env, check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
    status, body, _ = http(url)
    check(status == 401 and 'name="token"' in body, "without a token the view refuses with a login form (401)")
    check(http(url + "api/experiments", token="wrong-token-0123456789")[0] == 401, "a wrong bearer token is refused")
    check(http(url + "api/experiments", token=view)[0] == 200, "the read-only web token opens the view")
    check(http(url + "api/experiments", token=token)[0] == 200, "so does the coordinator's token")
    for method in ("POST", "PUT", "DELETE"):
        check(http(url, method=method, token=view, data=b"x")[0] in (404, 405), f"{method} / is refused: the view is read-only")
    d.get(url)
    check(d.js("return document.querySelector('input[name=token]') !== null"), "the browser gets the login form")
    d.js("document.querySelector('input[name=token]').value = arguments[0]; document.querySelector('form').submit();", view)
    time.sleep(1)
    check("Experiments" in d.js("return document.querySelector('h1').textContent"), "signing in with the web token shows the experiments")
    deadline = time.time() + 600
    while time.time() < deadline:
        _, body, _ = http(url + "api/experiments", token=view)
        states = [e["state"] for e in json.loads(body)["experiments"]]
        if len(states) == 2 and all(s != "running" for s in states):
            break
        time.sleep(0.5)
    check(states == ["succeeded", "succeeded"], f"both experiments succeed ({states})")
    ids = {e["name"]: e["id"] for e in json.loads(body)["experiments"]}
    d.get(url)
    d.shoot("experiments-signed-in")
    d.get(url + "experiments/" + ids["web-sprt"])
    wait_images(d)
    heads = d.js("return Array.from(document.querySelectorAll('.report th')).map(function (t) { return t.textContent; })")
    check("Elo" in heads and "LOS over next" in heads, "the SPRT experiment shows the Bradley-Terry Elo table")
    check(any(h.startswith("Elo [95%]") for h in heads), "and the pairings' Elo with intervals")
    sprt = d.js("return Array.from(document.querySelectorAll('.report img')).filter(function (i) { return /sprt\\.svg$/.test(i.src); }).map(function (i) { return i.naturalWidth; })")
    check(len(sprt) == 1 and sprt[0] > 0, "the SPRT chart (LLR against its bounds) loads")
    check("H1 accepted" in d.js("return document.body.innerText"), "the SPRT's verdict is shown")
    d.shoot("experiment-sprt")
    name = [n for n in ids if n != "web-sprt"][0]
    for page in ("", "experiments/" + ids[name], "experiments/" + ids[name] + "/files/report/", "workers"):
        d.get(url + page)
        wait_images(d)
        pwned = d.js("return typeof window.__pwned === 'undefined' ? null : window.__pwned")
        check(pwned is None, f"/{page}: no payload script ran")
        on = d.js("return Array.from(document.querySelectorAll('*')).filter(function (e) { return Array.from(e.attributes).some(function (a) { return /^on/i.test(a.name); }); }).length")
        check(on == 0, f"/{page}: no element carries an event-handler attribute")
        inline = d.js("return Array.from(document.scripts).filter(function (s) { return !s.src; }).length")
        check(inline == 0, f"/{page}: no inline script element")
        xs = d.js("return Array.from(document.images).filter(function (i) { return i.getAttribute('src') === 'x'; }).length")
        check(xs == 0, f"/{page}: no payload image element")
    d.get(url + "experiments/" + ids[name])
    text = d.js("return document.body.innerText")
    check("<script>window.__pwned=1</script>" in text, "the payload name is shown as text")
    check("<img src=x onerror=window.__pwned=2>" in text, "the payload agent names are shown as text")
    d.js("document.querySelector('details.spec').open = true")
    check("</pre><script>window.__pwned = 4</script><pre>" in d.js("return document.querySelector('pre.toml').textContent"),
          "the payload comment is shown as text in the spec")
    d.shoot("experiment-escaping")
    worker.stop(signal.SIGTERM)
    coord.stop(signal.SIGTERM)


def part_three(d, muggins, tmp):
    print("== muggins run of the All-Fives training smoke spec with the web view")
    run = Proc([muggins, "run", "jobs/specs/train-all-fives-smoke.toml", "--out", os.path.join(tmp, "train"),
                "--keep-web", "--threads", "2"])
    try:
        url = run.wait_line("web view at ").split()[-1]
        page = run.wait_line("this run's page: ").split()[-1]
        check(page == url + "training/train-all-fives-smoke", f"the run's page is named ({page})")
        d.get(page)
        check("Training: train-all-fives-smoke" in d.js("return document.body.innerText"), "the training page shows the run")
        run.wait_line("the run is over; the web view stays at ", timeout=600)
        d.get(page)
        wait_images(d)
        text = d.js("return document.body.innerText")
        check("4 / 4 generations" in text and "finished" in text, "the finished run's page says so")
        check(d.js(BROKEN_IMAGES) == [], f"the training curve loads (broken: {d.js(BROKEN_IMAGES)})")
        d.shoot("training")
        d.get(url + "training")
        check("train-all-fives-smoke" in d.js("return document.body.innerText"), "the training list names the run")
    finally:
        run.stop()
    check(run.proc.returncode == 0, f"Ctrl-C ends `muggins run --keep-web` of a training spec ({run.proc.returncode})")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    muggins, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(tool):
            raise SystemExit(f"{tool} is missing: apt-get install chromium chromium-driver")
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="muggins-web-test-")
    d = Driver(out)
    try:
        part_one(d, muggins, tmp)
        part_two(d, muggins, tmp)
        part_three(d, muggins, tmp)
    finally:
        d.quit()
        for p in PROCS:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"web test: {checks} checks passed; screenshots in {out}")


if __name__ == "__main__":
    main()
