//! Results are never mixed or lost: output ownership, completions checked
//! against their files, partitions placed (or re-run) as soon as their
//! worker is gone, resubmissions that rebuild what is missing, progress and
//! error messages checked. Paths confined to the results root are tested in
//! `confinement`.

use std::time::Duration;

use proto::*;

use crate::jobs_e2e::work_until_idle;
use crate::{SPEC, client, complete, completion, fail, get, lease, lease_request, start, start_config, submit};

async fn wait_for(what: &str, mut f: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

fn games_done_tasks(e: &Experiment) -> u64 {
    e.stages.iter().find(|s| s.name == "games").unwrap().tasks_done
}

#[tokio::test]
async fn an_output_directory_belongs_to_one_experiment_whatever_its_state() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let a = submit(&mut c, SPEC).await;
    c.cancel_experiment(CancelExperimentRequest { id: a.id.clone() })
        .await
        .unwrap();
    let other = SPEC.replace("seed = 5", "seed = 6");
    let refused = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: other.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::AlreadyExists);
    let m = refused.message();
    assert!(
        m.contains(&a.id) && m.contains("cancelled") && m.contains("output = \"tiny\""),
        "{m}"
    );
    // The owner record names the experiment and its spec.
    let owner = jobs::layout::Owner::read(&s.results().join("tiny")).unwrap().unwrap();
    assert_eq!(owner.id, a.id);
    assert_eq!(jobs::Spec::from_toml(&owner.spec_toml).unwrap().id(), a.id);
    // The cancelled one resumes.
    let again = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!again.created);
    c.cancel_experiment(CancelExperimentRequest { id: a.id.clone() })
        .await
        .unwrap();
    // Deleting the directory frees it; then the first spec is the one refused.
    std::fs::remove_dir_all(s.results().join("tiny")).unwrap();
    let b = submit(&mut c, &other).await;
    assert_ne!(b.id, a.id);
    let refused = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(refused.message().contains(&b.id), "{}", refused.message());
    s.stop().await;
}

#[tokio::test]
async fn a_completion_whose_file_is_missing_is_refused_and_counts_against_its_worker() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    for (i, w) in ["w1", "w2", "w3"].iter().enumerate() {
        let t = c
            .lease_task(lease_request(&s, w))
            .await
            .unwrap()
            .into_inner()
            .task
            .unwrap();
        let temp = format!("{}/games/.part-{:05}.never-written.tmp", t.output, t.shard);
        let r = c
            .complete_task(completion(&s, w, &t, t.games, "x", &temp))
            .await
            .unwrap()
            .into_inner();
        assert!(!r.accepted);
        assert!(
            r.reason.contains("no such file") && r.reason.contains("--results"),
            "{}",
            r.reason
        );
        let now = get(&mut c, &e.id).await;
        let want = if i < 2 {
            ExperimentState::Running
        } else {
            ExperimentState::Failed
        };
        assert_eq!(now.state, want as i32, "after {} missing files: {}", i + 1, now.error);
    }
    let failed = get(&mut c, &e.id).await;
    assert!(
        failed.error.contains("3 workers") && failed.error.contains("no such file"),
        "{}",
        failed.error
    );
    // A file whose content differs from what the worker reported is refused too.
    let mut s2 = start(Duration::from_secs(30)).await;
    let mut c2 = client(&s2.url).await;
    submit(&mut c2, SPEC).await;
    let t = lease(&mut c2, &s2, "w").await.unwrap();
    let temp = format!("{}/games/.part-{:05}.tmp", t.output, t.shard);
    std::fs::write(s2.results().join(&temp), b"what the worker wrote").unwrap();
    let req = completion(&s2, "w", &t, t.games, "x", &temp);
    std::fs::write(s2.results().join(&temp), b"what the disk holds now").unwrap();
    let r = c2.complete_task(req).await.unwrap().into_inner();
    assert!(!r.accepted && r.reason.contains("SHA-256"), "{}", r.reason);
    s.stop().await;
    s2.stop().await;
}

