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
    for bad in [
        "out/x/games/part-00003.parquet",
        "out/x/games/../.p",
        "out/x/games/a/.p",
        "../x/games/.p",
    ] {
        assert!(!d.is_temp_partition(Stage::Games, bad), "{bad}");
    }
    assert_eq!(d.marker_file(Stage::Report, "").unwrap(), "out/x/report/report.json");
    assert_eq!(
        d.marker_file(Stage::Fit, "ab").unwrap(),
        "out/x/classifier/model-ab.json"
    );
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
