//! What a seat believes about the tiles it cannot see (docs/beliefs.md).
//!
//! An [`Observation`] is everything a seat knows from its own chair: its
//! hand, every hand's size, the boneyard's size, and the tiles each seat
//! cannot hold (its voids: a seat that drew or passed held no tile matching
//! an open end). [`Constraints`] is the exact uniform distribution over the
//! assignments of the hidden tiles to the other seats and the boneyard that
//! agree with an observation: counted by dynamic programming over classes of
//! interchangeable tiles and the holders' remaining capacities (no
//! enumeration), with exact marginals and exact uniform sampling (sequential
//! by counts, no rejection). Counts are exact integers (`u128`: a double-9
//! deal to four holders has fewer than 2^110 assignments).

use rand_core::RngCore;

use engine::Loc;
use engine::{TileSet, bits};

use super::fives::FivesPosition;
use super::position::FullPosition;
use super::rules::{FullRules, MAX_SEATS};

/// Holders of hidden tiles: the seats, then the boneyard.
pub const HOLDERS: usize = MAX_SEATS + 1;

/// The boneyard's holder index.
pub const BONEYARD: usize = MAX_SEATS;

/// What a seat knows about where the tiles it cannot see are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The observing seat.
    pub seat: u8,
    /// The number of seats.
    pub seats: u8,
    /// The tiles the seat cannot see: the others' hands and the boneyard.
    pub hidden: TileSet,
    /// Hidden tiles each holder has (seats, then the boneyard; the observer
    /// and absent seats 0).
    pub size: [u8; HOLDERS],
    /// Tiles each holder cannot have (the boneyard: none).
    pub void: [TileSet; HOLDERS],
    /// Per seat, the pips it was seen to lack (bit p: no tile with pip p),
    /// for the DominAI matrices, which reason by pips.
    pub void_pips: [u16; MAX_SEATS],
}

impl Observation {
    /// The view of `seat` at `pos`, given the voids `void` and `void_pips`
    /// each seat has shown (from [`super::Seen`]).
    pub fn new(
        rules: &FullRules,
        pos: &FivesPosition,
        seat: u8,
        void: &[TileSet; MAX_SEATS],
        void_pips: &[u16; MAX_SEATS],
    ) -> Observation {
        Observation::of_hands(rules, &pos.hands, pos.boneyard, seat, void, void_pips)
    }

    /// The view of `seat` of a deal in play (`hands`, and the tiles nobody
    /// holds: the boneyard, or block's undealt tiles); only the hands'
    /// sizes are read, apart from the seat's own.
    pub fn of_hands(
        rules: &FullRules,
        hands: &[TileSet; MAX_SEATS],
        boneyard: TileSet,
        seat: u8,
        void: &[TileSet; MAX_SEATS],
        void_pips: &[u16; MAX_SEATS],
    ) -> Observation {
        let mut o = Observation {
            seat,
            seats: rules.seats(),
            hidden: boneyard,
            size: [0; HOLDERS],
            void: [0; HOLDERS],
            void_pips: [0; MAX_SEATS],
        };
        o.size[BONEYARD] = boneyard.count_ones() as u8;
        for s in 0..rules.seats() as usize {
            if s != seat as usize {
                o.hidden |= hands[s];
                o.size[s] = hands[s].count_ones() as u8;
                o.void[s] = void[s];
                o.void_pips[s] = void_pips[s];
            }
        }
        o
    }

    /// The same view with every void forgotten (the `uniform` belief).
    pub fn without_voids(mut self) -> Observation {
        self.void = [0; HOLDERS];
        self.void_pips = [0; MAX_SEATS];
        self
    }

    /// The holder of each hidden tile in `world` (a position of the same hand).
    pub fn holders_in(&self, world: &FivesPosition) -> [u8; 64] {
        self.holders_of(&world.hands, world.boneyard)
    }

    /// The holder of each hidden tile when the seats hold `hands` and
    /// nobody `boneyard`.
    pub fn holders_of(&self, hands: &[TileSet; MAX_SEATS], boneyard: TileSet) -> [u8; 64] {
        let mut at = [u8::MAX; 64];
        for t in bits(self.hidden) {
            at[t as usize] = if boneyard >> t & 1 == 1 {
                BONEYARD as u8
            } else {
                (0..self.seats)
                    .find(|&s| hands[s as usize] >> t & 1 == 1)
                    .expect("a hidden tile is in a hand or the boneyard")
            };
        }
        at
    }
}

