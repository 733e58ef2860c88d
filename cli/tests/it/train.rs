//! `muggins run` of a training spec (docs/train.md): the shipped smoke
//! spec learns to beat `random` (a test that fails when learning breaks),
//! Ctrl-C stops it and the same command resumes to the same network, and
//! a bad spec is refused naming the field.

use std::time::Duration;

use serde_json::Value;

use crate::util::{Dir, TestCommand};

const SMOKE: &str = "jobs/specs/train-block-smoke.toml";

fn repo_file(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn train(spec: &std::path::Path, out: &std::path::Path) -> TestCommand {
    let mut cmd = TestCommand::new(&["run"]);
    cmd.arg(spec)
        .arg("--out")
        .arg(out)
        .args(["--threads", "2"])
        .timeout(Duration::from_secs(600));
    cmd
}

/// The Elo (and its 95% interval) of a match record of report.json.
fn elo(m: &Value) -> (f64, f64, f64) {
    let f = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k} in {m}"));
    (f("elo"), f("elo_low"), f("elo_high"))
}

fn anchor<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|p| p[0] == name)
        .map(|p| &p[1])
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

#[test]
fn the_smoke_spec_learns_to_beat_random_and_heaviest() {
    let dir = Dir::new();
    let o = train(&repo_file(SMOKE), dir.path()).success();
    assert!(o.stderr.contains("generation 4/4: self-play"), "{}", o.stderr);
    let out = dir.join("train-block-smoke");
    for f in [
        "report.md",
        "report.json",
        "curve.svg",
        "best.safetensors",
        "summary.json",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let report: Value = serde_json::from_str(&dir.read("train-block-smoke/report.json")).unwrap();
    let last = report["generations"].as_array().unwrap().last().unwrap();
    // The margin (docs/train.md): the trained network's Elo against
    // random has its 95% interval above +40, and it gains on both anchors
    // beyond the untrained network's interval.
    let (trained, low, _) = elo(anchor(&last["anchors"], "random"));
    let (untrained, _, untrained_high) = elo(anchor(&report["first_anchors"], "random"));
    assert!(
        low >= 40.0,
        "the trained network against random: {trained:+.1}, low {low:+.1}"
    );
    assert!(
        low > untrained_high,
        "trained {trained:+.1} vs untrained {untrained:+.1}"
    );
    let (_, low_h, _) = elo(anchor(&last["anchors"], "heaviest"));
    let (_, _, untrained_high_h) = elo(anchor(&report["first_anchors"], "heaviest"));
    assert!(low_h > untrained_high_h, "against heaviest: {last}");
    let md = dir.read("train-block-smoke/report.md");
    assert!(md.contains("| 4 |") && md.contains("vs random (Elo)"), "{md}");
    // `muggins report` rebuilds it from the run's summary.
    std::fs::remove_file(out.join("report.md")).unwrap();
    TestCommand::new(&["report"]).arg(&out).success();
    assert_eq!(dir.read("train-block-smoke/report.md"), md);
    // The best network plays as a named agent in an ordinary experiment.
    let best = out.join("best.safetensors");
    let spec = dir.create_spec(&format!(
        "name = \"vs-best\"\nseed = 3\n[rules]\npreset = \"block\"\n[grid]\ninformation_source = [\"oracle\"]\n\
         observability = [\"partial\"]\nstarting_states = \"spread:20\"\nrepeats = 1\nagents = [\"best\"]\n\
         opponents = [\"random\"]\npaired = true\n[agents.best]\nengine = \"net\"\nnet = {:?}\n",
        best.display().to_string()
    ));
    TestCommand::run_spec(&spec, &dir.join("games"), 1, None).success();
    assert!(dir.join("games/vs-best/_SUCCESS").exists());
    // A second run finds every generation done and changes nothing.
    let again = train(&repo_file(SMOKE), dir.path()).success();
    assert!(again.stderr.contains("generation 4: done before"), "{}", again.stderr);
    let report2: Value = serde_json::from_str(&dir.read("train-block-smoke/report.json")).unwrap();
    assert_eq!(report2["best"], report["best"]);
}

#[test]
fn ctrl_c_stops_training_and_the_same_command_resumes_to_the_same_network() {
    let dir = Dir::new();
    let spec = dir.create_spec(
        &std::fs::read_to_string(repo_file(SMOKE))
            .unwrap()
            .replace("generations = 4", "generations = 3"),
    );
    let whole = dir.join("whole");
    train(&spec, &whole).success();
    let want: Value = serde_json::from_str(&dir.read("whole/train-block-smoke/summary.json")).unwrap();
    let cut = dir.join("cut");
    let log = dir.join("cut.log");
    let mut first = train(&spec, &cut)
        .stdout_to(std::process::Stdio::null())
        .stderr_to(std::fs::File::create(&log).unwrap())
        .spawn();
    crate::cluster::wait_for("the second generation", 120, || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("generation 2/3: self-play"))
    });
    first.signal("-INT");
    let status = first.wait_timeout(Duration::from_secs(60)).expect("it stops");
    assert_eq!(status.code(), Some(130), "{}", std::fs::read_to_string(&log).unwrap());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("run the same command again to resume"), "{text}");
    assert!(!cut.join("train-block-smoke/best.safetensors").exists());
    train(&spec, &cut).success();
    let got: Value = serde_json::from_str(&dir.read("cut/train-block-smoke/summary.json")).unwrap();
    assert_eq!(got["best"], want["best"]);
    let hashes = |v: &Value| -> Vec<Value> {
        v["generations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["candidate"].clone())
            .collect()
    };
    assert_eq!(hashes(&got), hashes(&want));
}

