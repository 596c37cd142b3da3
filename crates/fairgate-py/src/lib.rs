//! Thin PyO3 bindings of fairgate-core: load a scenario, run it in chunks (so Python can draw
//! a progress bar), and hand back columns as numpy arrays. No simulation logic lives here.

use fairgate_core::engine::{secs, to_secs};
use fairgate_core::results::{self, Column, Table};
use fairgate_core::scenario::{self, Scenario, ScenarioError as CoreScenarioError};
use fairgate_core::studies::StudyError;
use numpy::PyArray1;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, TryLockError};

// Named by the module Python imports them from, so that pickle (multiprocessing, Dask) finds
// them again: as `_core.ScenarioError` no error could cross a process boundary.
create_exception!(
    fairgate._core,
    ScenarioError,
    PyValueError,
    "A bad scenario: names the field path, the value and what was expected."
);
create_exception!(
    fairgate._core,
    SimulationError,
    PyRuntimeError,
    "An internal error of the simulator (a bug): please report it."
);

/// One argument, the full sentence, so `str(err)` names the field path once; the path and
/// the bare message are the attributes `path` and `message`.
fn scenario_err(e: CoreScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    Python::attach(|py| {
        let value = err.value(py);
        // Setting an attribute on a fresh exception instance cannot fail.
        let _ = value.setattr("path", &e.path);
        let _ = value.setattr("message", &e.message);
    });
    err
}

fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let msg = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        SimulationError::new_err(format!("internal error while {what}: {msg}"))
    })
}

/// Runs a study without the GIL, taking it back about every 0.2 s to ask Python for a signal
/// (Ctrl-C, or the CLI's SIGTERM): the signal's exception ends the study and is raised.
fn run_study<T: Send>(
    py: Python<'_>,
    what: &str,
    study: impl FnOnce(&mut dyn FnMut() -> bool) -> Result<T, StudyError> + Send,
) -> PyResult<T> {
    let mut raised: Option<PyErr> = None;
    let mut interrupted = || match Python::attach(|py| py.check_signals()) {
        Ok(()) => false,
        Err(signal) => {
            raised = Some(signal);
            true
        }
    };
    let result = py.detach(|| guarded(what, || study(&mut interrupted)))?;
    match result {
        Ok(done) => Ok(done),
        Err(StudyError::Input(e)) => Err(scenario_err(e)),
        Err(StudyError::Run(why)) => Err(SimulationError::new_err(why)),
        Err(StudyError::Interrupted) => Err(raised
            .unwrap_or_else(|| SimulationError::new_err("the study stopped without a signal"))),
    }
}

/// A built simulation. Run it with `run_until`, then take `results()` once. It may be shared
/// between threads: a call made while another thread runs it waits for that run to return,
/// without holding the GIL.
#[pyclass(module = "fairgate._core")]
struct Simulation {
    inner: Mutex<Option<fairgate_core::Simulation>>,
    name: String,
    seed: u64,
}

fn build(scenario: Scenario) -> PyResult<Simulation> {
    let name = scenario.name.clone();
    let seed = scenario.simulation.seed;
    let sim =
        guarded("building the scenario", || scenario::build(&scenario))?.map_err(scenario_err)?;
    Ok(Simulation {
        inner: Mutex::new(Some(sim)),
        name,
        seed,
    })
}

type Slot = Option<fairgate_core::Simulation>;

impl Simulation {
    /// Locks the simulation. While another thread holds it (a `run_until` in progress), the
    /// wait is without the GIL, so the interpreter's other threads go on meanwhile.
    fn lock(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Slot>> {
        loop {
            match self.inner.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::WouldBlock) => py.detach(|| drop(self.inner.lock())),
                Err(TryLockError::Poisoned(_)) => {
                    return Err(SimulationError::new_err(
                        "simulation poisoned by an earlier error",
                    ))
                }
            }
        }
    }

    fn with<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut fairgate_core::Simulation) -> T,
    ) -> PyResult<T> {
        let mut guard = self.lock(py)?;
        let sim = guard.as_mut().ok_or_else(|| {
            SimulationError::new_err("results were already taken from this simulation")
        })?;
        Ok(f(sim))
    }
}

#[pymethods]
impl Simulation {
    /// Runs every event up to `t` seconds (capped at the scenario's duration), without the GIL.
    /// A time before `now_s` is refused: a simulation cannot go back.
    fn run_until(&self, py: Python<'_>, t: f64) -> PyResult<()> {
        let now = self.with(py, |s| to_secs(s.now()))?;
        if !(t.is_finite() && t >= now) {
            return Err(scenario_err(CoreScenarioError::new(
                "run_until.t",
                format!("got {t}, expected a finite time in seconds, at or after now_s ({now})"),
            )));
        }
        py.detach(|| {
            let mut guard = self
                .inner
                .lock()
                .map_err(|_| SimulationError::new_err("simulation poisoned"))?;
            let sim = guard
                .as_mut()
                .ok_or_else(|| SimulationError::new_err("results were already taken"))?;
            guarded("running", || sim.run_until(secs(t)))?;
            match (sim.failure_cause(), sim.failure()) {
                (Some(cause), _) => Err(scenario_err(cause.clone())),
                (None, Some(why)) => Err(SimulationError::new_err(why.to_string())),
                (None, None) => Ok(()),
            }
        })
    }