/// The tiles matching an open end of `pos` (what a seat that cannot play
/// there shows it lacks), and their pips.
pub fn matching(rules: &FullRules, pos: &FivesPosition) -> (TileSet, u16) {
    let mut tiles: TileSet = 0;
    let mut pips = 0u16;
    for &loc in &Loc::ALL[..pos.board.open_locations()] {
        if let Some(p) = pos.board.exposed(loc) {
            tiles |= rules.pip_mask(p);
            pips |= 1 << p;
        }
    }
    (tiles, pips)
}

/// Marginals: `p[t][h]` is the probability that hidden tile `t` is with
/// holder `h` (0 for tiles that are not hidden).
pub type Marginals = [[f64; HOLDERS]; 64];

/// Log loss and Brier score of `m` against the true holders `truth` of the
/// hidden tiles (each averaged over the hidden tiles; a probability below
/// 1e-9 counts as 1e-9 in the log loss).
pub fn scores(obs: &Observation, m: &Marginals, truth: &[u8; 64]) -> (f64, f64) {
    let (mut log_loss, mut brier, mut n) = (0.0, 0.0, 0.0);
    for t in bits(obs.hidden) {
        let h = truth[t as usize] as usize;
        log_loss -= m[t as usize][h].max(1e-9).ln();
        for (k, &p) in m[t as usize].iter().enumerate() {
            let y = if k == h { 1.0 } else { 0.0 };
            brier += (p - y) * (p - y);
        }
        n += 1.0;
    }
    if n == 0.0 {
        (0.0, 0.0)
    } else {
        (log_loss / n, brier / n)
    }
}

/// Pascal's triangle to 64, exact (built at compile time).
static PASCAL: [[u128; 65]; 65] = {
    let mut t = [[0u128; 65]; 65];
    let mut n = 0;
    while n <= 64 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    t
};

/// n choose k, exact (n <= 64).
#[inline]
fn choose(n: u32, k: u32) -> u128 {
    PASCAL[n as usize][k as usize]
}

/// One class of interchangeable hidden tiles: the same holders may have them.
#[derive(Clone, Debug, Default)]
struct Class {
    tiles: Vec<u8>,
    /// Indices into `Constraints::active` of the holders allowed.
    allowed: Vec<u8>,
}

/// The exact uniform distribution over the assignments that agree with an
/// [`Observation`]. Reusable: [`Constraints::update`] recomputes it in
/// place, keeping its buffers.
#[derive(Clone, Debug, Default)]
pub struct Constraints {
    obs: Option<Observation>,
    /// The holders with hidden tiles (holder indices), at most 4.
    active: Vec<u8>,
    /// Their capacities.
    cap: Vec<u32>,
    /// Mixed-radix strides of the state (remaining capacities).
    stride: Vec<usize>,
    states: usize,
    /// Per state, the tiles the holders still have room for.
    room: Vec<u32>,
    /// Per class, the tiles of it and of the classes after it.
    left: Vec<u32>,
    classes: Vec<Class>,
    /// `back[c * states + s]`: assignments of classes c.. from state s to
    /// all holders full.
    back: Vec<u128>,
    /// `fwd[c * states + s]`: assignments of classes ..c reaching state s.
    fwd: Vec<u128>,
    /// A list of allocations (per active holder), reused.
    allocs: Vec<([u8; 4], u128)>,
}

impl Constraints {
    /// The distribution for `obs`.
    pub fn new(obs: &Observation) -> Constraints {
        let mut c = Constraints::default();
        c.update(obs);
        c
    }