/// Trains the shipped smoke spec `name` (jobs/specs/NAME.toml) and checks
/// the margin docs/train.md states: against random the 95% interval above
/// `floor` and above the untrained network's, against heaviest above the
/// untrained one's; the best network is for `game`.
fn smoke_learns(name: &str, game: &str, floor: f64) {
    let dir = Dir::new();
    train(&repo_file(&format!("jobs/specs/{name}.toml")), dir.path()).success();
    let report: Value = serde_json::from_str(&dir.read(format!("{name}/report.json"))).unwrap();
    let last = report["generations"].as_array().unwrap().last().unwrap();
    let (trained, low, _) = elo(anchor(&last["anchors"], "random"));
    let (untrained, _, untrained_high) = elo(anchor(&report["first_anchors"], "random"));
    assert!(
        low >= floor && low > untrained_high,
        "{game} against random: trained {trained:+.1} (low {low:+.1}), untrained {untrained:+.1}"
    );
    let (_, low_h, _) = elo(anchor(&last["anchors"], "heaviest"));
    let (_, _, untrained_high_h) = elo(anchor(&report["first_anchors"], "heaviest"));
    assert!(low_h > untrained_high_h, "{game} against heaviest: {last}");
    let net = net::Model::load(&dir.join(format!("{name}/best.safetensors"))).unwrap();
    assert_eq!(net.meta.game, game);
}

#[test]
fn all_fives_trains_too_and_its_network_beats_random_and_heaviest() {
    smoke_learns("train-all-fives-smoke", "all-fives", 20.0);
}

#[test]
fn team_trains_too_and_its_network_beats_random_and_heaviest() {
    smoke_learns("train-team-smoke", "team", 40.0);
}

