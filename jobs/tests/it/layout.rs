//! The one owner of an experiment directory's names and of path confinement.

use jobs::layout::{ExperimentDir, Stage, confine};

#[test]
fn stages_and_task_ids_round_trip() {
    for s in Stage::ALL {
        assert_eq!(Stage::parse(s.name()), Some(s));
        assert_eq!(Stage::of_task_id(&s.task_id(12)), Some(s));
    }
    assert_eq!(Stage::Games.task_id(12), "games-00012");
    assert_eq!(Stage::parse("grid"), None);
    assert!(Stage::ALL.windows(2).all(|w| w[0] < w[1]), "in the order they run");
    // Cross-checks and their tie-breaks are check tasks too.
    let check = Stage::check_task_id(12, 60480);
    assert_eq!(check, "check-00012-60480");
    assert_eq!(Stage::of_task_id(&check), Some(Stage::Check));
    let tiebreak = Stage::tiebreak_task_id(&check);
    assert_eq!(tiebreak, "check-00012-60480-tiebreak");
    assert_eq!(Stage::of_task_id(&tiebreak), Some(Stage::Check));
    assert_eq!(Stage::of_task_id("nothing"), None);
}

#[test]
fn file_names_parse_back() {
    assert!(jobs::layout::is_part_file(&jobs::part_file(7)));
    assert!(!jobs::layout::is_part_file(".part-00007.ab.tmp"));
    let model = jobs::layout::model_file(&"ab".repeat(32));
    let name = model.rsplit('/').next().unwrap();
    assert_eq!(jobs::layout::model_hash_of(name), Some("ab".repeat(32).as_str()));
    assert_eq!(jobs::layout::model_hash_of("report.json"), None);
}

#[test]
fn an_experiment_directory_names_every_file() {
    let d = ExperimentDir::new("out/x");
    assert_eq!(d.partition(Stage::Games, 3).unwrap(), "out/x/games/part-00003.parquet");
    assert_eq!(
        d.partition(Stage::Samples, 3).unwrap(),
        "out/x/classifier/samples/part-00003.parquet"
    );
    assert_eq!(d.partition(Stage::Report, 0), None);
    let temp = d.temp_partition(Stage::Games, 3, "abc").unwrap();
    assert_eq!(temp, "out/x/games/.part-00003.abc.tmp");
    assert!(d.is_temp_partition(Stage::Games, &temp));
    assert!(!d.is_temp_partition(Stage::Samples, &temp));
    assert!(d.is_temp_partition_of(Stage::Games, 3, &temp));
    assert!(!d.is_temp_partition_of(Stage::Games, 4, &temp));
    assert!(!d.is_temp_partition_of(Stage::Games, 3, "out/x/games/.part-000033.t.tmp"));
    assert!(!d.is_temp_partition_of(Stage::Games, 3, "out/x/games/.other-00003.t.tmp"));
    for bad in [
        "out/x/games/part-00003.parquet",
        "out/x/games/../.p",
        "out/x/games/a/.p",
        "../x/games/.p",
    ] {
        assert!(!d.is_temp_partition(Stage::Games, bad), "{bad}");
    }
    assert_eq!(d.marker_file(Stage::Report, 0, "").unwrap(), "out/x/report/report.json");
    assert_eq!(
        d.marker_file(Stage::Fit, 0, "ab").unwrap(),
        "out/x/classifier/model-ab.json"
    );
    // A training run's tasks: generation 3's partition 12, and its record.
    let shard = jobs::layout::self_play_shard(3, 12);
    assert_eq!(jobs::layout::self_play_of(shard), (3, 12));
    assert_eq!(Stage::SelfPlay.task_id(shard), "selfplay-003-00012");
    assert_eq!(Stage::of_task_id("selfplay-003-00012"), Some(Stage::SelfPlay));
    assert_eq!(
        d.marker_file(Stage::SelfPlay, shard, "ab").unwrap(),
        "out/x/gen-003/selfplay/part-00012.parquet"
    );
    assert_eq!(
        d.marker_file(Stage::Generation, 3, "ab").unwrap(),
        "out/x/gen-003/generation.json"
    );
    assert_eq!(Stage::Generation.task_id(3), "generation-00003");
}

