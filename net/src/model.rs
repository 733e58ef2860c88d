//! Model files: safetensors with the model's description in the header's
//! metadata (key `muggins`, a JSON object: [`Meta`]), read with every check
//! a user needs to be told about (another game, encoding or shape, a
//! truncated file, weights that are not finite), each refusal naming the
//! file and the problem. The file's SHA-256 is its identity: a spec that
//! uses a model carries it, so another file is another experiment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::mlp::{Dense, Mlp};

/// The metadata key that holds the [`Meta`] JSON.
pub const META_KEY: &str = "muggins";

/// The model-file format this version writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// What a model file says it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// `FORMAT_VERSION` of the writer.
    pub format_version: u32,
    /// The game it plays: a preset name (`block`, `team`, `all-fives`, ...).
    pub game: String,
    /// The observation encoding's name (`full::spiel::Encoding`).
    pub encoding: String,
    /// That encoding's version (`full::spiel::ENCODING_VERSION`).
    pub encoding_version: u32,
    /// Floats an observation has.
    pub inputs: usize,
    /// The policy head's width: the game's action ids.
    pub actions: usize,
    /// The hidden layers' widths (tanh after each).
    pub hidden: Vec<usize>,
    /// The activation of the hidden layers: `tanh`.
    pub activation: String,
    /// The belief head's shape, if the network has one (tensors `w_b`,
    /// `b_b`): absent in files without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub belief: Option<BeliefShape>,
    /// What the belief head's logits correct (docs/train.md): absent, a
    /// softmax of its own; `constraints`, added to the log of the
    /// constraints belief's marginals (`full::spiel::SpielState::belief_prior`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub belief_prior: Option<String>,
    /// The width of the belief head's own hidden layer (tensors `w_bt`,
    /// `b_bt`, over the observation), when it has one; absent, the head
    /// reads the last hidden layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub belief_hidden: Option<usize>,
    /// Where it came from.
    pub provenance: Provenance,
}

/// `Meta::belief_prior` of a head that corrects the constraints belief.
pub const BELIEF_PRIOR_CONSTRAINTS: &str = "constraints";

/// The belief head's shape: for each of `tiles` tiles, a softmax over
/// `holders` holders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeliefShape {
    pub tiles: usize,
    pub holders: usize,
}

/// Where a model came from: the command or experiment that made it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The command (or program) that trained it.
    pub made_by: String,
    /// The experiment's spec id, when an experiment made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_id: Option<String>,
    /// Its generation in that experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u32>,
}

/// Why a model file was refused.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("model file {path}: cannot read it: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("model file {path}: {why}")]
    Invalid { path: PathBuf, why: String },
    #[error("model file {path}: {why}")]
    Mismatch { path: PathBuf, why: String },
}

/// A network read from a file, with what it says it is and its SHA-256.
#[derive(Clone, Debug)]
pub struct Model {
    /// What the file says.
    pub meta: Meta,
    /// The network.
    pub mlp: Mlp,
    /// The file's SHA-256, hex.
    pub sha256: String,
}

/// What a user of a model needs it to be: each field checked on load.
#[derive(Clone, Debug)]
pub struct Expect<'a> {
    pub game: &'a str,
    pub encoding: &'a str,
    pub encoding_version: u32,
    pub inputs: usize,
    pub actions: usize,
    /// The shape a belief head must have, if the model has one (the
    /// game's tiles and holders).
    pub belief: BeliefShape,
}

impl Model {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Model, NetError> {
        let bytes = std::fs::read(path).map_err(|source| NetError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Model::from_bytes(&bytes).map_err(|why| NetError::Invalid {
            path: path.to_path_buf(),
            why,
        })
    }

    /// Reads and checks `path`, and that it is the model `expect` names.
    pub fn load_for(path: &Path, expect: &Expect) -> Result<Model, NetError> {
        let model = Model::load(path)?;
        model.check(expect).map_err(|why| NetError::Mismatch {
            path: path.to_path_buf(),
            why,
        })?;
        Ok(model)
    }