#[test]
fn a_bad_training_spec_is_refused_naming_the_field() {
    let dir = Dir::new();
    let text = std::fs::read_to_string(repo_file(SMOKE)).unwrap();
    for (from, to, want) in [
        ("game = \"block\"", "game = \"checkers\"", "train.game = \"checkers\""),
        (
            "game = \"block\"",
            "game = \"all-fives\"\nsearched = 0.5\nsearch = \"ismcts\"",
            "train.search = ismcts: muggins' ISMCTS plays block and team only",
        ),
        (
            "learning_rate = 0.001",
            "learning_rate = -1.0",
            "train.fit.learning_rate = -1",
        ),
        ("epochs = 4", "epochs = 4\nepoch = 2", "unknown field `epoch`"),
    ] {
        let spec = dir.create_spec(&text.replacen(from, to, 1));
        train(&spec, &dir.join("out")).assert_err(&[want]);
    }
    // The same directory, another spec: refused, the first kept.
    let a = dir.create("a.toml", text.replace("generations = 4", "generations = 1"));
    train(&a, &dir.join("same")).success();
    let b = dir.create(
        "b.toml",
        text.replace("generations = 4", "generations = 1\n")
            .replace("seed = 2047", "seed = 1"),
    );
    train(&b, &dir.join("same")).assert_err(&["holds the training of another spec"]);
}

/// A GET on loopback: the status and the body.
fn get(addr: &str, path: &str) -> (u16, Vec<u8>) {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.write_all(format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head");
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, raw[end + 4..].to_vec())
}

#[test]
fn the_web_view_follows_a_training_run_and_serves_its_curve_and_network() {
    let dir = Dir::new();
    let log = dir.join("run.log");
    let mut run = train(&repo_file("jobs/specs/train-all-fives-smoke.toml"), dir.path())
        .args(["--keep-web", "--web-listen", "127.0.0.1:0"])
        .stdout_to(std::process::Stdio::null())
        .stderr_to(std::fs::File::create(&log).unwrap())
        .spawn();
    let text = || std::fs::read_to_string(&log).unwrap_or_default();
    crate::cluster::wait_for("the web view's address", 60, || text().contains("web view at "));
    let line = text();
    let url = line
        .split("web view at http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .expect("web view at http://ADDR/")
        .to_string();
    assert!(line.contains("/training/train-all-fives-smoke"), "{line}");
    // While it runs: the page follows it (live), and says how far it is.
    crate::cluster::wait_for("a generation on the page", 300, || {
        let (_, body) = get(&url, "/training/train-all-fives-smoke");
        String::from_utf8_lossy(&body).contains(" / 4 generations</span>")
    });
    let (status, body) = get(&url, "/training/train-all-fives-smoke");
    let page = String::from_utf8_lossy(&body).into_owned();
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("<img src=\"/training/train-all-fives-smoke/curve.svg\""),
        "{page}"
    );
    crate::cluster::wait_for("the end of the run", 600, || text().contains("the web view stays at"));
    let (_, body) = get(&url, "/training");
    let list = String::from_utf8_lossy(&body).into_owned();
    assert!(
        list.contains("href=\"/training/train-all-fives-smoke\"")
            && list.contains("4 / 4 generations")
            && list.contains("finished"),
        "{list}"
    );
    let (status, svg) = get(&url, "/training/train-all-fives-smoke/curve.svg");
    assert_eq!(status, 200);
    assert_eq!(svg, std::fs::read(dir.join("train-all-fives-smoke/curve.svg")).unwrap());
    let (status, best) = get(&url, "/training/train-all-fives-smoke/best.safetensors");
    assert_eq!(status, 200);
    assert_eq!(
        best,
        std::fs::read(dir.join("train-all-fives-smoke/best.safetensors")).unwrap()
    );
    // Nothing else of the run's directory, and no other name, is served.
    for path in [
        "/training/train-all-fives-smoke/_train.json",
        "/training/..%2F..%2Fetc",
        "/training/nonesuch",
        "/training/nonesuch/curve.svg",
    ] {
        assert_eq!(get(&url, path).0, 404, "{path}");
    }
    run.signal("-INT");
    let status = run.wait_timeout(Duration::from_secs(60)).expect("it stops");
    assert_eq!(status.code(), Some(0), "{}", text());
}
