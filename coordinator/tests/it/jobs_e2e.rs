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
            chunk_every: worker::DEFAULT_CHUNK_EVERY,
            coordinator: s.url.clone(),
            results: s.results(),
            threads: 1,
            fit_threads: 0,
            worker_id: format!("w{k}"),
            exit_when_done: true,
            experiment: None,
            grace: Duration::from_secs(5),
            auth: Default::default(),
            tls: None,
        };
        let mut rx = stop_rx.clone();
        handles.push(tokio::spawn(worker::run(config, async move {
            let _ = rx.wait_for(|v| *v).await;
        })));
    }
    let mut done = false;
    let mut checks = 0;
    for _ in 0..600 {
        let now = c
            .get_experiment(proto::GetExperimentRequest { id: e.id.clone() })
            .await
            .unwrap()
            .into_inner();
        if now.state == proto::ExperimentState::Succeeded as i32 {
            done = true;
            checks = now.checks_passed + now.checks_failed;
            break;
        }
        assert_eq!(now.state, proto::ExperimentState::Running as i32, "{}", now.error);
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
    let manifest: jobs::Manifest = serde_json::from_slice(&std::fs::read(dir.join("_manifest.json")).unwrap()).unwrap();
    // One task per shard, the report, and the cross-checks drawn.
    assert_eq!(completed as usize, manifest.shards.len() + 1 + checks as usize);
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
        rows.into_iter().map(|r| jobs::GameRow { elapsed_us: 0, ..r }).collect(),
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

const CLF_SPEC: &str = r#"
name = "clf"
seed = 4
[grid]
information_source = ["classifier"]
observability = ["full"]
target = ["scorer"]
starting_states = "0-9"
engine = ["mstar"]
repeats = 1
[classifier]
samples = 300
compare_samples = [300]
[shards]
games = 10
"#;

/// Runs the samples and fit stages by hand through the real RPCs, stopping
/// at the first games task (given back). Returns the experiment id and the
/// model's path.
async fn prepare_model(s: &crate::Server) -> (String, std::path::PathBuf) {
    use proto::*;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, CLF_SPEC).await;
    let spec = jobs::Spec::from_toml(CLF_SPEC).unwrap();
    let root = s.results();
    loop {
        // A stage opens once the coordinator has seen every file of the
        // previous one in place (its sweeper checks every 50 ms here).
        let mut t = None;
        for _ in 0..200 {
            t = c
                .lease_task(crate::lease_request(s, "prep"))
                .await
                .unwrap()
                .into_inner()
                .task;
            if t.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let t = t.expect("a task");
        let shard = jobs::Shard {
            index: t.shard,
            first_game: t.first_game,
            games: t.games,
        };
        let (rows, checksum, temp) = match t.stage.as_str() {
            "samples" => {
                let rows = jobs::training::run_samples(&spec, shard);
                let temp = format!("{}/classifier/samples/.part-{:05}.tmp", t.output, t.shard);
                std::fs::create_dir_all(root.join(&t.output).join("classifier/samples")).unwrap();
                jobs::write_samples(&root.join(&temp), &rows).unwrap();
                (rows.len() as u64, jobs::training::samples_checksum(&rows), temp)
            }
            "fit" => {
                let mut samples = Vec::new();
                for p in jobs::parts_in(&root.join(&t.output).join("classifier/samples")).unwrap() {
                    samples.extend(jobs::read_samples(&p).unwrap());
                }
                let out = jobs::training::fit(&spec, &samples, 1).unwrap();
                let file = format!("{}/{}", t.output, jobs::layout::model_file(&out.hash));
                std::fs::write(root.join(&file), &out.artifact).unwrap();
                (300, out.hash, file)
            }
            _ => {
                assert_eq!(t.model.len(), 64, "games tasks name the model");
                c.fail_task(FailTaskRequest {
                    worker_id: "prep".into(),
                    task_id: t.task_id,
                    lease_token: t.lease_token,
                    error: "given back".into(),
                    retryable: true,
                    release: true,
                })
                .await
                .unwrap();
                let path = root.join(&t.output).join(jobs::layout::model_file(&t.model));
                assert!(path.exists());
                return (e.id, path);
            }
        };
        let r = c
            .complete_task(crate::completion(s, "prep", &t, rows, &checksum, &temp))
            .await
            .unwrap()
            .into_inner();
        assert!(r.accepted, "{}", r.reason);
        if r.final_file != temp {
            std::fs::rename(root.join(&temp), root.join(&r.final_file)).unwrap();
        }
    }
}

/// Runs one in-process worker until no experiment is running; returns the experiment.
pub(crate) async fn work_until_idle(s: &crate::Server, id: &str) -> proto::Experiment {
    let config = worker::Config {
        chunk_every: worker::DEFAULT_CHUNK_EVERY,
        coordinator: s.url.clone(),
        results: s.results(),
        threads: 1,
        fit_threads: 0,
        worker_id: "w".into(),
        exit_when_done: true,
        experiment: None,
        grace: Duration::from_secs(5),
        auth: Default::default(),
        tls: None,
    };
    tokio::time::timeout(Duration::from_secs(60), worker::run(config, std::future::pending()))
        .await
        .expect("the worker stops once nothing runs")
        .unwrap();
    let mut c = client(&s.url).await;
    c.get_experiment(proto::GetExperimentRequest { id: id.into() })
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_model_fails_the_grid_clearly() {
    let mut s = start(Duration::from_secs(10)).await;
    let (id, model) = prepare_model(&s).await;
    std::fs::remove_file(&model).unwrap();
    let e = work_until_idle(&s, &id).await;
    assert_eq!(e.state, proto::ExperimentState::Failed as i32);
    assert!(
        e.error.contains("model artifact") && e.error.contains("is missing"),
        "{}",
        e.error
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_model_fails_the_grid_clearly_and_a_good_one_completes_it() {
    let mut s = start(Duration::from_secs(10)).await;
    let (id, model) = prepare_model(&s).await;
    let good = std::fs::read(&model).unwrap();
    let mut bad = good.clone();
    let n = bad.len() - 10;
    bad[n] = if bad[n] == b'1' { b'2' } else { b'1' };
    std::fs::write(&model, &bad).unwrap();
    let e = work_until_idle(&s, &id).await;
    assert_eq!(e.state, proto::ExperimentState::Failed as i32);
    assert!(
        e.error.contains("corrupted") && e.error.contains("cannot be retried"),
        "{}",
        e.error
    );
    // Put the right model back and resubmit: the grid resumes and completes.
    std::fs::write(&model, &good).unwrap();
    let mut c = client(&s.url).await;
    submit(&mut c, CLF_SPEC).await;
    let e = work_until_idle(&s, &id).await;
    assert_eq!(e.state, proto::ExperimentState::Succeeded as i32, "{}", e.error);
    let rows = read_rows(&s.results().join("clf"));
    assert_eq!(rows.len(), 10);
    assert!(rows.iter().all(|r| r.predictions_correct <= r.predictions));
    assert!(rows.iter().map(|r| r.predictions).sum::<u32>() > 0);
    s.stop().await;
}