    /// Recomputes the distribution for `obs`.
    pub fn update(&mut self, obs: &Observation) {
        self.obs = Some(*obs);
        self.active.clear();
        self.cap.clear();
        for h in 0..HOLDERS {
            if obs.size[h] > 0 {
                self.active.push(h as u8);
                self.cap.push(obs.size[h] as u32);
            }
        }
        assert!(self.active.len() <= 4, "at most four holders have hidden tiles");
        self.stride.clear();
        let mut states = 1;
        for &c in &self.cap {
            self.stride.push(states);
            states *= c as usize + 1;
        }
        self.states = states;
        self.room.clear();
        for st in 0..states {
            let r = (0..self.cap.len()).map(|i| self.remaining(st, i)).sum();
            self.room.push(r);
        }
        // Classes by the set of holders allowed, in order of first tile.
        let mut class_of = [usize::MAX; 16];
        for c in self.classes.iter_mut() {
            c.tiles.clear();
            c.allowed.clear();
        }
        let mut used = 0;
        for t in bits(obs.hidden) {
            let mut mask = 0usize;
            for (i, &h) in self.active.iter().enumerate() {
                if obs.void[h as usize] >> t & 1 == 0 {
                    mask |= 1 << i;
                }
            }
            if class_of[mask] == usize::MAX {
                if used == self.classes.len() {
                    self.classes.push(Class::default());
                }
                class_of[mask] = used;
                self.classes[used]
                    .allowed
                    .extend((0..self.active.len() as u8).filter(|&i| mask >> i & 1 == 1));
                used += 1;
            }
            self.classes[class_of[mask]].tiles.push(t);
        }
        self.classes.truncate(used);
        let n = self.classes.len();
        self.left.clear();
        self.left.resize(n + 1, 0);
        for c in (0..n).rev() {
            self.left[c] = self.left[c + 1] + self.classes[c].tiles.len() as u32;
        }
        self.back.clear();
        self.back.resize((n + 1) * states, 0);
        self.fwd.clear();
        self.fwd.resize((n + 1) * states, 0);
        // All holders full (remaining 0) is state 0.
        self.back[n * states] = 1;
        let full = self.full_state();
        self.fwd[full] = 1;
        let mut allocs = std::mem::take(&mut self.allocs);
        for c in (0..n).rev() {
            for s in 0..states {
                // Only states that leave room for exactly the tiles left.
                if self.room[s] != self.left[c] {
                    continue;
                }
                let mut sum = 0u128;
                self.allocations(c, s, &mut allocs);
                for &(x, w) in &allocs {
                    sum += w * self.back[(c + 1) * states + self.after(s, &x)];
                }
                self.back[c * states + s] = sum;
            }
        }
        for c in 0..n {
            for s in 0..states {
                let f = self.fwd[c * states + s];
                if f == 0 || self.back[c * states + s] == 0 {
                    continue;
                }
                self.allocations(c, s, &mut allocs);
                for &(x, w) in &allocs {
                    let to = (c + 1) * states + self.after(s, &x);
                    self.fwd[to] += f * w;
                }
            }
        }
        self.allocs = allocs;
    }

    /// The state with every holder's capacity remaining.
    fn full_state(&self) -> usize {
        self.cap.iter().zip(&self.stride).map(|(&c, &st)| c as usize * st).sum()
    }

    fn remaining(&self, s: usize, i: usize) -> u32 {
        ((s / self.stride[i]) % (self.cap[i] as usize + 1)) as u32
    }

    fn after(&self, s: usize, x: &[u8; 4]) -> usize {
        s - x
            .iter()
            .zip(&self.stride)
            .map(|(&x, &st)| x as usize * st)
            .sum::<usize>()
    }

    /// The ways class `c`'s tiles can be shared among its allowed holders
    /// from state `s`: per active holder how many, and the multinomial count.
    fn allocations(&self, c: usize, s: usize, out: &mut Vec<([u8; 4], u128)>) {
        out.clear();
        let class = &self.classes[c];
        let k = class.tiles.len() as u32;
        let room: [u32; 4] = std::array::from_fn(|i| if i < self.cap.len() { self.remaining(s, i) } else { 0 });
        let allowed = &class.allowed;
        if allowed.is_empty() {
            return;
        }
        // Depth-first over the allowed holders; the last takes the rest.
        fn rec(allowed: &[u8], room: &[u32; 4], left: u32, x: &mut [u8; 4], w: u128, out: &mut Vec<([u8; 4], u128)>) {
            let i = allowed[0] as usize;
            if allowed.len() == 1 {
                if left <= room[i] {
                    x[i] = left as u8;
                    out.push((*x, w));
                    x[i] = 0;
                }
                return;
            }
            for take in 0..=left.min(room[i]) {
                x[i] = take as u8;
                rec(&allowed[1..], room, left - take, x, w * choose(left, take), out);
            }
            x[i] = 0;
        }
        rec(allowed, &room, k, &mut [0; 4], 1, out);
    }

    /// The number of assignments that agree with the observation.
    pub fn count(&self) -> u128 {
        self.back[self.full_state()]
    }

    /// The observation this distribution is of.
    pub fn observation(&self) -> &Observation {
        self.obs.as_ref().expect("updated")
    }

    /// Exact marginals: the probability that each hidden tile is with each
    /// holder. All zero if no assignment agrees (an impossible observation).
    pub fn marginals(&mut self, out: &mut Marginals) {
        for row in out.iter_mut() {
            *row = [0.0; HOLDERS];
        }
        let total = self.count();
        if total == 0 {
            return;
        }
        let states = self.states;
        let mut allocs = std::mem::take(&mut self.allocs);
        for c in 0..self.classes.len() {
            let mut acc = [0u128; 4];
            for s in 0..states {
                let f = self.fwd[c * states + s];
                if f == 0 || self.back[c * states + s] == 0 {
                    continue;
                }
                self.allocations(c, s, &mut allocs);
                for &(x, w) in &allocs {
                    let b = self.back[(c + 1) * states + self.after(s, &x)];
                    if b == 0 {
                        continue;
                    }
                    let ways = f * w * b;
                    for i in 0..4 {
                        acc[i] += ways * x[i] as u128;
                    }
                }
            }
            let k = self.classes[c].tiles.len() as f64;
            for &t in &self.classes[c].tiles {
                for (i, &h) in self.active.iter().enumerate() {
                    out[t as usize][h as usize] = ratio(acc[i], total) / k;
                }
            }
        }
        self.allocs = allocs;
    }

