use engine::{Blocked, Lead, Rules, RulesConfig};

fn check_err(config: RulesConfig, field: &str, value: &str, reason_part: &str) {
    let err = Rules::new(config).expect_err("the rules should be refused");
    assert_eq!(err.field, field, "{err}");
    assert_eq!(err.value, value, "{err}");
    let text = err.to_string();
    assert!(text.contains(&format!("rules.{field} = {value}")), "{text}");
    assert!(text.contains(reason_part), "{text}");
}

#[test]
fn bad_rules_name_the_field_and_value() {
    let d = RulesConfig::default();
    check_err(RulesConfig { set: 0, ..d }, "set", "0", "double-1 to double-9");
    check_err(RulesConfig { set: 10, ..d }, "set", "10", "double-1 to double-9");
    check_err(
        RulesConfig {
            hand: 0,
            boneyard: 10,
            ..d
        },
        "hand",
        "0",
        "at least one tile",
    );
    check_err(
        RulesConfig { boneyard: 5, ..d },
        "boneyard",
        "5",
        "must equal the 10 tiles of a double-3 set, got 11",
    );
    check_err(RulesConfig { set: 6, ..d }, "boneyard", "4", "28 tiles of a double-6");
}

#[test]
fn every_set_from_double_1_to_double_9_is_accepted() {
    for set in 1..=9u8 {
        let l = (set as u32 + 1) * (set as u32 + 2) / 2;
        for hand in 1..=(l / 2) as u8 {
            let boneyard = (l - 2 * hand as u32) as u8;
            let r = Rules::new(RulesConfig {
                set,
                hand,
                boneyard,
                ..RulesConfig::default()
            });
            match r {
                Ok(r) => {
                    assert_eq!(r.tile_count() as u32, l);
                    assert!(r.starting_states() >= 1);
                }
                // Only the count of starting states may overflow, and only for big sets.
                Err(e) => assert!(set >= 8 && e.reason.contains("64 bits"), "{e}"),
            }
        }
    }
}

#[test]
fn lead_and_blocked_parse_and_refuse() {
    assert_eq!("highest-double".parse::<Lead>().unwrap(), Lead::HighestDouble);
    assert_eq!("player".parse::<Lead>().unwrap(), Lead::Player);
    assert_eq!("target".parse::<Lead>().unwrap(), Lead::Target);
    assert_eq!("none".parse::<Blocked>().unwrap(), Blocked::None);
    let e = "lowest".parse::<Lead>().unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid rules.lead = lowest: expected one of highest-double, player, target"
    );
    let e = "half".parse::<Blocked>().unwrap_err().to_string();
    assert!(e.contains("rules.blocked = half"), "{e}");
}

#[test]
fn tile_order_is_canonical() {
    let r = Rules::thesis();
    let names: Vec<String> = (0..r.tile_count()).map(|t| r.tile_name(t)).collect();
    assert_eq!(names, ["00", "01", "02", "03", "11", "12", "13", "22", "23", "33"]);
    assert_eq!(r.starting_states(), 4200);
}
