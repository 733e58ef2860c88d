//! `muggins.Net`'s core: a model file (the `net` crate's) loaded and
//! checked, its description, and batched forward passes into numpy arrays
//! with the GIL released (the same numbers as the engines' own).

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::vecenv::buffer;

/// A network read from a model file.
#[pyclass(module = "muggins._muggins", frozen)]
#[derive(Debug)]
pub struct NetCore {
    model: Arc<net::Model>,
}

#[pymethods]
impl NetCore {
    /// Reads and checks the model file at `path`.
    #[new]
    fn new(path: std::path::PathBuf) -> PyResult<Self> {
        let model = net::Model::load(&path).map_err(crate::args::value_error)?;
        Ok(NetCore { model: Arc::new(model) })
    }

    /// The model's description (the file's `muggins` metadata), as JSON.
    fn meta_json(&self) -> String {
        serde_json::to_string(&self.model.meta).expect("meta serializes")
    }

    /// The file's SHA-256 (hex).
    #[getter]
    fn sha256(&self) -> String {
        self.model.sha256.clone()
    }

    /// f32 flops a second in a loop of fused multiply-adds and nothing
    /// else, over `seconds`, on `threads` threads at once (summed): the
    /// ceiling a forward pass's rate on that many threads is measured
    /// against.
    #[staticmethod]
    #[pyo3(signature = (seconds, threads = 1))]
    fn fma_peak_flops(py: Python<'_>, seconds: f64, threads: usize) -> PyResult<f64> {
        if !(1..=256).contains(&threads) {
            return Err(PyValueError::new_err(format!(
                "threads must be 1 to 256, got {threads}"
            )));
        }
        Ok(py.detach(|| net::fma_peak_flops_on(seconds.clamp(0.01, 10.0), threads)))
    }

    /// Multiply-adds one evaluation takes.
    #[getter]
    fn macs(&self) -> usize {
        self.model.mlp.macs()
    }

    /// The belief head's logits for one observation (`tiles x holders`,
    /// tile-major), or `None` when the model has no belief head.
    fn belief_logits(&self, py: Python<'_>, obs: &Bound<'_, PyAny>) -> PyResult<Option<Vec<f32>>> {
        let x = buffer::<f32>(obs, "obs", self.model.mlp.inputs())?.to_vec(py)?;
        let mut out = Vec::new();
        Ok(self
            .model
            .mlp
            .belief_logits(&x, &mut out, &mut net::Scratch::default())
            .map(|()| out))
    }

    /// Evaluates `rows` observations (`obs`, float32 rows x inputs) into
    /// `logits` (float32 rows x actions) and `values` (float32 rows), on
    /// `threads` threads.
    fn forward(
        &self,
        py: Python<'_>,
        obs: &Bound<'_, PyAny>,
        rows: usize,
        logits: &Bound<'_, PyAny>,
        values: &Bound<'_, PyAny>,
        threads: usize,
    ) -> PyResult<()> {
        let mlp = &self.model.mlp;
        if threads == 0 {
            return Err(PyValueError::new_err("threads = 0: at least 1"));
        }
        let ob = buffer::<f32>(obs, "obs", rows * mlp.inputs())?;
        let lb = buffer::<f32>(logits, "logits", rows * mlp.actions())?;
        let vb = buffer::<f32>(values, "values", rows)?;
        let x = ob.to_vec(py)?;
        let model = Arc::clone(&self.model);
        let (l, v) = py.detach(move || {
            let (mut l, mut v) = (vec![0.0f32; rows * model.mlp.actions()], vec![0.0f32; rows]);
            model.mlp.forward_threads(&x, rows, &mut l, &mut v, threads);
            (l, v)
        });
        lb.copy_from_slice(py, &l)?;
        vb.copy_from_slice(py, &v)?;
        Ok(())
    }
}
