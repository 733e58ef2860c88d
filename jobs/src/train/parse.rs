//! Parsing a training spec: the TOML, its checks, and `train.start`'s
//! model file, read where the spec is parsed ([`StartFrom`]: the path the
//! spec writes, a coordinator's copy, the bytes a submission sent) and
//! checked against the spec, its hash kept in the spec so that the id
//! covers the weights.

use super::spec::{TrainSpec, TrainSpecError};

/// Where a training spec's `train.start` file is read from when the spec
/// is parsed ([`TrainSpec::from_toml_with`]).
#[derive(Clone, Copy, Debug)]
pub enum StartFrom<'a> {
    /// The path as the spec writes it, from the working directory
    /// (`muggins run`, `muggins submit`).
    Path,
    /// A copy of it at this path (a coordinator's workers and sweeper: the
    /// run directory's [`START_NET`](crate::layout::START_NET)).
    Copy(&'a std::path::Path),
    /// The file's bytes (a submission to a coordinator).
    Bytes(&'a [u8]),
    /// Not read: the spec's fields are checked, but its id leaves the
    /// weights out (a reader that needs neither, as a lease's look at a
    /// grid's SPRT).
    Unread,
}

impl TrainSpec {
    /// Parses and checks a training spec.
    /// `train.start` is read here (a path relative to the working
    /// directory) and its hash kept in the spec.
    pub fn from_toml(text: &str) -> Result<TrainSpec, TrainSpecError> {
        TrainSpec::from_toml_with(text, StartFrom::Path)
    }

    /// [`Self::from_toml`] with `train.start`'s file read from `from`.
    pub fn from_toml_with(text: &str, from: StartFrom<'_>) -> Result<TrainSpec, TrainSpecError> {
        let mut spec: TrainSpec = toml::from_str(text).map_err(|e| TrainSpecError::Toml(e.to_string()))?;
        if let Some(h) = &spec.train.start_sha256 {
            return Err(TrainSpecError::field(
                "train.start_sha256",
                format!("{h:?}"),
                "muggins writes it from train.start's file; give train.start",
            ));
        }
        spec.check()?;
        spec.read_start(from)?;
        Ok(spec)
    }

    /// Reads `train.start`'s file from `from` (when the spec has one) and
    /// keeps its hash (and, for a copy, where the file is).
    fn read_start(&mut self, from: StartFrom<'_>) -> Result<(), TrainSpecError> {
        let Some(path) = self.train.start.clone() else {
            return Ok(());
        };
        let model = match from {
            StartFrom::Path => self.start_model()?,
            StartFrom::Copy(copy) => {
                self.start_file = Some(copy.to_path_buf());
                self.start_model()?
            }
            StartFrom::Bytes([]) => {
                return Err(TrainSpecError::field(
                    "train.start",
                    format!("{path:?}"),
                    "the submission carries no copy of the file (a client older than the coordinator): submit it \
                     with this version's `muggins submit`, which sends the file",
                ));
            }
            StartFrom::Bytes(bytes) => {
                let model = net::Model::from_bytes(bytes).map_err(|why| {
                    TrainSpecError::field("train.start", format!("{path:?}"), &format!("the file sent: {why}"))
                })?;
                Some(self.checked_start(model)?)
            }
            StartFrom::Unread => None,
        };
        self.train.start_sha256 = model.map(|m| m.sha256);
        Ok(())
    }

    /// The model of `train.start`, checked against the spec (its game,
    /// encoding and hidden layers), or `None` without one.
    pub fn start_model(&self) -> Result<Option<net::Model>, TrainSpecError> {
        let t = &self.train;
        let Some(path) = &t.start else {
            return Ok(None);
        };
        let bad = |why: &str| TrainSpecError::field("train.start", format!("{path:?}"), why);
        let file = self.start_file.as_deref().unwrap_or(std::path::Path::new(path));
        let model = net::Model::load(file).map_err(|e| {
            let from = std::env::current_dir()
                .ok()
                .filter(|_| self.start_file.is_none() && file.is_relative() && !file.exists());
            match from {
                Some(cwd) => bad(&format!(
                    "{e} (a relative path is read from the working directory, {})",
                    cwd.display()
                )),
                None => bad(&e.to_string()),
            }
        })?;
        Ok(Some(self.checked_start(model)?))
    }

    /// `model` as the start of this training: of its game, encoding and
    /// hidden layers, or refused naming `train.start`.
    fn checked_start(&self, model: net::Model) -> Result<net::Model, TrainSpecError> {
        let t = &self.train;
        let path = t.start.as_deref().unwrap_or_default();
        let bad = |why: &str| TrainSpecError::field("train.start", format!("{path:?}"), why);
        let m = &model.meta;
        // The game, encoding and shapes as every reader of a model checks
        // them; the layers as this training makes them.
        let mismatch = match model.check(&self.state().model_expect(self.encoding())) {
            Err(why) => Some(format!(
                "{why} (train.game {:?}, train.encoding {:?})",
                t.game, t.encoding
            )),
            Ok(()) if m.hidden != t.hidden => Some(format!(
                "hidden layers {:?}, and train.hidden is {:?}",
                m.hidden, t.hidden
            )),
            Ok(()) => None,
        };
        match mismatch {
            Some(why) => Err(bad(&why)),
            None => Ok(model),
        }
    }
}
