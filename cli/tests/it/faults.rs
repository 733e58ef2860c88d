//! The fault-injection suite: runs of a spec on loopback while workers are
//! SIGKILLed, one is SIGSTOPped past its lease and resumed (its late work must
//! be refused), the coordinator is SIGKILLed and restarted, and completions
//! are replayed. Every run must end with exactly the grid's rows, all keys
//! distinct, and content identical to an undisturbed run.
//!
//! `MUGGINS_FAULT_RUNS` sets the number of runs (default 2); the figures are
//! printed and written to `target/reliability.txt`.

use std::path::Path;
use std::time::{Duration, Instant};

use proto::{CompleteTaskRequest, ExperimentState, LeaseTaskRequest};

use crate::cluster::{SLOW_SPEC, coordinator_with, expected, experiment, free_port, rows, submit, worker};
use crate::util::{Dir, Proc};

/// The slow spec of the cluster tests, made longer so every fault lands mid-run.
static FAULT_SPEC: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| SLOW_SPEC.replace("\"0-399\"", "\"0-1999\""));

fn coordinator(port: u16, metrics: u16, dir: &Path) -> Proc {
    coordinator_with(port, dir, 1, &["--metrics-listen", &format!("127.0.0.1:{metrics}")])
}

/// A metric's value from the coordinator's `/metrics` (0 while unreachable).
pub(crate) fn scrape(port: u16, name: &str) -> u64 {
    use std::io::{Read, Write};
    let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut s = String::new();
    let _ = c.read_to_string(&mut s);
    s.lines()
        .find(|l| l.split(' ').next() == Some(name))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0)
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[derive(Default, Debug)]
struct Figures {
    runs: u32,
    kills: u32,
    stalls: u32,
    restarts: u32,
    refused: u64,
    replays_refused: u32,
    rows: u64,
}

/// Leases a task as a worker would, completes it properly, then replays the
/// same completion: the replay must be refused.
fn replay_once(port: u16, dir: &Path, spec: &jobs::Spec) -> bool {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let Ok(ch) = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
            .unwrap()
            .connect()
            .await
        else {
            return false;
        };
        let mut c = proto::client::new(ch, None).unwrap();
        let Ok(r) = c
            .lease_task(LeaseTaskRequest {
                worker_id: "replayer".into(),
                threads: 1,
                results_marker: std::fs::read_to_string(dir.join("results").join(jobs::layout::RESULTS_MARKER))
                    .map(|m| m.trim().to_string())
                    .unwrap_or_default(),
                results_root: String::new(),
                experiment_id: String::new(),
            })
            .await
        else {
            return false;
        };
        let Some(t) = r.into_inner().task else { return false };
        if t.stage != "games" {
            return false;
        }
        let shard = jobs::Shard {
            index: t.shard,
            first_game: t.first_game,
            games: t.games,
        };
        let rows = jobs::Executor::new(1)
            .run(spec, shard, &Default::default(), &Default::default())
            .unwrap();
        let temp = format!("{}/games/.part-{:05}.replayer.tmp", t.output, t.shard);
        jobs::write_partition(&dir.join("results").join(&temp), &spec.name, &rows).unwrap();
        let req = CompleteTaskRequest {
            worker_id: "replayer".into(),
            task_id: t.task_id.clone(),
            lease_token: t.lease_token.clone(),
            rows: rows.len() as u64,
            checksum: jobs::checksum(&rows),
            temp_file: temp.clone(),
            file_bytes: 0,
            file_sha256: String::new(),
            chunks: Vec::new(),
        };
        let (file_bytes, file_sha256) = jobs::layout::file_digest(&dir.join("results").join(&temp)).unwrap();
        let req = CompleteTaskRequest {
            file_bytes,
            file_sha256,
            ..req
        };
        let first = c.complete_task(req.clone()).await.unwrap().into_inner();
        if !first.accepted {
            return false;
        }
        jobs::durable_rename(
            &dir.join("results").join(&temp),
            &dir.join("results").join(&first.final_file),
        )
        .unwrap();
        let again = c.complete_task(req).await.unwrap().into_inner();
        assert!(!again.accepted, "a replayed completion must be refused");
        true
    })
}

