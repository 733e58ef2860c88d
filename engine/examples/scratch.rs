use engine::*;
fn main() {
    let rules = Rules::thesis();
    for s in [0u64, 3, 3333] {
        let d = Deal::from_index(&rules, s).unwrap();
        println!("{s}: {}", d.describe(&rules));
        for k in EngineKind::ALL {
            let mut se = Searcher::new(rules.clone(), SearchConfig::default(), LocalTable::new());
            let v = se.value_of(&Position::start(&rules, &d), k);
            print!(" {k}={v:.6}");
        }
        println!();
    }
    let t = std::time::Instant::now();
    for k in EngineKind::ALL {
    let mut se = Searcher::new(rules.clone(), SearchConfig::default(), LocalTable::new());
    let mut sum = 0.0;
    for s in 0..rules.starting_states() {
        let d = Deal::from_index(&rules, s).unwrap();
        sum += se.value_of(&Position::start(&rules, &d), k);
    }
    println!("{k} mean {} nodes {} table {} t {:?}", sum / 4200.0, se.nodes(), se.store().len(), t.elapsed());
    }
}