    /// One assignment drawn exactly uniformly among those that agree: the
    /// holder of each hidden tile (`u8::MAX` for tiles not hidden). `None`
    /// if no assignment agrees.
    pub fn sample(&mut self, rng: &mut impl RngCore, out: &mut [u8; 64]) -> Option<()> {
        if self.count() == 0 {
            return None;
        }
        *out = [u8::MAX; 64];
        let states = self.states;
        let mut s = self.full_state();
        let mut allocs = std::mem::take(&mut self.allocs);
        let mut tiles = [0u8; 64];
        for c in 0..self.classes.len() {
            self.allocations(c, s, &mut allocs);
            let here = self.back[c * states + s];
            let mut r = below_u128(rng, here);
            let mut chosen = None;
            for &(x, w) in &allocs {
                let ways = w * self.back[(c + 1) * states + self.after(s, &x)];
                if r < ways {
                    chosen = Some(x);
                    break;
                }
                r -= ways;
            }
            let x = chosen.expect("the counts add up");
            // Deal the class's tiles: a uniform shuffle, cut by the allocation.
            let class = &self.classes[c].tiles;
            let k = class.len();
            tiles[..k].copy_from_slice(class);
            for i in (1..k).rev() {
                let j = engine::seed::below_u32(rng, i as u32 + 1) as usize;
                tiles.swap(i, j);
            }
            let mut next = 0;
            for (i, &h) in self.active.iter().enumerate() {
                for &t in &tiles[next..next + x[i] as usize] {
                    out[t as usize] = h;
                }
                next += x[i] as usize;
            }
            s = self.after(s, &x);
        }
        self.allocs = allocs;
        Some(())
    }

    /// [`Self::sample`] as a world: `pos` with the hidden tiles dealt as drawn.
    pub fn sample_world(&mut self, pos: &FivesPosition, rng: &mut impl RngCore) -> Option<FivesPosition> {
        let mut at = [u8::MAX; 64];
        self.sample(rng, &mut at)?;
        Some(self.world(pos, &at))
    }

    /// `pos` with the hidden tiles where `at` says.
    pub fn world(&self, pos: &FivesPosition, at: &[u8; 64]) -> FivesPosition {
        world_of(self.observation(), pos, at)
    }
}

/// The block or team hand `pos` with the hidden tiles of `obs` where the sample `at` puts them.
pub(crate) fn open_world_of(rules: &FullRules, pos: &FullPosition, obs: &Observation, at: &[u8; 64]) -> FullPosition {
    let mut world = *pos;
    for s in 0..rules.seats() as usize {
        if s != obs.seat as usize {
            world.hands[s] = 0;
        }
    }
    world.boneyard = 0;
    for t in engine::bits(obs.hidden) {
        match at[t as usize] as usize {
            BONEYARD => world.boneyard |= 1 << t,
            s => world.hands[s] |= 1 << t,
        }
    }
    world
}

/// `pos` with the hidden tiles of `obs` where `at` says.
pub fn world_of(obs: &Observation, pos: &FivesPosition, at: &[u8; 64]) -> FivesPosition {
    let mut w = *pos;
    w.boneyard = 0;
    for s in 0..obs.seats as usize {
        if s != obs.seat as usize {
            w.hands[s] = 0;
        }
    }
    for t in bits(obs.hidden) {
        let h = at[t as usize] as usize;
        if h == BONEYARD {
            w.boneyard |= 1 << t;
        } else {
            w.hands[h] |= 1 << t;
        }
    }
    w
}

/// `a / b` as a float (each converted with correct rounding).
fn ratio(a: u128, b: u128) -> f64 {
    a as f64 / b as f64
}

/// A uniform integer below `n` (n > 0).
fn below_u128(rng: &mut impl RngCore, n: u128) -> u128 {
    if n <= u64::MAX as u128 {
        let n = n as u64;
        // Lemire's method, exact.
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = rng.next_u64() as u128 * n as u128;
            if (m as u64) >= threshold {
                return m >> 64;
            }
        }
    }
    let threshold = n.wrapping_neg() % n;
    loop {
        let x = (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
        if x >= threshold {
            return x % n;
        }
    }
}