    #[getter]
    fn now_s(&self, py: Python<'_>) -> PyResult<f64> {
        self.with(py, |s| to_secs(s.now()))
    }

    #[getter]
    fn end_s(&self, py: Python<'_>) -> PyResult<f64> {
        self.with(py, |s| to_secs(s.end()))
    }

    #[getter]
    fn events(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |s| s.events_processed())
    }

    /// Conservation violations (empty when every law holds).
    fn conservation_violations(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |s| s.conservation_violations())
    }

    /// The summary as JSON text and each table as {column: numpy array | list | (codes, categories)}.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut sim = self
            .lock(py)?
            .take()
            .ok_or_else(|| SimulationError::new_err("results were already taken"))?;
        let r = guarded("collecting results", || {
            results::collect(&mut sim, &self.name, self.seed)
        })?;
        let out = PyDict::new(py);
        out.set_item("summary", serde_json_text(&r.summary))?;
        for (name, table) in [
            ("flows", r.flows),
            ("ports", r.ports),
            ("queue_series", r.queue_series),
            ("flow_series", r.flow_series),
            ("qdisc_state", r.qdisc_state),
            ("traces", r.traces),
            ("transfers", r.transfers),
            ("drops", r.drops),
            ("class_series", r.class_series),
            ("phase_classes", r.phase_classes),
            ("phase_ports", r.phase_ports),
        ] {
            out.set_item(name, table_to_py(py, table)?)?;
        }
        Ok(out)
    }
}

fn serde_json_text(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).expect("JSON values always serialise")
}

fn table_to_py<'py>(py: Python<'py>, table: Table) -> PyResult<Bound<'py, PyList>> {
    let columns = PyList::empty(py);
    for (name, col) in table.columns {
        let value: Bound<'py, PyAny> = match col {
            Column::F64(v) => PyArray1::from_vec(py, v).into_any(),
            Column::U64(v) => PyArray1::from_vec(py, v).into_any(),
            Column::Str(v) => PyList::new(py, v)?.into_any(),
            Column::Cat { codes, categories } => PyTuple::new(
                py,
                [
                    PyArray1::from_vec(py, codes).into_any(),
                    PyList::new(py, categories)?.into_any(),
                ],
            )?
            .into_any(),
        };
        columns.append((name, value))?;
    }
    Ok(columns)
}

/// Parses and validates TOML text with `key.path=value` overrides; returns the scenario as JSON.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new()))]
fn validate(text: &str, overrides: Vec<String>) -> PyResult<String> {
    let s = guarded("validating", || scenario::parse(text, &overrides))?.map_err(scenario_err)?;
    Ok(serde_json::to_string(&s).expect("scenarios serialise"))
}

/// Parses TOML text with the core's parser, reading no field; returns the document as JSON.
#[pyfunction]
fn toml_document(text: &str) -> PyResult<String> {
    let table =
        guarded("parsing", || scenario::parse_plain_document(text))?.map_err(scenario_err)?;
    Ok(serde_json::to_string(&table).expect("TOML tables serialise"))
}

/// Parses TOML text (with overrides) and builds a simulation.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new()))]
fn load(text: &str, overrides: Vec<String>) -> PyResult<Simulation> {
    let s = guarded("parsing", || scenario::parse_for_build(text, &overrides))?
        .map_err(scenario_err)?;
    build(s)
}

