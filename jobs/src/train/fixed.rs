//! Who else plays in a training run: the fixed strategies of the
//! population and the anchors ([`Fixed`]), and the search of the searched
//! decisions ([`TrainSearch`]), as `[train]` names them. A parse error is
//! the reason alone; the spec names the field and the value.

/// `ismcts`, as `engine::PlayerEngine` spells it.
pub fn ismcts_name() -> &'static str {
    engine::PlayerEngine::Ismcts.name()
}

/// `mstar`, likewise.
fn mstar_name() -> &'static str {
    engine::PlayerEngine::MStar.name()
}

/// ISMCTS's nodes a world and worlds when an anchor or a member of the
/// population is named `ismcts` alone (those of Gymnasium's `"ismcts"`).
pub const DEFAULT_ISMCTS: (u32, u16) = (1_000, 8);

/// M*'s nodes a world and worlds when named `mstar` alone: about a
/// millisecond a decision on this project's machine, a twentieth of the
/// 32 x 10,000 of issue 46's All-Fives opponent.
pub const DEFAULT_MSTAR: (u32, u16) = (2_000, 8);

/// A fixed strategy: an anchor or a member of the population.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixed {
    /// A uniform draw among the legal plays.
    Random,
    /// The heaviest legal tile.
    Heaviest,
    /// muggins' ISMCTS from the seat's information (`budget` nodes a
    /// world, `worlds` worlds from the constraints belief), block and team:
    /// `ismcts`, or `ismcts:BUDGETxWORLDS`.
    Ismcts {
        /// Nodes a world.
        budget: u32,
        /// Worlds.
        worlds: u16,
    },
    /// M* with the shipped learned leaves, from the seat's information
    /// (`worlds` worlds from the `model` belief, `budget` nodes each),
    /// All Fives: `mstar`, or `mstar:BUDGETxWORLDS`.
    Mstar {
        /// Nodes a world.
        budget: u32,
        /// Worlds.
        worlds: u16,
    },
    /// A network the run kept before (population only, `past`): one of
    /// the last [`PAST_KEPT`] best networks before the generation's own,
    /// drawn for each game, greedy; the generation's own in the first.
    Past,
}

/// How many of the run's earlier best networks `past` draws from.
pub const PAST_KEPT: usize = 8;

impl Fixed {
    /// Its name in specs and reports.
    pub fn name(self) -> String {
        match self {
            Fixed::Random => "random".into(),
            Fixed::Heaviest => "heaviest".into(),
            Fixed::Ismcts { budget, worlds } if (budget, worlds) == DEFAULT_ISMCTS => ismcts_name().into(),
            Fixed::Ismcts { budget, worlds } => format!("{}:{budget}x{worlds}", ismcts_name()),
            Fixed::Mstar { budget, worlds } if (budget, worlds) == DEFAULT_MSTAR => mstar_name().into(),
            Fixed::Mstar { budget, worlds } => format!("{}:{budget}x{worlds}", mstar_name()),
            Fixed::Past => "past".into(),
        }
    }

    /// Whether it plays All Fives only (M*'s learned leaves are All Fives').
    pub fn all_fives_only(self) -> bool {
        matches!(self, Fixed::Mstar { .. })
    }

    /// Whether it plays block and team only (muggins' ISMCTS here reads
    /// block and team positions).
    pub fn open_only(self) -> bool {
        matches!(self, Fixed::Ismcts { .. })
    }

    /// `s` as a fixed strategy, or why not.
    pub fn parse(s: &str) -> Result<Fixed, String> {
        match s {
            "random" => return Ok(Fixed::Random),
            "heaviest" => return Ok(Fixed::Heaviest),
            "past" => return Ok(Fixed::Past),
            _ => {}
        }
        for (name, default, make) in [
            (ismcts_name(), DEFAULT_ISMCTS, ismcts as fn((u32, u16)) -> Fixed),
            (mstar_name(), DEFAULT_MSTAR, mstar),
        ] {
            if s == name {
                return Ok(make(default));
            }
            if let Some(rest) = s.strip_prefix(name).and_then(|r| r.strip_prefix(':')) {
                return budget_worlds(name, rest).map(make);
            }
        }
        Err(
            "expected \"random\", \"heaviest\", \"ismcts\", \"ismcts:BUDGETxWORLDS\", \"mstar\", \"mstar:BUDGETxWORLDS\" \
             or \"past\" (population only)"
                .into(),
        )
    }
}

