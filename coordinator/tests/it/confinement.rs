//! Paths confined to the results root: a worker that does not see the root
//! is refused with both paths, and symbolic links out of it are refused at
//! submission and at completion, counted against their workers, with
//! refused temporary files removed and files not ours left alone.

use std::time::Duration;

use proto::*;

use crate::{SPEC, client, completion, get, lease, lease_request, start, start_config, submit};

#[tokio::test]
async fn a_worker_that_does_not_see_the_results_root_is_refused_with_both_paths() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    submit(&mut c, SPEC).await;
    let wrong = tempfile::tempdir().unwrap();
    let mut req = lease_request(&s, "lost");
    req.results_marker = String::new();
    req.results_root = wrong.path().display().to_string();
    let e = c.lease_task(req).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition);
    let ours = s.results().canonicalize().unwrap();
    for part in [wrong.path().to_str().unwrap(), ours.to_str().unwrap(), "--results"] {
        assert!(e.message().contains(part), "{} lacks {part}", e.message());
    }
    // A real worker started on the wrong directory stops with that error.
    let config = worker::Config {
        chunk_every: worker::DEFAULT_CHUNK_EVERY,
        coordinator: s.url.clone(),
        results: wrong.path().to_path_buf(),
        threads: 1,
        fit_threads: 0,
        worker_id: "lost".into(),
        exit_when_done: false,
        experiment: None,
        grace: Duration::from_secs(1),
        auth: Default::default(),
        tls: None,
    };
    let r = tokio::time::timeout(Duration::from_secs(20), worker::run(config, std::future::pending()))
        .await
        .expect("the worker stops instead of looping");
    let err = r.unwrap_err().to_string();
    assert!(
        err.contains(ours.to_str().unwrap()) && err.contains("--results"),
        "{err}"
    );
    s.stop().await;
}

#[tokio::test]
async fn paths_through_symbolic_links_out_of_the_results_root_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("results/tiny")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("results/tiny/games")).unwrap();
    let mut s = start_config(dir, |_| {}).await;
    let mut c = client(&s.url).await;
    let e = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("outside the results root"), "{}", e.message());
    // A games directory swapped for a link after submission: the completion is refused.
    std::fs::remove_file(s.results().join("tiny/games")).unwrap();
    submit(&mut c, SPEC).await;
    let t = lease(&mut c, &s, "w").await.unwrap();
    std::fs::remove_dir(s.results().join("tiny/games")).unwrap();
    std::os::unix::fs::symlink(outside.path(), s.results().join("tiny/games")).unwrap();
    let temp = format!("{}/games/.part-{:05}.tmp", t.output, t.shard);
    std::fs::write(outside.path().join(format!(".part-{:05}.tmp", t.shard)), b"x").unwrap();
    let r = c
        .complete_task(completion(&s, "w", &t, t.games, "x", &temp))
        .await
        .unwrap()
        .into_inner();
    assert!(
        !r.accepted && r.reason.contains("outside the results root"),
        "{}",
        r.reason
    );
    s.stop().await;
}

#[tokio::test]
async fn a_completion_through_a_link_out_of_the_root_counts_as_a_failure_and_its_temp_file_goes() {
    let outside = tempfile::tempdir().unwrap();
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let root = s.results();
    // A refused completion's temporary file is removed by the coordinator
    // (a row count that is not the task's; a file not what was reported).
    let t = lease(&mut c, &s, "w1").await.unwrap();
    let temp = format!("{}/games/.part-{:05}.rows.tmp", t.output, t.shard);
    std::fs::write(root.join(&temp), b"a partition").unwrap();
    let r = c
        .complete_task(completion(&s, "w1", &t, t.games + 1, "x", &temp))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.accepted && r.reason.contains("rows"), "{}", r.reason);
    assert!(!root.join(&temp).exists(), "the refused completion's file is left");
    // Another shard's file, named by a refused completion, is not its to remove.
    let other = format!("{}/games/.part-{:05}.rows.tmp", t.output, t.shard + 1);
    std::fs::write(root.join(&other), b"another shard's partition").unwrap();
    let r = c
        .complete_task(completion(&s, "w1", &t, t.games + 1, "x", &other))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.accepted);
    assert!(root.join(&other).is_file(), "another shard's file was removed");
    let temp = format!("{}/games/.part-{:05}.sha.tmp", t.output, t.shard);
    std::fs::write(root.join(&temp), b"what the worker wrote").unwrap();
    let req = completion(&s, "w1", &t, t.games, "x", &temp);
    std::fs::write(root.join(&temp), b"what the disk holds now").unwrap();
    let r = c.complete_task(req).await.unwrap().into_inner();
    assert!(!r.accepted && r.reason.contains("SHA-256"), "{}", r.reason);
    assert!(!root.join(&temp).exists(), "the refused completion's file is left");
    // The games directory swapped for a link out of the root after the
    // lease: each completion through it is refused, counts against its
    // worker, and the third worker's ends the experiment; the file out
    // there is never touched.
    std::fs::remove_dir_all(root.join("tiny/games")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("tiny/games")).unwrap();
    for (i, w) in ["w1", "w2", "w3"].iter().enumerate() {
        let t = lease(&mut c, &s, w).await.unwrap();
        let name = format!(".part-{:05}.{w}.tmp", t.shard);
        std::fs::write(outside.path().join(&name), b"x").unwrap();
        let temp = format!("{}/games/{name}", t.output);
        let r = c
            .complete_task(completion(&s, w, &t, t.games, "x", &temp))
            .await
            .unwrap()
            .into_inner();
        assert!(
            !r.accepted && r.reason.contains("outside the results root"),
            "{}",
            r.reason
        );
        assert_eq!(std::fs::read(outside.path().join(&name)).unwrap(), b"x");
        let now = get(&mut c, &e.id).await;
        let want = if i < 2 {
            ExperimentState::Running
        } else {
            ExperimentState::Failed
        };
        assert_eq!(now.state, want as i32, "after {} refusals: {}", i + 1, now.error);
    }
    let failed = get(&mut c, &e.id).await;
    assert!(
        failed.error.contains("3 workers") && failed.error.contains("outside the results root"),
        "{}",
        failed.error
    );
    s.stop().await;
}