#[pyfunction]
#[pyo3(signature = (points, window, trace_s, workload = "tahoe", load = 0.9))]
fn keshav_study<'py>(
    py: Python<'py>,
    points: Vec<(u32, u32)>,
    window: u32,
    trace_s: f64,
    workload: &str,
    load: f64,
) -> PyResult<Bound<'py, PyList>> {
    use fairgate_core::studies::keshav_buffers::study::{onoff_workload, sweep, tahoe_workload};
    let rows = match workload {
        "tahoe" => run_study(py, "running the study", |interrupted| {
            sweep(
                &points,
                |n, b| tahoe_workload(n, b, window, trace_s),
                interrupted,
            )
        })?,
        "onoff" => run_study(py, "running the study", |interrupted| {
            sweep(
                &points,
                |n, b| onoff_workload(n, b, window, load, trace_s),
                interrupted,
            )
        })?,
        other => {
            return Err(ScenarioError::new_err(format!(
                "`workload`: got {other:?}, expected \"tahoe\" or \"onoff\""
            )))
        }
    };
    let out = PyList::empty(py);
    for r in rows {
        let d = PyDict::new(py);
        d.set_item("conversations", r.conversations)?;
        d.set_item("buffers", r.buffers)?;
        d.set_item("structure", r.structure)?;
        d.set_item("inserts", r.inserts)?;
        d.set_item("mean_ops_per_insert", r.mean_ops_per_insert)?;
        d.set_item("max_ops_per_insert", r.max_ops_per_insert)?;
        d.set_item(
            "mean_instructions_per_insert",
            r.mean_instructions_per_insert,
        )?;
        d.set_item("drops", r.drops)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Runs the cell-level GFR network (`fairgate_core::atm`) of a scenario with an `[atm]`
/// section (TOML text plus `key.path=value` overrides); returns the results as JSON text.
/// `progress(now_s, end_s)`, when given, is called after every piece of the run.
#[pyfunction]
#[pyo3(signature = (text, overrides, progress = None))]
fn atm_run(
    py: Python<'_>,
    text: &str,
    overrides: Vec<String>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let scenario = scenario::parse(text, &overrides).map_err(scenario_err)?;
    let config = fairgate_core::scenario::atm::atm_config(&scenario).map_err(scenario_err)?;
    let mut run = fairgate_core::atm::AtmRun::new(&config);
    // In pieces of a quarter second, so that Ctrl-C (or SIGTERM in the CLI) stops it.
    let piece = std::time::Duration::from_millis(250);
    while !py.detach(|| guarded("running the cell network", || run.run_for(piece)))? {
        py.check_signals()?;
        if let Some(report) = &progress {
            report.call1(run.progress())?;
        }
    }
    let results = run.finish().map_err(SimulationError::new_err)?;
    serde_json::to_string(&results).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// [Vaidyanathan99, §2.3-2.6]'s per-packet cost of WFQ, start-time FQ, DRR and stochastic FQ
/// from the active flows at `port` of the scenario `text`, sampled every `interval_s`: one dict
/// per sample and discipline.
#[pyfunction]
#[pyo3(signature = (text, port, key = "flow", timeout_s = 0.0, interval_s = 0.1, efficiency = 1.0, mean_colliding = 1.0))]
#[allow(clippy::too_many_arguments)]
fn fq_cost_study<'py>(
    py: Python<'py>,
    text: &str,
    port: &str,
    key: &str,
    timeout_s: f64,
    interval_s: f64,
    efficiency: f64,
    mean_colliding: f64,
) -> PyResult<Bound<'py, PyList>> {
    use fairgate_core::studies::cost_model::{flow_key, port_cost_series, Classification};
    let key = flow_key(key).map_err(scenario_err)?;
    let duration = |field: &str, s: f64| {
        if s.is_finite() && s >= 0.0 {
            Ok(secs(s))
        } else {
            Err(ScenarioError::new_err(format!(
                "`{field}`: got {s}, expected seconds >= 0"
            )))
        }
    };
    let timeout = duration("study.timeout", timeout_s)?;
    let interval = duration("study.interval", interval_s)?;
    let classification = Classification::LinearSearch {
        efficiency,
        mean_colliding,
    };
    let scenario = guarded("parsing", || scenario::parse(text, &[]))?.map_err(scenario_err)?;
    let samples = run_study(py, "running the study", |interrupted| {
        port_cost_series(
            &scenario,
            port,
            key,
            timeout,
            interval,
            classification,
            interrupted,
        )
    })?;
    cost_rows(py, &samples)
}

/// One dict per sample and discipline of a cost series.
fn cost_rows<'py>(
    py: Python<'py>,
    samples: &[fairgate_core::studies::cost_model::CostSample],
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for s in samples {
        let d = PyDict::new(py);
        d.set_item("time_s", s.time_s)?;
        d.set_item("active", s.active)?;
        d.set_item("discipline", s.discipline)?;
        d.set_item("classification", s.cost.classification)?;
        d.set_item("tagging", s.cost.tagging)?;
        d.set_item("flow_state", s.cost.flow_state)?;
        d.set_item("service", s.cost.service)?;
        d.set_item("total", s.cost.total())?;
        out.append(d)?;
    }
    Ok(out)
}