    /// Whether this model is the one `expect` names; if not, what differs.
    pub fn check(&self, expect: &Expect) -> Result<(), String> {
        let m = &self.meta;
        let differs = |what: &str, have: String, want: String| Err(format!("it is for {what} {have}, not {want}"));
        if m.game != expect.game {
            return differs("game", format!("{:?}", m.game), format!("{:?}", expect.game));
        }
        if m.encoding != expect.encoding || m.encoding_version != expect.encoding_version {
            return differs(
                "encoding",
                format!("{:?} version {}", m.encoding, m.encoding_version),
                format!("{:?} version {}", expect.encoding, expect.encoding_version),
            );
        }
        if m.inputs != expect.inputs {
            return differs(
                "observations of",
                format!("{} floats", m.inputs),
                format!("{}", expect.inputs),
            );
        }
        if m.actions != expect.actions {
            return differs("actions:", format!("{}", m.actions), format!("{}", expect.actions));
        }
        if let Some(b) = m.belief
            && b != expect.belief
        {
            return differs(
                "a belief head of",
                format!("{} tiles x {} holders", b.tiles, b.holders),
                format!("{} x {}", expect.belief.tiles, expect.belief.holders),
            );
        }
        Ok(())
    }

    /// Parses and checks a model file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model, String> {
        let (_, header) = SafeTensors::read_metadata(bytes).map_err(|e| format!("not a safetensors file: {e}"))?;
        let tensors = SafeTensors::deserialize(bytes).map_err(|e| format!("not a safetensors file: {e}"))?;
        let text = header
            .metadata()
            .as_ref()
            .and_then(|m| m.get(META_KEY))
            .ok_or_else(|| format!("no {META_KEY:?} entry in its metadata: not a muggins model"))?;
        let meta: Meta = serde_json::from_str(text).map_err(|e| format!("its {META_KEY:?} metadata: {e}"))?;
        if meta.format_version != FORMAT_VERSION {
            return Err(format!(
                "format_version {} (this version reads {FORMAT_VERSION})",
                meta.format_version
            ));
        }
        if meta.activation != "tanh" {
            return Err(format!("activation {:?} (this version knows tanh)", meta.activation));
        }
        if meta.inputs == 0 || meta.actions == 0 || meta.hidden.is_empty() || meta.hidden.contains(&0) {
            return Err(format!(
                "inputs {}, actions {}, hidden {:?}: every width must be at least 1, with one hidden layer or more",
                meta.inputs, meta.actions, meta.hidden
            ));
        }
        match (&meta.belief_prior, meta.belief) {
            (None, _) => {}
            (Some(p), Some(_)) if p == BELIEF_PRIOR_CONSTRAINTS => {}
            (Some(p), Some(_)) => return Err(format!("belief_prior {p:?} (this version knows \"constraints\")")),
            (Some(p), None) => return Err(format!("belief_prior {p:?} without a belief head")),
        }
        if let (Some(h), None) = (meta.belief_hidden, meta.belief) {
            return Err(format!("belief_hidden {h} without a belief head"));
        }
        let mut names: Vec<String> = tensors.names().into_iter().map(String::from).collect();
        names.sort();
        let mut wanted = Vec::new();
        let mut layers = Vec::new();
        let mut width = meta.inputs;
        for (i, &h) in meta.hidden.iter().enumerate() {
            layers.push(dense(&tensors, &format!("w{i}"), &format!("b{i}"), width, h)?);
            wanted.extend([format!("w{i}"), format!("b{i}")]);
            width = h;
        }
        let policy = dense(&tensors, "w_pi", "b_pi", width, meta.actions)?;
        let value = dense(&tensors, "w_v", "b_v", width, 1)?;
        wanted.extend(["w_pi", "b_pi", "w_v", "b_v"].map(String::from));
        let mut mlp = Mlp::new(meta.inputs, layers, policy, value);
        if let Some(BeliefShape { tiles, holders }) = meta.belief {
            if tiles == 0 || holders == 0 {
                return Err(format!(
                    "belief head of {tiles} tiles x {holders} holders: both must be at least 1"
                ));
            }
            match meta.belief_hidden {
                None => mlp = mlp.with_belief(dense(&tensors, "w_b", "b_b", width, tiles * holders)?, holders),
                Some(0) => return Err("belief_hidden 0: a belief head's own layer is at least 1 wide".into()),
                Some(h) => {
                    let trunk = dense(&tensors, "w_bt", "b_bt", meta.inputs, h)?;
                    mlp = mlp.with_belief_trunk(trunk, dense(&tensors, "w_b", "b_b", h, tiles * holders)?, holders);
                    wanted.extend(["w_bt", "b_bt"].map(String::from));
                }
            }
            wanted.extend(["w_b", "b_b"].map(String::from));
        }
        wanted.sort();
        if names != wanted {
            let extra: Vec<&String> = names.iter().filter(|n| !wanted.contains(n)).collect();
            return Err(format!("tensors {extra:?} that {:?} has no place for", meta.hidden));
        }
        Ok(Model {
            mlp,
            meta,
            sha256: hex(&Sha256::digest(bytes)),
        })
    }