#[tokio::test]
async fn a_left_partition_is_renamed_and_a_lost_one_runs_again_at_once() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let root = s.results();
    // Completed, never renamed (the worker died): the coordinator renames it.
    let t1 = lease(&mut c, &s, "w").await.unwrap();
    let temp1 = format!("{}/games/.part-{:05}.tmp", t1.output, t1.shard);
    std::fs::write(root.join(&temp1), b"partition one").unwrap();
    let r = c
        .complete_task(completion(&s, "w", &t1, t1.games, "x", &temp1))
        .await
        .unwrap()
        .into_inner();
    assert!(r.accepted, "{}", r.reason);
    let fin = root.join(&r.final_file);
    wait_for("the coordinator to finish the rename", async || fin.is_file()).await;
    assert!(!root.join(&temp1).exists());
    // Completed, then its file vanished before any rename: run again at once.
    let t2 = lease(&mut c, &s, "w").await.unwrap();
    let temp2 = format!("{}/games/.part-{:05}.tmp", t2.output, t2.shard);
    std::fs::write(root.join(&temp2), b"partition two").unwrap();
    let r = c
        .complete_task(completion(&s, "w", &t2, t2.games, "x", &temp2))
        .await
        .unwrap()
        .into_inner();
    assert!(r.accepted, "{}", r.reason);
    std::fs::remove_file(root.join(&temp2)).unwrap();
    wait_for("the lost partition's task to be pending again", async || {
        games_done_tasks(&get(&mut c, &e.id).await) == 1
    })
    .await;
    assert_eq!(lease(&mut c, &s, "w").await.unwrap().task_id, t2.task_id);
    // A placed partition deleted later: its task runs again too.
    std::fs::remove_file(&fin).unwrap();
    wait_for("the deleted partition's task to be pending again", async || {
        games_done_tasks(&get(&mut c, &e.id).await) == 0
    })
    .await;
    s.stop().await;
}

#[tokio::test]
async fn heartbeat_progress_beyond_the_task_and_long_multibyte_errors_are_handled() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w").await.unwrap();
    let hb = c
        .heartbeat(HeartbeatRequest {
            chunks: Vec::new(),
            worker_id: "w".into(),
            task_id: t.task_id.clone(),
            lease_token: t.lease_token.clone(),
            games_done: u64::MAX,
        })
        .await
        .unwrap_err();
    assert_eq!(hb.code(), tonic::Code::InvalidArgument);
    assert!(hb.message().contains("holds 20 games"), "{}", hb.message());
    assert_eq!(get(&mut c, &e.id).await.games_done, 0);
    // 10,000 bytes of two-byte characters: cut at 8192 on a character boundary.
    let long = "é".repeat(5000);
    assert!(fail(&mut c, "w", &t, &long, false).await.accepted);
    let failed = get(&mut c, &e.id).await;
    assert_eq!(failed.state, ExperimentState::Failed as i32);
    assert!(failed.error.contains("éé"), "{}", failed.error);
    let mut cut = long.clone();
    coordinator::truncate_chars(&mut cut, 8191);
    assert_eq!(cut.len(), 8190);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resubmitted_experiment_checks_its_files_and_rebuilds_what_is_missing() {
    let mut s = start(Duration::from_secs(10)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    assert_eq!(
        work_until_idle(&s, &e.id).await.state,
        ExperimentState::Succeeded as i32
    );
    let dir = s.results().join("tiny");
    let part = dir.join("games/part-00001.parquet");
    let before = crate::read_rows(&dir);
    std::fs::remove_file(&part).unwrap();
    let r = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!r.created);
    let again = r.experiment.unwrap();
    assert_eq!(
        again.state,
        ExperimentState::Running as i32,
        "a missing partition re-runs"
    );
    assert!(
        !dir.join("_SUCCESS").exists(),
        "the seal goes while the directory is incomplete"
    );
    assert_eq!(
        work_until_idle(&s, &e.id).await.state,
        ExperimentState::Succeeded as i32
    );
    assert!(part.is_file() && dir.join("_SUCCESS").is_file());
    let strip = |rows: Vec<jobs::GameRow>| -> Vec<jobs::GameRow> {
        rows.into_iter().map(|r| jobs::GameRow { elapsed_us: 0, ..r }).collect()
    };
    assert_eq!(strip(crate::read_rows(&dir)), strip(before.clone()));
    // Deleting the whole output directory is enough to start over.
    std::fs::remove_dir_all(&dir).unwrap();
    let r = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.experiment.unwrap().state, ExperimentState::Running as i32);
    assert_eq!(
        work_until_idle(&s, &e.id).await.state,
        ExperimentState::Succeeded as i32
    );
    assert!(dir.join("report/report.json").is_file() && dir.join("_manifest.json").is_file());
    assert_eq!(strip(crate::read_rows(&dir)), strip(before));
    s.stop().await;
}