/// The passive trace-driven gateway of [Vaidyanathan99, §2.5.2] over the first `packets` IP
/// packets of the trace at `path`: the summary, N(t) and table 2.1's costs at every sample.
#[pyfunction]
#[pyo3(signature = (path, format = None, key = "f0", timeout_s = 0.0, interval_s = 0.1, rate_bps = 1.544e6, buckets = 1024, packets = 500_000))]
#[allow(clippy::too_many_arguments)]
fn trace_study<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    format: Option<&str>,
    key: &str,
    timeout_s: f64,
    interval_s: f64,
    rate_bps: f64,
    buckets: u64,
    packets: u64,
) -> PyResult<Bound<'py, PyDict>> {
    use fairgate_core::studies::trace_gateway::{trace_study, TraceKey, TraceParams};
    let params = TraceParams {
        key: TraceKey::named(key).map_err(scenario_err)?,
        timeout_s,
        interval_s,
        rate_bps,
        buckets,
        packets,
    };
    let format = format.map(str::to_string);
    let study = run_study(py, "reading the trace", |interrupted| {
        trace_study(&path, format.as_deref(), params, interrupted)
    })?;
    let s = &study.summary;
    let summary = PyDict::new(py);
    for (name, value) in [
        ("packets", s.packets),
        ("non_ip", s.non_ip),
        ("reordered", s.reordered),
        ("max_flows", s.max_flows),
        ("flow_creations", s.flow_creations),
        ("collisions", s.collisions),
        ("tcp", s.tcp),
        ("udp", s.udp),
        ("other", s.other),
    ] {
        summary.set_item(name, value)?;
    }
    for (name, value) in [
        ("duration_s", s.duration_s),
        ("utilisation", s.utilisation),
        ("mean_flows", s.mean_flows),
        ("hash_efficiency", s.hash_efficiency),
        ("mean_colliding", s.mean_colliding),
    ] {
        summary.set_item(name, value)?;
    }
    let out = PyDict::new(py);
    out.set_item("summary", summary)?;
    out.set_item("active", study.active.clone())?;
    out.set_item("costs", cost_rows(py, &study.costs)?)?;
    Ok(out)
}

/// The bits per second `text` writes (`"10Mbps"`, `"1.544e6"`), in the scenario's units; its
/// range is the caller's to check.
#[pyfunction]
fn rate_in_bps(text: &str) -> PyResult<f64> {
    fairgate_core::config::units::rate_in_bps(text)
        .map_err(|why| scenario_err(CoreScenarioError::new("rate", why)))
}

/// Jain's fairness index of `values` (1 = perfectly fair), as the run summary computes it.
#[pyfunction]
fn jain_index(values: Vec<f64>) -> f64 {
    fairgate_core::stats::jain_index(&values)
}

/// Sets this process's memory limit as its host program knows it (a Dask worker's), so that
/// a scenario beyond it is refused naming it rather than the process being killed; `None`
/// clears it. `what` names the limit in errors and `how` says how to raise it.
#[pyfunction]
#[pyo3(signature = (limit_bytes, what = String::new(), how = String::new()))]
fn set_host_memory_limit(limit_bytes: Option<u64>, what: String, how: String) {
    use fairgate_core::config::host_memory::{set, HostLimit};
    set(limit_bytes.map(|bytes| HostLimit {
        bytes,
        what,
        raise: how,
    }));
}

/// A run's broken conservation laws in one sentence of bounded length (the first few, the
/// ones that locate the fault first, and how many more).
#[pyfunction]
fn conservation_brief(violations: Vec<String>) -> String {
    fairgate_core::stats::conservation_brief::brief(&violations)
}

/// Registered queue disciplines, buffer managers (for per-flow schedulers) and sources.
#[pyfunction]
fn registry<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("qdisc", fairgate_core::qdisc::QdiscSpec::KINDS.to_vec())?;
    d.set_item(
        "buffer",
        fairgate_core::qdisc::buffer::BufferSpec::KINDS.to_vec(),
    )?;
    d.set_item("source", fairgate_core::traffic::SourceSpec::KINDS.to_vec())?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(toml_document, m)?)?;
    m.add_function(wrap_pyfunction!(registry, m)?)?;
    m.add_function(wrap_pyfunction!(keshav_study, m)?)?;
    m.add(
        "MAX_TAHOE_WINDOW",
        fairgate_core::studies::keshav_buffers::study::MAX_TAHOE_WINDOW,
    )?;
    m.add_function(wrap_pyfunction!(atm_run, m)?)?;
    m.add_function(wrap_pyfunction!(fq_cost_study, m)?)?;
    m.add_function(wrap_pyfunction!(trace_study, m)?)?;
    {
        use fairgate_core::studies::trace_gateway::{MAX_BUCKETS, MAX_PACKETS};
        m.add("TRACE_MAX_BUCKETS", MAX_BUCKETS)?;
        m.add("TRACE_MAX_PACKETS", MAX_PACKETS)?;
    }
    m.add_function(wrap_pyfunction!(jain_index, m)?)?;
    m.add_function(wrap_pyfunction!(conservation_brief, m)?)?;
    m.add_function(wrap_pyfunction!(set_host_memory_limit, m)?)?;
    m.add_function(wrap_pyfunction!(rate_in_bps, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
