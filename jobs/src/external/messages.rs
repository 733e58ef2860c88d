//! The agent protocol's messages (docs/agents.md), one type a direction:
//! [`ToAgent`] what muggins writes, [`FromAgent`] what it reads. Each is
//! one JSON object a line, its `type` the variant's name.
// Each field is a field of the protocol, documented in docs/agents.md's
// tables (which a test holds to these types).
#![allow(missing_docs)]

use serde::{Deserialize, Serialize};

use full::{FullRules, Preset};

/// The protocol's version (docs/agents.md): 2, where each `decide` has an
/// `id` its `action` echoes; a program that answers `hello` with 1 is
/// still played, without ids.
pub const PROTOCOL: u64 = 2;
/// The versions muggins plays.
pub const PROTOCOLS: [u64; 2] = [1, 2];
/// Seeds an agent is given stay below 2^53, so that every JSON reader
/// (JavaScript's numbers are doubles) reads them exactly.
pub const SEED_BITS: u32 = 53;

/// A message to the program.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ToAgent<'a> {
    /// The greeting: muggins' version and those it plays.
    Hello { protocol: u64, protocols: [u64; 2] },
    /// A game begins.
    Game(&'a Game),
    /// A seat of the program's is to play.
    Decide(Decide<'a>),
    /// The game ended.
    End(End),
    /// The process is to exit.
    Quit,
}

/// The `game` message: the game, its rules, the seats the program plays,
/// a seed for its own randomness.
#[derive(Clone, Debug, Serialize)]
pub struct Game {
    pub game: &'static str,
    pub rules: GameRules,
    pub seats: Vec<u8>,
    pub seed: u64,
}

/// A game's rules as the `game` message gives them.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum GameRules {
    /// All Fives: its knobs.
    Fives {
        set: u8,
        seats: u8,
        hand: u8,
        teams: bool,
        keep: u8,
        round: bool,
        blocked: &'static str,
        lead: &'static str,
        to: u32,
    },
    /// Block and team: OpenSpiel's fixed values.
    Open { set: u8, seats: u8, hand: u8, teams: bool },
}

impl Game {
    /// The game of `rules` (an All-Fives match to `to`, 0: one hand) with
    /// the program deciding `seats`; `seed` is cut to [`SEED_BITS`].
    pub fn new(rules: &FullRules, to: u32, seats: &[u8], seed: u64) -> Game {
        let c = rules.config();
        let game_rules = match rules.kind() {
            Preset::AllFives => GameRules::Fives {
                set: c.set,
                seats: c.seats,
                hand: c.hand,
                teams: c.teams,
                keep: c.keep,
                round: c.round,
                blocked: match c.blocked {
                    full::FivesBlocked::Opponents => "opponents",
                    full::FivesBlocked::Difference => "difference",
                },
                lead: match c.lead {
                    full::FivesLead::Winner => "winner",
                    full::FivesLead::HighestDouble => "highest-double",
                },
                to,
            },
            Preset::Block | Preset::Team => GameRules::Open {
                set: c.set,
                seats: c.seats,
                hand: c.hand,
                teams: c.teams,
            },
        };
        Game {
            game: rules.kind().name(),
            rules: game_rules,
            seats: seats.to_vec(),
            seed: seed & ((1u64 << SEED_BITS) - 1),
        }
    }

    /// The game's number of seats and of sides.
    pub fn counts(&self) -> (usize, usize) {
        let (seats, teams) = match self.rules {
            GameRules::Fives { seats, teams, .. } | GameRules::Open { seats, teams, .. } => (seats as usize, teams),
        };
        (seats, if teams { 2 } else { seats })
    }
}

/// The `decide` message: only what the seat may know.
#[derive(Clone, Debug, Serialize)]
pub struct Decide<'a> {
    pub id: u64,
    pub seat: u8,
    /// The hand of the match, 1 first.
    pub hand: u32,
    pub tiles: Vec<u8>,
    pub history: &'a [u32],
    /// One per seat.
    pub sizes: &'a [u8],
    pub boneyard: u8,
    /// One per side.
    pub points: &'a [u32],
    /// One per side.
    pub totals: &'a [u32],
    pub legal: &'a [u32],
}

/// How a game ended, as the `end` message says it.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum End {
    /// Each side's points, the winning side (`None`: a tie) and whether
    /// it is a tie.
    Result {
        points: Vec<u32>,
        winner: Option<u8>,
        tie: bool,
    },
    /// A seat forfeited.
    Forfeit { forfeit: ForfeitNote },
    /// Ended without a result (the task failed).
    Abandoned {},
}

