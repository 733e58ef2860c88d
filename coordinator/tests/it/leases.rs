//! Leases and their tokens through the RPCs: stale completions, poisoned
//! tasks, non-retryable failures and releases, cancellation, bad requests,
//! and state that survives a restart.

use std::time::Duration;

use proto::*;

use crate::{SPEC, client, complete, completion, fail, get, lease, lease_request, start, start_in, submit};

#[tokio::test]
async fn a_stale_completion_is_refused() {
    let mut s = start(Duration::from_millis(300)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    assert_eq!(e.games_total, 80);
    let a = lease(&mut c, &s, "worker-a").await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    // The lease expired: the same task goes to another worker with a new token.
    let b = lease(&mut c, &s, "worker-b").await.unwrap();
    assert_eq!(a.task_id, b.task_id);
    assert_ne!(a.lease_token, b.lease_token);
    let late = complete(&mut c, &s, &a, &a.lease_token).await;
    assert!(!late.accepted);
    assert!(late.reason.contains("stale lease"), "{}", late.reason);
    let hb = c
        .heartbeat(HeartbeatRequest {
            chunks: Vec::new(),
            worker_id: "worker-a".into(),
            task_id: a.task_id.clone(),
            lease_token: a.lease_token.clone(),
            games_done: 3,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!hb.lease_valid);
    // A task nobody leased with this token cannot be completed either.
    let never = complete(&mut c, &s, &b, "0123456789abcdef").await;
    assert!(!never.accepted);
    let good = complete(&mut c, &s, &b, &b.lease_token).await;
    assert!(good.accepted, "{}", good.reason);
    assert_eq!(
        good.final_file,
        format!("{}/games/part-{:05}.parquet", b.output, b.shard)
    );
    // A second completion with the same token is stale too.
    assert!(!complete(&mut c, &s, &b, &b.lease_token).await.accepted);
    s.stop().await;
}

#[tokio::test]
async fn a_poisoned_task_fails_the_experiment_after_three_workers() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    for (i, w) in ["w1", "w2", "w3"].iter().enumerate() {
        let t = lease(&mut c, &s, w).await.unwrap();
        assert_eq!(t.task_id, "games-00000", "the failed task is retried first");
        assert!(fail(&mut c, w, &t, "disk on fire", true).await.accepted);
        let now = get(&mut c, &e.id).await;
        let want = if i < 2 {
            ExperimentState::Running
        } else {
            ExperimentState::Failed
        };
        assert_eq!(now.state, want as i32, "after failure {}", i + 1);
    }
    let failed = get(&mut c, &e.id).await;
    assert!(failed.error.contains("games-00000"), "{}", failed.error);
    assert!(failed.error.contains("3 workers"), "{}", failed.error);
    assert!(failed.error.contains("disk on fire"), "{}", failed.error);
    assert!(
        lease(&mut c, &s, "w4").await.is_none(),
        "a failed experiment dispatches nothing"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_non_retryable_failure_fails_at_once_and_a_release_is_no_failure() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w1").await.unwrap();
    let r = c
        .fail_task(FailTaskRequest {
            worker_id: "w1".into(),
            task_id: t.task_id.clone(),
            lease_token: t.lease_token.clone(),
            error: "shutting down".into(),
            retryable: true,
            release: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(r.accepted);
    let again = lease(&mut c, &s, "w2").await.unwrap();
    assert_eq!(again.task_id, t.task_id);
    assert!(fail(&mut c, "w2", &again, "bad spec", false).await.accepted);
    let now = get(&mut c, &e.id).await;
    assert_eq!(now.state, ExperimentState::Failed as i32);
    assert!(now.error.contains("cannot be retried: bad spec"), "{}", now.error);
    // Failing with a stale token is refused.
    assert!(!fail(&mut c, "w2", &again, "x", true).await.accepted);
    // Resubmitting the same spec resumes it.
    let r = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!r.created);
    assert_eq!(r.experiment.unwrap().state, ExperimentState::Running as i32);
    s.stop().await;
}

#[tokio::test]
async fn cancel_stops_dispatch_and_tells_workers() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w1").await.unwrap();
    let cancelled = c
        .cancel_experiment(CancelExperimentRequest { id: e.id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(cancelled.state, ExperimentState::Cancelled as i32);
    let hb = c
        .heartbeat(HeartbeatRequest {
            chunks: Vec::new(),
            worker_id: "w1".into(),
            task_id: t.task_id.clone(),
            lease_token: t.lease_token.clone(),
            games_done: 1,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(hb.cancel);
    assert!(lease(&mut c, &s, "w2").await.is_none());
    assert!(!complete(&mut c, &s, &t, &t.lease_token).await.accepted);
    s.stop().await;
}

#[tokio::test]
async fn bad_requests_get_clear_errors_and_the_server_keeps_serving() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let bad = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.replace("repeats = 1", "repeats = 0"),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    assert!(bad.message().contains("grid.repeats = 0"), "{}", bad.message());
    let missing = c
        .get_experiment(GetExperimentRequest { id: "nope".into() })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    assert!(missing.message().contains("\"nope\""));
    let no_worker = c.lease_task(lease_request(&s, "")).await.unwrap_err();
    assert_eq!(no_worker.code(), tonic::Code::InvalidArgument);
    assert!(no_worker.message().contains("worker_id is required"));
    let e = submit(&mut c, SPEC).await;
    let same = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!same.created);
    assert_eq!(same.experiment.unwrap().id, e.id);
    let clash = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.replace("seed = 5", "seed = 6"),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(clash.code(), tonic::Code::AlreadyExists);
    assert!(clash.message().contains("output = \"tiny\""), "{}", clash.message());
    // A completion naming a file outside the experiment's games directory is refused.
    let t = lease(&mut c, &s, "w").await.unwrap();
    let r = c
        .complete_task(completion(&s, "w", &t, t.games, "x", "../../etc/passwd"))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.accepted && r.reason.contains("hidden file"), "{}", r.reason);
    let r = complete(&mut c, &s, &Task { games: 3, ..t.clone() }, &t.lease_token).await;
    assert!(!r.accepted && r.reason.contains("20 games but 3 rows"), "{}", r.reason);
    assert_eq!(
        c.list_experiments(ListExperimentsRequest {})
            .await
            .unwrap()
            .into_inner()
            .experiments
            .len(),
        1
    );
    s.stop().await;
}

#[tokio::test]
async fn state_survives_a_restart_in_a_wal_sqlite_file() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w1").await.unwrap();
    s.stop().await;
    let state = s.state();
    assert_eq!(coordinator::Store::open(&state).unwrap().journal_mode().unwrap(), "wal");
    let dir = std::mem::replace(&mut s.dir, tempfile::tempdir().unwrap());
    let mut s2 = start_in(dir, Duration::from_secs(30)).await;
    let mut c = client(&s2.url).await;
    let again = get(&mut c, &e.id).await;
    assert_eq!(again.state, ExperimentState::Running as i32);
    // The lease taken before the restart still holds: its worker may complete.
    let next = lease(&mut c, &s2, "w2").await.unwrap();
    assert_ne!(next.task_id, t.task_id);
    assert!(complete(&mut c, &s2, &t, &t.lease_token).await.accepted);
    s2.stop().await;
}

#[tokio::test]
async fn a_lease_for_one_experiment_takes_only_its_tasks() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let first = submit(&mut c, SPEC).await;
    let second = submit(&mut c, &SPEC.replace("name = \"tiny\"", "name = \"other\"")).await;
    assert_ne!(first.id, second.id);
    let only = |id: &str| LeaseTaskRequest {
        experiment_id: id.into(),
        ..lease_request(&s, "w-only")
    };
    // Without the filter the older experiment comes first; with it, the
    // named one, even though the older one still has pending tasks.
    let any = lease(&mut c, &s, "w-any").await.unwrap();
    assert_eq!(any.experiment_id, first.id);
    let r = c.lease_task(only(&second.id)).await.unwrap().into_inner();
    let t = r.task.expect("the named experiment has a task");
    assert_eq!(t.experiment_id, second.id);
    assert!(!r.idle);
    // An experiment that is not running has nothing to lease, and a worker
    // bound to it is idle while the other experiment still runs.
    c.cancel_experiment(CancelExperimentRequest { id: second.id.clone() })
        .await
        .unwrap();
    let r = c.lease_task(only(&second.id)).await.unwrap().into_inner();
    assert!(r.task.is_none() && r.idle, "{r:?}");
    let r = c.lease_task(only("nope-000000000000")).await.unwrap().into_inner();
    assert!(r.task.is_none() && r.idle, "{r:?}");
    let r = c.lease_task(lease_request(&s, "w-any2")).await.unwrap().into_inner();
    assert_eq!(r.task.expect("the first still has tasks").experiment_id, first.id);
    // The filter is bounded like every id.
    let long = c.lease_task(only(&"x".repeat(300))).await.unwrap_err();
    assert_eq!(long.code(), tonic::Code::InvalidArgument);
    assert!(long.message().contains("experiment_id"), "{}", long.message());
    s.stop().await;
}