#[tokio::test]
async fn a_restarted_run_gives_back_its_own_workers_leases_at_once() {
    let mut s = start(Duration::from_secs(300)).await;
    let mut c = client(&s.url).await;
    submit(&mut c, SPEC).await;
    let held = lease(&mut c, &s, "local-0").await.unwrap();
    let other = lease(&mut c, &s, "elsewhere").await.unwrap();
    s.stop().await;
    let dir = std::mem::replace(&mut s.dir, tempfile::tempdir().unwrap());
    let mut s2 = start_config(dir, |config| {
        config.lease = Duration::from_secs(300);
        config.release_leases_of = Some("local-".into());
    })
    .await;
    let mut c = client(&s2.url).await;
    // The in-process worker's lease is free again; the other worker's is not.
    assert_eq!(lease(&mut c, &s2, "local-1").await.unwrap().task_id, held.task_id);
    assert_ne!(lease(&mut c, &s2, "local-1").await.unwrap().task_id, other.task_id);
    s2.stop().await;
}

#[tokio::test]
async fn a_state_file_that_is_not_a_database_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("state.sqlite"), vec![b'x'; 4096]).unwrap();
    let config = coordinator::Config::new(dir.path().join("state.sqlite"), dir.path().join("results"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = coordinator::serve(listener, config, std::future::pending())
        .await
        .unwrap_err();
    let text = format!("{err}");
    assert!(text.contains("is not a muggins state database"), "{text}");
    assert_eq!(
        text.matches("not a database").count() + text.matches("not a muggins").count(),
        1,
        "{text}"
    );
    assert!(std::error::Error::source(&err).is_none(), "no repeated chain: {text}");
}

#[tokio::test]
async fn a_games_completion_without_its_moves_table_is_refused_when_the_spec_asks_for_one() {
    let spec = format!(
        "{}[output]\nmoves = true\n",
        SPEC.replace("name = \"tiny\"", "name = \"tiny-moves\"")
    );
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    submit(&mut c, &spec).await;
    let t = lease(&mut c, &s, "w").await.unwrap();
    let temp = format!("{}/games/.part-{:05}.tmp", t.output, t.shard);
    std::fs::create_dir_all(s.results().join(&t.output).join("games")).unwrap();
    std::fs::write(s.results().join(&temp), b"a games partition").unwrap();
    let r = c
        .complete_task(completion(&s, "w", &t, t.games, "x", &temp))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.accepted, "accepted without the moves table");
    assert!(
        r.reason.contains("per-move table") && r.reason.contains(&format!("moves/part-{:05}.parquet", t.shard)),
        "{}",
        r.reason
    );
    // With the table in place, the same completion goes through.
    let t = lease(&mut c, &s, "w2").await.unwrap();
    let moves = s.results().join(&t.output).join("moves");
    std::fs::create_dir_all(&moves).unwrap();
    std::fs::write(moves.join(format!("part-{:05}.parquet", t.shard)), b"moves").unwrap();
    let temp = format!("{}/games/.part-{:05}.b.tmp", t.output, t.shard);
    std::fs::write(s.results().join(&temp), b"a games partition").unwrap();
    let r = c
        .complete_task(completion(&s, "w2", &t, t.games, "x", &temp))
        .await
        .unwrap()
        .into_inner();
    assert!(r.accepted, "{}", r.reason);
    // Placed, then its moves file deleted: the shard's task runs again.
    let fin = s.results().join(&r.final_file);
    wait_for("the coordinator to place the partition", async || fin.is_file()).await;
    let e = get(&mut c, &t.experiment_id).await;
    assert_eq!(games_done_tasks(&e), 1);
    std::fs::remove_file(moves.join(format!("part-{:05}.parquet", t.shard))).unwrap();
    wait_for("the shard without its moves file to run again", async || {
        games_done_tasks(&get(&mut c, &t.experiment_id).await) == 0
    })
    .await;
    s.stop().await;
}

