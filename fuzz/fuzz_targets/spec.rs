//! Fuzzes the experiment-spec parser: any input must give a spec or a
//! `SpecError` naming a key, never a panic, and an accepted spec must be
//! consistent with itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match jobs::Spec::from_toml(text) {
        Ok(spec) => {
            assert!(spec.games() <= jobs::MAX_GAMES);
            assert!(!jobs::shards(&spec).is_empty());
            // The canonical form hashes the same every time.
            assert_eq!(spec.hash(), spec.hash());
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