fn ismcts((budget, worlds): (u32, u16)) -> Fixed {
    Fixed::Ismcts { budget, worlds }
}

fn mstar((budget, worlds): (u32, u16)) -> Fixed {
    Fixed::Mstar { budget, worlds }
}

/// `BUDGETxWORLDS` after `name:`.
fn budget_worlds(name: &str, rest: &str) -> Result<(u32, u16), String> {
    let (b, w) = rest
        .split_once('x')
        .ok_or_else(|| format!("{name}:BUDGETxWORLDS, e.g. {name}:1000x8"))?;
    let budget: u32 = b
        .parse()
        .ok()
        .filter(|b| (1..=1_000_000).contains(b))
        .ok_or("a budget of 1 to 1000000 nodes a world")?;
    let worlds: u16 = w
        .parse()
        .ok()
        .filter(|w| (1..=1_000).contains(w))
        .ok_or("1 to 1000 worlds")?;
    Ok((budget, worlds))
}

/// The search of a training run's searched decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrainSearch {
    /// muggins' ISMCTS from the seat's view (block and team).
    Ismcts {
        /// Nodes a world.
        budget: u32,
        /// Worlds a decision.
        worlds: u16,
    },
    /// M* with learned leaves from the seat's view (All Fives): the row's
    /// target is its play (expert iteration with M* as the expert).
    Mstar {
        /// Nodes a world.
        budget: u32,
        /// Worlds a decision.
        worlds: u16,
    },
    /// The network being trained guiding its own search
    /// (`full::spiel::guided_decide`), AlphaZero's self-play target.
    Guided {
        /// Simulations a decision.
        simulations: u32,
    },
}

/// The prefix of a guided search in `train.search`.
const GUIDED: &str = "guided:";

impl TrainSearch {
    /// `s` as a search, or why not.
    pub fn parse(s: &str) -> Result<TrainSearch, String> {
        const WANT: &str = "expected \"ismcts\", \"ismcts:BUDGETxWORLDS\", \"mstar\", \"mstar:BUDGETxWORLDS\" or \"guided:SIMULATIONS\"";
        if let Some(n) = s.strip_prefix(GUIDED) {
            let simulations = n
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=full::spiel::MAX_SIMULATIONS).contains(n))
                .ok_or_else(|| {
                    format!(
                        "guided:SIMULATIONS takes 1 to {} simulations",
                        full::spiel::MAX_SIMULATIONS
                    )
                })?;
            return Ok(TrainSearch::Guided { simulations });
        }
        match Fixed::parse(s) {
            Ok(Fixed::Ismcts { budget, worlds }) => Ok(TrainSearch::Ismcts { budget, worlds }),
            Ok(Fixed::Mstar { budget, worlds }) => Ok(TrainSearch::Mstar { budget, worlds }),
            Ok(_) => Err(WANT.into()),
            Err(why) if why.starts_with("expected") => Err(WANT.into()),
            Err(why) => Err(why),
        }
    }

    /// The fixed player that decides instead of the network (ISMCTS or
    /// M*), `None` for the network's own guided search.
    pub fn expert(self) -> Option<Fixed> {
        match self {
            TrainSearch::Ismcts { budget, worlds } => Some(Fixed::Ismcts { budget, worlds }),
            TrainSearch::Mstar { budget, worlds } => Some(Fixed::Mstar { budget, worlds }),
            TrainSearch::Guided { .. } => None,
        }
    }
}