/// A forfeit as the `end` message names it.
#[derive(Clone, Debug, Serialize)]
pub struct ForfeitNote {
    pub seat: u8,
    /// One of `illegal`, `time`, `protocol`, `crash`.
    pub reason: String,
    /// Free text, for logs.
    pub detail: String,
}

/// A message from the program.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FromAgent {
    /// Its greeting: the version it speaks, a name, the games it plays.
    Hello {
        protocol: Option<u64>,
        name: Option<String>,
        #[serde(default)]
        games: Vec<String>,
    },
    /// Its answer to a `decide`.
    Action { id: Option<u64>, action: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The lines of docs/agents.md's session that `who` writes, as JSON.
    fn session(who: &str) -> Vec<Value> {
        let doc = include_str!("../../../docs/agents.md");
        let block = doc.split("## A session").nth(1).unwrap().split("```").nth(1).unwrap();
        // A message may go on over the next, indented, lines.
        let mut out = Vec::new();
        let mut open: Option<String> = None;
        for line in block.lines() {
            if let Some(rest) = line.strip_prefix(&format!("{who:<7} -> ")) {
                out.extend(open.take().and_then(|m| serde_json::from_str::<Value>(&m).ok()));
                open = Some(rest.trim().to_string());
            } else if let Some(m) = open.as_mut().filter(|_| line.starts_with("            ")) {
                m.push(' ');
                m.push_str(line.trim());
            } else if let Some(m) = open.take() {
                out.extend(serde_json::from_str::<Value>(&m).ok());
            }
        }
        out.extend(open.and_then(|m| serde_json::from_str(&m).ok()));
        out
    }

    #[test]
    fn the_docs_session_is_what_these_types_write_and_read() {
        let ours = session("muggins");
        let hello = serde_json::to_value(ToAgent::Hello {
            protocol: PROTOCOL,
            protocols: PROTOCOLS,
        })
        .unwrap();
        assert_eq!(ours[0], hello);
        let rules = FullRules::preset(Preset::AllFives);
        let game = Game::new(&rules, 0, &[1], 8122);
        assert_eq!(ours[1], serde_json::to_value(ToAgent::Game(&game)).unwrap());
        let decide = Decide {
            id: 1,
            seat: 1,
            hand: 1,
            tiles: vec![3, 9, 14, 20, 22, 25, 27],
            history: &[48],
            sizes: &[6, 7],
            boneyard: 14,
            points: &[0, 0],
            totals: &[0, 0],
            legal: &[108, 109],
        };
        assert_eq!(ours[2], serde_json::to_value(ToAgent::Decide(decide)).unwrap());
        let end = End::Result {
            points: vec![35, 20],
            winner: Some(0),
            tie: false,
        };
        assert_eq!(ours[3], serde_json::to_value(ToAgent::End(end)).unwrap());
        assert_eq!(ours.last(), Some(&json!({"type": "quit"})));
        let theirs = session("agent");
        assert!(matches!(
            serde_json::from_value(theirs[0].clone()).unwrap(),
            FromAgent::Hello { protocol: Some(2), .. }
        ));
        assert!(matches!(
            serde_json::from_value(theirs[1].clone()).unwrap(),
            FromAgent::Action {
                id: Some(1),
                action: 109
            }
        ));
        // A tie, a forfeit and an abandoned game.
        let tie = End::Result {
            points: vec![0, 0],
            winner: None,
            tie: true,
        };
        assert_eq!(
            serde_json::to_value(ToAgent::End(tie)).unwrap(),
            json!({"type": "end", "points": [0, 0], "winner": null, "tie": true})
        );
        let forfeit = End::Forfeit {
            forfeit: ForfeitNote {
                seat: 1,
                reason: "time".into(),
                detail: "time: no reply within the limit".into(),
            },
        };
        assert_eq!(
            serde_json::to_value(ToAgent::End(forfeit)).unwrap(),
            json!({"type": "end", "forfeit": {"seat": 1, "reason": "time", "detail": "time: no reply within the limit"}})
        );
        assert_eq!(
            serde_json::to_value(ToAgent::End(End::Abandoned {})).unwrap(),
            json!({"type": "end"})
        );
        // Block: its fixed values only; a seed cut below 2^53.
        let block = Game::new(&FullRules::preset(Preset::Block), 0, &[0], u64::MAX);
        assert_eq!(
            serde_json::to_value(&block.rules).unwrap(),
            json!({"set": 6, "seats": 2, "hand": 7, "teams": false})
        );
        assert_eq!(block.seed, (1 << SEED_BITS) - 1);
        assert_eq!(
            (
                block.counts(),
                Game::new(&FullRules::preset(Preset::Team), 0, &[0, 2], 1).counts()
            ),
            ((2, 2), (4, 2))
        );
    }
}