#[test]
fn faults_lose_and_duplicate_nothing() {
    let runs: u32 = std::env::var("MUGGINS_FAULT_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let text = FAULT_SPEC.as_str();
    let spec = jobs::Spec::from_toml(text).unwrap();
    let mut want: Option<Vec<jobs::GameRow>> = None;
    let mut f = Figures::default();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for run in 0..runs {
        let dir = Dir::new();
        let (port, mport) = (free_port(), free_port());
        let mut coord = coordinator(port, mport, dir.path());
        let id = submit(port, &dir.create_spec(text));
        let mut workers: Vec<Proc> = (0..3).map(|_| worker(port, dir.path(), 1, false)).collect();
        let mut restarted = false;
        let mut replayed = false;
        let mut refused_before_restart = 0;
        let mut step = 0u64;
        let deadline = Instant::now() + Duration::from_secs(240);
        loop {
            assert!(Instant::now() < deadline, "run {run} did not finish");
            std::thread::sleep(Duration::from_millis(250 + rng.below(250)));
            let e = experiment(port, &id);
            if e.state == ExperimentState::Succeeded as i32 {
                break;
            }
            assert_eq!(e.state, ExperimentState::Running as i32, "{}", e.error);
            let done = e.stages[0].tasks_done;
            // First the scheduled faults, one per tick, then random ones.
            // Order: replay (3), kill (1), restart (2), stall (0): the
            // replay first, while most games tasks are still free to lease
            // (later, on a loaded machine, the grid could end before one
            // came free, and the run would lack its scheduled replay).
            let action = if done == 0 {
                9
            } else if step < 4 {
                [3, 1, 2, 0][step as usize]
            } else {
                rng.below(8)
            };
            let scheduled = done > 0 && step < 4;
            let mut did = true;
            match action {
                1 | 4 | 5 => {
                    // SIGKILL a random worker and start a fresh one.
                    let k = rng.below(workers.len() as u64) as usize;
                    let mut w = workers.swap_remove(k);
                    w.0.kill().unwrap();
                    w.0.wait().unwrap();
                    workers.push(worker(port, dir.path(), 1, false));
                    f.kills += 1;
                }
                0 => {
                    // Stall one past its lease (1 s), then let it go on.
                    let k = rng.below(workers.len() as u64) as usize;
                    workers[k].signal("-STOP");
                    std::thread::sleep(Duration::from_millis(2500));
                    workers[k].signal("-CONT");
                    f.stalls += 1;
                }
                2 if !restarted => {
                    refused_before_restart = scrape(mport, "muggins_stale_completions_rejected_total");
                    coord.0.kill().unwrap();
                    coord.0.wait().unwrap();
                    std::thread::sleep(Duration::from_millis(300));
                    coord = coordinator(port, mport, dir.path());
                    restarted = true;
                    f.restarts += 1;
                }
                3 if !replayed => {
                    if replay_once(port, dir.path(), &spec) {
                        replayed = true;
                        f.replays_refused += 1;
                    } else {
                        // No grid task free right now: try again next tick.
                        did = false;
                    }
                }
                _ => {}
            }
            step += u64::from(scheduled && did);
        }
        f.refused += refused_before_restart + scrape(mport, "muggins_stale_completions_rejected_total");
        for mut w in workers {
            let _ = w.0.kill();
            let _ = w.0.wait();
        }
        let out = dir.join("results/faults");
        assert!(out.join("_SUCCESS").exists());
        let got = rows(&out);
        let keys: std::collections::HashSet<u64> = got.iter().map(|r| r.game_index).collect();
        assert_eq!(got.len() as u64, spec.games(), "run {run}: exactly the grid's rows");
        assert_eq!(keys.len(), got.len(), "run {run}: all keys distinct");
        let want = want.get_or_insert_with(|| expected(text, &out));
        assert_eq!(&got, want, "run {run}: identical to an undisturbed run");
        f.rows += got.len() as u64;
        f.runs += 1;
    }
    let text = format!(
        "runs {}, workers SIGKILLed {}, workers SIGSTOPped past their lease {}, coordinator restarts {}, \
         completions refused (stale or replayed) {}, of them deliberate replays {}, rows checked {}\n",
        f.runs,
        f.kills,
        f.stalls,
        f.restarts,
        f.refused + f.replays_refused as u64,
        f.replays_refused,
        f.rows
    );
    println!("{text}");
    let _ = std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/reliability.txt"), &text);
    // Every scheduled fault happened in every run (random extra ones may add to them).
    assert!(f.kills >= f.runs && f.stalls >= f.runs, "{f:?}");
    assert_eq!((f.restarts, f.replays_refused), (f.runs, f.runs), "{f:?}");
}