#[tokio::test]
async fn a_partition_that_cannot_be_put_in_place_counts_as_a_failure_and_ends_the_experiment() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let root = s.results();
    // A directory (not ours) at the partition's name: no rename can put the
    // file there. Each completion is accepted, its worker dies before the
    // rename, and the coordinator's rename fails.
    let mut shard = None;
    for (i, w) in ["w1", "w2", "w3"].iter().enumerate() {
        let t = lease(&mut c, &s, w).await.unwrap();
        assert_eq!(*shard.get_or_insert(t.shard), t.shard, "the same task runs again first");
        let blocker = root.join(format!("{}/games/part-{:05}.parquet/x", t.output, t.shard));
        std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
        std::fs::write(&blocker, b"not a partition").unwrap();
        let temp = format!("{}/games/.part-{:05}.{w}.tmp", t.output, t.shard);
        std::fs::write(root.join(&temp), b"a partition").unwrap();
        let r = c
            .complete_task(completion(&s, w, &t, t.games, "x", &temp))
            .await
            .unwrap()
            .into_inner();
        assert!(r.accepted, "{}", r.reason);
        let last = i == 2;
        wait_for("the failed placement to count", async || {
            let now = get(&mut c, &e.id).await;
            if last {
                now.state == ExperimentState::Failed as i32
            } else {
                games_done_tasks(&now) == 0 && now.state == ExperimentState::Running as i32
            }
        })
        .await;
        assert!(!root.join(&temp).exists(), "the unplaced temporary file is left");
        assert_eq!(std::fs::read(&blocker).unwrap(), b"not a partition");
    }
    let failed = get(&mut c, &e.id).await;
    assert!(
        failed.error.contains("3 workers") && failed.error.contains("part-00000.parquet"),
        "{}",
        failed.error
    );
    s.stop().await;
}

#[tokio::test]
async fn the_rate_never_goes_absurd_when_done_games_are_lost() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w").await.unwrap();
    let r = complete(&mut c, &s, &t, &t.lease_token).await;
    assert!(r.accepted, "{}", r.reason);
    let fin = s.results().join(&r.final_file);
    wait_for("the coordinator to place the partition", async || fin.is_file()).await;
    // A restarted coordinator's first sample of the rate has these games...
    s.stop().await;
    let dir = std::mem::replace(&mut s.dir, tempfile::tempdir().unwrap());
    let mut s = crate::start_in(dir, Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    assert_eq!(get(&mut c, &e.id).await.games_done, t.games);
    tokio::time::sleep(Duration::from_millis(600)).await;
    // ...then they are lost (their file deleted): the count goes back.
    std::fs::remove_file(&fin).unwrap();
    let mut seen = Vec::new();
    wait_for("the lost partition's task to run again", async || {
        let now = get(&mut c, &e.id).await;
        seen.push(now.games_per_second);
        now.games_done == 0
    })
    .await;
    for _ in 0..3 {
        seen.push(get(&mut c, &e.id).await.games_per_second);
    }
    assert!(seen.iter().all(|r| r.is_finite() && (0.0..1e4).contains(r)), "{seen:?}");
    s.stop().await;
}