    /// The model file's bytes: the tensors `w0, b0, ..., w_pi, b_pi, w_v,
    /// b_v` (and `w_b, b_b` with a belief head, `w_bt, b_bt` with its own
    /// layer; f32, weights `inputs x outputs`) and the metadata (its
    /// `belief` and `belief_hidden` set from `mlp`).
    pub fn to_bytes(meta: &Meta, mlp: &Mlp) -> Vec<u8> {
        let meta = &Meta {
            belief: mlp.belief().map(|b| BeliefShape {
                tiles: b.tiles(),
                holders: b.holders,
            }),
            belief_prior: meta.belief_prior.clone().filter(|_| mlp.belief().is_some()),
            belief_hidden: mlp.belief().and_then(|b| b.trunk.as_ref()).map(Dense::outputs),
            ..meta.clone()
        };
        let mut named: Vec<(String, &Dense)> = mlp
            .layers()
            .iter()
            .enumerate()
            .flat_map(|(i, d)| [(format!("{i}"), d)])
            .collect();
        named.push(("_pi".into(), mlp.policy()));
        named.push(("_v".into(), mlp.value()));
        if let Some(b) = mlp.belief() {
            named.push(("_b".into(), &b.dense));
            if let Some(t) = &b.trunk {
                named.push(("_bt".into(), t));
            }
        }
        let mut bufs: Vec<(String, Vec<u8>, Vec<usize>)> = Vec::new();
        for (suffix, d) in named {
            bufs.push((
                format!("w{suffix}"),
                le_bytes(d.weights()),
                vec![d.inputs(), d.outputs()],
            ));
            bufs.push((format!("b{suffix}"), le_bytes(d.bias()), vec![d.outputs()]));
        }
        let views: Vec<(String, TensorView)> = bufs
            .iter()
            .map(|(n, data, shape)| {
                (
                    n.clone(),
                    TensorView::new(Dtype::F32, shape.clone(), data).expect("shape and data agree"),
                )
            })
            .collect();
        let info = HashMap::from([(
            META_KEY.to_string(),
            serde_json::to_string(meta).expect("meta serializes"),
        )]);
        safetensors::serialize(views, Some(info.into_iter().collect())).expect("tensors serialize")
    }
}

fn dense(t: &SafeTensors, w: &str, b: &str, inputs: usize, outputs: usize) -> Result<Dense, String> {
    let weights = floats(t, w, &[inputs, outputs])?;
    let bias = floats(t, b, &[outputs])?;
    Ok(Dense::new(inputs, weights, bias))
}

fn floats(t: &SafeTensors, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
    let view = t.tensor(name).map_err(|_| format!("no tensor {name:?}"))?;
    if view.dtype() != Dtype::F32 {
        return Err(format!("tensor {name:?} is {:?}, not F32", view.dtype()));
    }
    if view.shape() != shape {
        return Err(format!("tensor {name:?} has shape {:?}, not {shape:?}", view.shape()));
    }
    let values: Vec<f32> = view
        .data()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(format!(
            "tensor {name:?} holds {} at index {i}: weights must be finite",
            values[i]
        ));
    }
    Ok(values)
}

fn le_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
