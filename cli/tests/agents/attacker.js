#!/usr/bin/env node
// A muggins agent (docs/agents.md, protocol 2) written from the docs alone,
// in JavaScript, that tries what an agent must not (cli/tests/it/walls.rs).
// It plays uniformly random legal actions; with --mode it also:
//   spy      at its first decision: looks for the secret (--secret-rev, reversed)
//            in its environment and every /proc/*/environ and cmdline it
//            can read; writes outside its directory (--outside PATHS,
//            comma-separated); reads --results; connects to 127.0.0.1
//            --port; starts a child in its group and one in a session of
//            its own (both with --tag in their arguments). It reports each
//            on stderr as "SPY what: outcome", never the secret itself.
//   stray    once per process, after its third decision, writes a second
//            answer (a stray line): "STRAY" on stderr.
//   badutf8  answers its second decision with a line holding bytes that
//            are not UTF-8 inside a JSON string.
//   slow     takes --delay ms (400) a decision.
//   orphan-crash, orphan-hang
//            at its second decision starts a child in a session of its own
//            ("sleep 300 TAG"), then exits (crash) or never answers (time).
"use strict";
const fs = require("fs");
const net = require("net");
const readline = require("readline");
const { spawn } = require("child_process");

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const mode = args.mode || "none";

function send(m) {
  process.stdout.write(JSON.stringify(m) + "\n");
}

function report(what, outcome) {
  process.stderr.write(`SPY ${what}: ${outcome}\n`);
}

function spy(done) {
  // Given reversed, so that its own command line does not hold it.
  const secret = args["secret-rev"].split("").reverse().join("");
  const found = [];
  for (const [k, v] of Object.entries(process.env)) if (v.includes(secret) || k.startsWith("MUGGINS_TOKEN")) found.push(`env ${k}`);
  let procs = [];
  try {
    procs = fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch (e) {
    report("proc", "unreadable");
  }
  report("processes", procs.length);
  for (const pid of procs) {
    for (const f of ["environ", "cmdline"]) {
      try {
        if (fs.readFileSync(`/proc/${pid}/${f}`).toString("latin1").includes(secret)) found.push(`/proc/${pid}/${f}`);
      } catch (e) {}
    }
  }
  report("secret", found.length ? `FOUND in ${found.join(" ")}` : "absent");
  for (const p of (args.outside || "").split(",").filter(Boolean)) {
    try {
      fs.writeFileSync(p, "escaped");
      report(`write ${p}`, "ALLOWED");
    } catch (e) {
      report(`write ${p}`, "denied");
    }
  }
  try {
    fs.readdirSync(args.results);
    report("results", "READABLE");
  } catch (e) {
    report("results", "unreadable");
  }
  spawn("sleep", ["300", args.tag], { stdio: "ignore" });
  spawn("sleep", ["300", args.tag], { stdio: "ignore", detached: true }).unref();
  report("children", "started");
  const s = net.connect({ host: "127.0.0.1", port: Number(args.port) });
  const end = (outcome) => {
    report("network", outcome);
    s.destroy();
    done();
  };
  s.setTimeout(1000, () => end("refused (time-out)"));
  s.on("connect", () => end("CONNECTED"));
  s.on("error", (e) => end(`refused (${e.code})`));
}

let decisions = 0;
let strayed = false;
let spied = false;
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.type === "hello") {
    send({ type: "hello", protocol: 2, name: "attacker", games: ["all-fives", "block", "team"] });
  } else if (m.type === "decide") {
    decisions += 1;
    const answer = () => {
      const action = m.legal[Math.floor(Math.random() * m.legal.length)];
      if (mode === "badutf8" && decisions === 2) {
        const head = Buffer.from(`{"type": "action", "id": ${m.id}, "action": ${action}, "note": "`);
        process.stdout.write(Buffer.concat([head, Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]));
        return;
      }
      send({ type: "action", id: m.id, action });
      if (mode === "stray" && decisions === 3 && !strayed) {
        strayed = true;
        process.stderr.write("STRAY\n");
        send({ type: "action", id: m.id, action });
      }
    };
    if (mode.startsWith("orphan-") && decisions === 2) {
      spawn("sleep", ["300", args.tag], { stdio: "ignore", detached: true }).unref();
      if (mode === "orphan-crash") setTimeout(() => process.exit(3), 100);
      return;
    }
    if (mode === "spy" && !spied) {
      spied = true;
      spy(answer);
    } else if (mode === "slow") {
      setTimeout(answer, Number(args.delay || 400));
    } else {
      answer();
    }
  } else if (m.type === "quit") {
    process.exit(0);
  }
});
