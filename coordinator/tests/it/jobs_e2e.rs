//! Whole experiments through a real coordinator and in-process workers.

use std::time::Duration;

use crate::{client, read_rows, start, submit};

const SPEC: &str = r#"
name = "e2e"
seed = 9
[grid]
information_source = ["oracle"]
observability = ["full", "partial"]
target = ["random", "scorer", "defender"]
starting_states = "0-19"
engine = ["mstar", "expectimax"]
repeats = 2
[shards]
games = SHARD
"#;

/// Runs `spec` to the end with `workers` in-process workers; returns the rows
/// (timing zeroed) and the manifest.
async fn run(spec: &str, workers: usize) -> (Vec<jobs::GameRow>, jobs::Manifest) {
    let mut s = start(Duration::from_secs(10)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, spec).await;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut handles = Vec::new();
    for k in 0..workers {
        let config = worker::Config {
            coordinator: s.url.clone(),
            results: s.results(),
            threads: 1,
            worker_id: format!("w{k}"),
            exit_when_done: true,
            grace: Duration::from_secs(5),
        };
        let mut rx = stop_rx.clone();
        handles.push(tokio::spawn(worker::run(config, async move {
            let _ = rx.wait_for(|v| *v).await;
        })));
    }
    let mut done = false;
    for _ in 0..600 {
        let now = c
            .get_experiment(proto::GetExperimentRequest { id: e.id.clone() })
            .await
            .unwrap()
            .into_inner();
        if now.state == proto::ExperimentState::Succeeded as i32 {
            done = true;
            break;
        }
        assert_eq!(
            now.state,
            proto::ExperimentState::Running as i32,
            "{}",
            now.error
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(done, "the experiment did not finish in time");
    let _ = stop_tx.send(true);
    let mut completed = 0;
    for h in handles {
        completed += h.await.unwrap().unwrap().tasks_completed;
    }
    let dir = s.results().join("e2e");
    assert!(dir.join("_SUCCESS").exists());
    let manifest: jobs::Manifest =
        serde_json::from_slice(&std::fs::read(dir.join("_manifest.json")).unwrap()).unwrap();
    assert_eq!(completed as usize, manifest.shards.len());
    let rows = read_rows(&dir);
    // No hidden partial files are left behind.
    let hidden = std::fs::read_dir(dir.join("games"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .count();
    assert_eq!(hidden, 0);
    s.stop().await;
    (
        rows.into_iter()
            .map(|r| jobs::GameRow { elapsed_us: 0, ..r })
            .collect(),
        manifest,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_do_not_depend_on_shard_size_or_worker_count() {
    let (big, m_big) = run(&SPEC.replace("SHARD", "1000"), 1).await;
    assert_eq!(big.len(), 480);
    let keys: std::collections::HashSet<u64> = big.iter().map(|r| r.game_index).collect();
    assert_eq!(keys.len(), 480);
    assert_eq!(m_big.shards.len(), 1);
    assert_eq!(m_big.games, 480);
    let (one_game, m_one) = run(&SPEC.replace("SHARD", "1"), 3).await;
    assert_eq!(m_one.shards.len(), 480);
    let (mid, _) = run(&SPEC.replace("SHARD", "37"), 3).await;
    assert_eq!(big, one_game);
    assert_eq!(big, mid);
    // The manifest's checksums are those of the rows in each partition.
    let rows_sum: u64 = m_one.shards.iter().map(|s| s.rows).sum();
    assert_eq!(rows_sum, 480);
    assert_eq!(m_big.shards[0].checksum, jobs::checksum(&big));
}