#[test]
fn confinement_resolves_symbolic_links() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("exp")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("exp/games")).unwrap();
    std::os::unix::fs::symlink(root.path().join("exp"), root.path().join("inside")).unwrap();
    assert!(confine(root.path(), "exp/ok/new.parquet").is_ok());
    assert!(
        confine(root.path(), "inside/ok").is_ok(),
        "a link that stays inside is fine"
    );
    let e = confine(root.path(), "exp/games/.part-00000.tmp")
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside the results root"), "{e}");
    std::os::unix::fs::symlink("/nonexistent/dir", root.path().join("dangling")).unwrap();
    assert!(confine(root.path(), "dangling/x").is_err());
    for bad in ["", "/abs", "a/../b", "./a"] {
        assert!(confine(root.path(), bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_name_to_put_a_file_at_is_confined_by_its_directory_not_by_a_link_there() {
    use jobs::layout::{confine_name, is_plain_file};
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let precious = outside.path().join("precious");
    std::fs::write(&precious, b"precious").unwrap();
    std::fs::create_dir_all(root.path().join("exp/games")).unwrap();
    let link = root.path().join("exp/games/part-00000.parquet");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    // `confine` refuses the link (reading through it leaves the root)...
    assert!(confine(root.path(), "exp/games/part-00000.parquet").is_err());
    // ...but it is a fine name to rename a file to: the rename replaces the
    // link itself.
    let at = confine_name(root.path(), "exp/games/part-00000.parquet").unwrap();
    assert_eq!(at, link);
    assert!(!is_plain_file(&at), "a link is not a file at the name");
    let tmp = root.path().join("exp/games/.part-00000.t.tmp");
    std::fs::write(&tmp, b"rows").unwrap();
    jobs::durable_rename(&tmp, &at).unwrap();
    assert!(is_plain_file(&at));
    assert_eq!(std::fs::read(&at).unwrap(), b"rows");
    assert_eq!(std::fs::read(&precious).unwrap(), b"precious", "never written through");
    // Its directory is still confined, and the name must be plain.
    std::os::unix::fs::symlink(outside.path(), root.path().join("exp/out")).unwrap();
    let e = confine_name(root.path(), "exp/out/part-00000.parquet")
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside the results root"), "{e}");
    for bad in ["", "/abs", "a/../b", "./a", "exp/.."] {
        assert!(confine_name(root.path(), bad).is_err(), "{bad:?}");
    }
    assert_eq!(confine_name(root.path(), "top").unwrap(), root.path().join("top"));
}

#[test]
fn files_under_a_directory_are_listed_in_order_without_following_links() {
    use jobs::layout::files_under;
    let root = tempfile::tempdir().unwrap();
    let d = root.path().join("out");
    assert_eq!(files_under(&d, 3).unwrap(), (vec![], false), "a missing directory");
    std::fs::create_dir_all(d.join("games/empty")).unwrap();
    assert_eq!(files_under(&d, 3).unwrap(), (vec![], false), "only directories");
    std::fs::write(d.join("games/part-00007.parquet"), b"text").unwrap();
    std::fs::write(d.join("README.txt"), b"read me").unwrap();
    std::os::unix::fs::symlink(root.path(), d.join("games/loop")).unwrap();
    let (found, more) = files_under(&d, 3).unwrap();
    let found: Vec<_> = found.iter().map(|p| p.to_str().unwrap().to_string()).collect();
    assert_eq!(found, ["README.txt", "games/loop", "games/part-00007.parquet"]);
    assert!(!more);
    let (found, more) = files_under(&d, 2).unwrap();
    assert_eq!(found.len(), 2);
    assert!(more);
}

/// Two writers of one file at once (a worker whose lease expired and the
/// one that took its task over): a reader only ever sees a whole copy of
/// one of them, never a mix or a cut (before, both wrote through the same
/// temporary name, and one could rename the other's half-written file).
#[test]
fn two_writers_of_one_file_each_write_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gen-001/selfplay/part-00000.parquet");
    let size = 1 << 18;
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = [b'a', b'b']
            .into_iter()
            .map(|fill| {
                let (path, bytes) = (&path, vec![fill; size]);
                s.spawn(move || {
                    for _ in 0..100 {
                        jobs::layout::write_atomic(path, &bytes).unwrap();
                    }
                })
            })
            .collect();
        let reader = s.spawn(|| {
            let mut seen = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(b) = std::fs::read(&path) {
                    assert_eq!(b.len(), size, "a cut copy");
                    assert!(b.iter().all(|&c| c == b[0]), "a mixed copy");
                    seen += 1;
                }
            }
            seen
        });
        let wrote: Vec<_> = writers.into_iter().map(|w| w.join()).collect();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let read = reader.join();
        assert!(wrote.iter().all(Result::is_ok), "a writer failed");
        assert!(read.expect("every copy read whole") > 0);
    });
    let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
    assert_eq!(left.len(), 1, "no temporary is left behind");
}
