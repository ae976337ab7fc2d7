//! Certifying accumulators written in any language: toolcert's subprocess protocol.
//!
//! A subject named `exec:CMD` is a program started as `sh -c CMD` that speaks the protocol of
//! [`protocol`] (specified in `docs/PROTOCOL.md`, modelled on Bowtie's IHOP) over its stdin and
//! stdout: newline-delimited JSON, `start` (versions and the implementation's metadata),
//! `configure` (level, dialect, quirks, profile), one `run` per case (answered with the
//! outcomes of each stream, stamped with when they were emitted), `stop`.
//!
//! [`ExecSubject`] implements [`Subject`] through [`Subject::observe`]: each case becomes
//! one `run` request whose reply gives exactly what [`toolcert_subject::driver::drive`] gives
//! an in-process subject (one observation per stream, stamps counting units of the level,
//! streams interleaved as the case's schedule says). The runner never drives its
//! [`Subject::factory`].
//!
//! **A hostile or broken subject never hangs or panics the harness.** Every request has a
//! timeout; a subject that exits, closes its stdout, writes something that is not one JSON
//! reply per line (garbage, non-UTF-8, a line past the size limit, the wrong `seq`) or
//! stops answering is killed (with its whole process group), the case it was running is
//! recorded as a crash naming the problem and the tail of its stderr, and the subject is
//! restarted and re-configured for the next case, within a restart budget. Once the budget
//! is spent every further case is a crash at once, so a run always finishes. The counters
//! are on [`ExecSubject::stats`].
//!
//! An `ExecSubject` is a subject like any other: the runner certifies it, and
//! `toolcert_runner::smoke` is the proof that an adapter works before anyone reads its
//! conformance.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolcert_oracle::Profile;
use toolcert_scenario::Case;
use toolcert_subject::driver::{Input, Speech};
use toolcert_subject::{
    Accumulator, BytesAccumulator, Emit, ErrorClass, Event, Factory, Level, Observation, StreamEnd,
    StreamSpec, Subject, Timed, TurnError, WireAccumulator, WireMessage,
};

mod base64;
mod process;
pub mod protocol;

pub use process::{kill_live_groups, kill_subjects_on_signals};
use process::{Proc, RecvError};
pub use protocol::{delivery_order, Implementation, PROTOCOL_VERSION};
use protocol::{
    Configure, ConfigureReply, ProfileMsg, Request, Run, RunBody, RunReply, Start, StartReply, StreamResult,
};

/// The command of an `exec:` subject name: `parse_subject("exec:python3 a.py")` is
/// `Some("python3 a.py")`; any other name, or an empty command, is `None`.
pub fn parse_subject(name: &str) -> Option<&str> {
    name.strip_prefix("exec:").map(str::trim).filter(|cmd| !cmd.is_empty())
}

/// How an [`ExecSubject`] treats its process.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// How long one request (a `configure`, one case's `run`) may take.
    pub timeout: Duration,
    /// How long the subject may take to start and answer `start` (an interpreter that
    /// loads a large library takes longer than a case).
    pub start_timeout: Duration,
    /// Restarts allowed after a crash, timeout or protocol error, over the subject's life.
    pub restarts: u32,
    /// The longest reply line accepted, in bytes.
    pub max_line: usize,
    /// How much of the end of the subject's stderr a crash report keeps, in bytes.
    pub stderr_tail: usize,
    /// The working directory of the subject (default: the harness's).
    pub dir: Option<PathBuf>,
    /// Whether runs are configured with the schema profile: `None` (the default) turns it on
    /// exactly when the subject declares the `schema` capability.
    pub schema: Option<bool>,
    /// Ask the subject for each run's peak heap (`profile.memory`; `toolcert bench --bounded`).
    pub memory: bool,
}

impl Default for ExecOptions {
    /// Requests time out after 10 s, or after `TOOLCERT_SUBJECT_TIMEOUT` seconds when that is
    /// set (a whole number, at least 1): real SDKs that take seconds to import on a loaded
    /// machine need more, and a timeout is judged a crash.
    fn default() -> Self {
        let timeout = subject_timeout().unwrap_or(Duration::from_secs(10));
        ExecOptions {
            timeout,
            start_timeout: timeout,
            restarts: 5,
            max_line: 16 << 20,
            stderr_tail: 4096,
            dir: None,
            schema: None,
            memory: false,
        }
    }
}

/// `TOOLCERT_SUBJECT_TIMEOUT`, when it names a whole number of seconds (at least 1); any
/// other value is ignored with a warning on stderr, never a silent default.
fn subject_timeout() -> Option<Duration> {
    let value = std::env::var("TOOLCERT_SUBJECT_TIMEOUT").ok()?;
    match value.trim().parse::<u64>() {
        Ok(secs) if secs >= 1 => Some(Duration::from_secs(secs)),
        _ => {
            eprintln!("toolcert: TOOLCERT_SUBJECT_TIMEOUT={value:?} is not a whole number of seconds (at least 1): requests time out after 10 s");
            None
        }
    }
}

/// Why an `exec:` subject could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot start `sh -c {cmd}`: {source}")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("`{cmd}` failed the handshake: {problem}")]
    Handshake { cmd: String, problem: String },
    #[error(
        "`{cmd}` ({name}) speaks protocol version {subject}, this toolcert speaks version {harness}: \
         update the adapter or toolcert"
    )]
    VersionMismatch { cmd: String, name: String, harness: u32, subject: u32 },
    #[error("`{cmd}` ({name}) declares no level this toolcert knows (it declares {declared:?}; known: events, wire, bytes)")]
    NoLevel { cmd: String, name: String, declared: Vec<String> },
}

/// What happened to a subject so far; a report shows it beside the conformance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecStats {
    /// `run` requests: cases asked of the subject (the runner re-runs some cases, to tell
    /// shared state from a plain bug or to check chunk invariance).
    pub runs: u64,
    /// The subject exited or closed its stdout when it owed a reply.
    pub crashes: u64,
    /// A request was not answered in time.
    pub timeouts: u64,
    /// A reply was not what the protocol says (garbage, non-UTF-8, too long, wrong seq...).
    pub protocol_errors: u64,
    /// Times the subject was started again after one of the above.
    pub restarts: u64,
    /// Cases the subject skipped.
    pub skipped: u64,
    /// Cases the subject answered with `errored`.
    pub errored: u64,
}

impl ExecStats {
    /// Crashes, timeouts and protocol errors.
    pub fn failures(&self) -> u64 {
        self.crashes + self.timeouts + self.protocol_errors
    }
}

impl fmt::Display for ExecStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} runs, {} crashes, {} timeouts, {} protocol errors, {} restarts, {} skipped, {} errored",
            self.runs,
            self.crashes,
            self.timeouts,
            self.protocol_errors,
            self.restarts,
            self.skipped,
            self.errored
        )
    }
}

/// Why a request got no usable reply.
#[derive(Debug)]
enum Failure {
    Exited { during: String, status: Option<std::process::ExitStatus>, stderr: String },
    Timeout { during: String, after: Duration, stderr: String },
    Protocol { during: String, problem: String, stderr: String },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stderr = match self {
            Failure::Exited { during, status, stderr } => {
                match status {
                    Some(s) => write!(f, "the subject exited ({s}) when it owed a reply to `{during}`")?,
                    None => write!(f, "the subject closed its stdout when it owed a reply to `{during}`")?,
                }
                stderr
            }
            Failure::Timeout { during, after, stderr } => {
                write!(f, "the subject did not answer `{during}` within {after:?}; it was killed")?;
                stderr
            }
            Failure::Protocol { during, problem, stderr } => {
                write!(f, "the subject broke the protocol answering `{during}`: {problem}")?;
                stderr
            }
        };
        if !stderr.is_empty() {
            write!(f, "; its stderr ends with:\n{}", indent(stderr))?;
        }
        Ok(())
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// What to show of a line that is not a reply.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut cut = text.len().min(120);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let more = if cut < text.len() { format!("… ({} bytes)", line.len()) } else { String::new() };
    format!("{:?}{more}", &text[..cut])
}

/// A subject in another process, spoken to through the protocol (`exec:CMD`).
pub struct ExecSubject {
    cmd: String,
    options: ExecOptions,
    implementation: Implementation,
    levels: Vec<Level>,
    state: Mutex<State>,
}

struct State {
    proc: Option<Proc>,
    /// The setting the live process was configured for.
    configured: Option<Configure>,
    /// A setting the subject refused, and why.
    refused: Option<(Configure, String)>,
    seq: u64,
    stats: ExecStats,
    last_failure: Option<String>,
    /// The `elapsed_ns` of the last run reply (None when the subject sent none).
    last_elapsed: Option<u64>,
    /// The `peak_bytes` of the last run reply.
    last_peak: Option<u64>,
}

impl fmt::Debug for ExecSubject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecSubject")
            .field("cmd", &self.cmd)
            .field("implementation", &self.implementation)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl ExecSubject {
    /// Starts `sh -c cmd` and shakes hands: the subject must answer `start` with this
    /// protocol version and declare at least one level this harness knows.
    pub fn spawn(cmd: &str, options: ExecOptions) -> Result<ExecSubject, ExecError> {
        let (proc, reply) = start(cmd, &options)?;
        let implementation = reply.implementation;
        let levels = implementation.known_levels();
        if levels.is_empty() {
            proc.stop(Some(stop_line()), Duration::from_millis(200));
            return Err(ExecError::NoLevel {
                cmd: cmd.into(),
                name: implementation.name.clone(),
                declared: implementation.levels.clone(),
            });
        }
        Ok(ExecSubject {
            cmd: cmd.into(),
            options,
            implementation,
            levels,
            state: Mutex::new(State {
                proc: Some(proc),
                configured: None,
                refused: None,
                seq: 0,
                stats: ExecStats::default(),
                last_failure: None,
                last_elapsed: None,
                last_peak: None,
            }),
        })
    }

    /// The command, as given to `sh -c`.
    pub fn command(&self) -> &str {
        &self.cmd
    }

    /// What the subject said about itself in the handshake.
    pub fn implementation(&self) -> &Implementation {
        &self.implementation
    }

    /// The counters so far.
    pub fn stats(&self) -> ExecStats {
        self.lock().stats
    }

    /// The last crash, timeout or protocol error, as reported in the case it broke.
    pub fn last_failure(&self) -> Option<String> {
        self.lock().last_failure.clone()
    }

    /// Whether the subject validates tool schemas (the `schema` capability, unless
    /// [`ExecOptions::schema`] says otherwise).
    pub fn supports_schema(&self) -> bool {
        self.options.schema.unwrap_or_else(|| self.implementation.has_capability("schema"))
    }

    /// The oracle profile to certify it with: the schema profile only when it validates.
    pub fn profile(&self) -> Profile {
        Profile { schema: self.supports_schema(), caps: self.implementation.caps, ..Default::default() }
    }

    /// The settings it declares: the events level, then each declared dialect at the wire
    /// and bytes levels it declares.
    pub fn settings(&self) -> Vec<(Level, Speech)> {
        let imp = &self.implementation;
        // A profile is run when the subject declares every wire behaviour it sends.
        let reads = |p: &toolcert_scenario::ServerProfile| p.quirks.set().all(|q| imp.has_quirk(q));
        toolcert_subject::all_settings(&self.levels, &imp.known_dialects(), &reads)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Why this setting cannot be run at all, before asking the subject.
    fn undeclared(&self, level: Level, speech: Speech) -> Option<String> {
        let imp = &self.implementation;
        if !self.levels.contains(&level) {
            return Some(format!(
                "the subject does not declare the {level} level (it declares {:?})",
                imp.levels
            ));
        }
        if level == Level::Events {
            return None;
        }
        if !imp.known_dialects().contains(&speech.dialect) {
            return Some(format!(
                "the subject does not declare the {} dialect (it declares {:?})",
                speech.dialect, imp.dialects
            ));
        }
        speech.quirks.set().find(|q| !imp.has_quirk(q)).map(|q| {
            let profile = speech
                .dialect
                .profile_of(speech.quirks)
                .map_or(String::new(), |p| format!(" (the {} profile sends it)", p.id()));
            format!("the subject does not declare the {q} quirk{profile}")
        })
    }

    /// Records a failure: counts it, kills the process (the next case restarts it) and
    /// gives the crash text.
    fn fail(&self, st: &mut State, failure: Failure) -> String {
        match failure {
            Failure::Exited { .. } => st.stats.crashes += 1,
            Failure::Timeout { .. } => st.stats.timeouts += 1,
            Failure::Protocol { .. } => st.stats.protocol_errors += 1,
        }
        if let Some(mut proc) = st.proc.take() {
            proc.kill();
        }
        st.configured = None;
        let text = failure.to_string();
        st.last_failure = Some(text.clone());
        text
    }

    /// A live, handshaken process: restarts one when the budget allows.
    fn ensure_proc(&self, st: &mut State) -> Result<(), String> {
        if st.proc.is_some() {
            return Ok(());
        }
        if st.stats.restarts >= u64::from(self.options.restarts) {
            return Err(format!(
                "the subject is out of restarts ({} allowed); its last failure: {}",
                self.options.restarts,
                st.last_failure.as_deref().unwrap_or("none")
            ));
        }
        st.stats.restarts += 1;
        match start(&self.cmd, &self.options) {
            Ok((proc, reply)) if reply.implementation == self.implementation => {
                st.proc = Some(proc);
                st.configured = None;
                Ok(())
            }
            Ok((proc, _)) => {
                let stderr = proc.stderr_tail(Duration::ZERO);
                st.proc = Some(proc);
                Err(self.fail(
                    st,
                    Failure::Protocol {
                        during: "start".into(),
                        problem: "after a restart it describes itself differently".into(),
                        stderr,
                    },
                ))
            }
            Err(e) => {
                st.stats.crashes += 1;
                let text = format!("restarting the subject failed: {e}");
                st.last_failure = Some(text.clone());
                Err(text)
            }
        }
    }

    /// Sends one request and reads its one-line reply as `T`.
    fn request<T: for<'de> Deserialize<'de>>(
        &self,
        st: &mut State,
        during: &str,
        message: Vec<u8>,
    ) -> Result<T, String> {
        let proc = st.proc.as_mut().expect("ensure_proc gave a process");
        let reply = exchange(proc, during, message, self.options.timeout);
        reply.map_err(|failure| self.fail(st, failure))
    }

    fn configure(&self, st: &mut State, configure: Configure) -> Result<(), String> {
        if st.configured == Some(configure) {
            return Ok(());
        }
        if let Some((refused, reason)) = &st.refused {
            if *refused == configure {
                return Err(reason.clone());
            }
        }
        let line = to_line(&Request::Configure(configure));
        let reply: ConfigureReply = self.request(st, "configure", line)?;
        if reply.ok {
            st.configured = Some(configure);
            return Ok(());
        }
        let reason = format!(
            "the subject refused to run at the {} level in {}: {}",
            configure.level,
            configure.dialect,
            reply.reason.as_deref().unwrap_or("no reason given")
        );
        st.refused = Some((configure, reason.clone()));
        Err(reason)
    }

    /// Asks the subject to run one case; the observations, or the crash text for every
    /// stream.
    fn run_case(
        &self,
        case: &Case,
        inputs: &[Input<'_>],
        speech: Speech,
    ) -> Result<Vec<Observation>, String> {
        let level = inputs[0].units.level();
        if let Some(reason) = self.undeclared(level, speech) {
            return Err(reason);
        }
        let mut st = self.lock();
        let st = &mut *st;
        st.stats.runs += 1;
        self.ensure_proc(st)?;
        let configure = Configure {
            level,
            dialect: speech.dialect,
            quirks: speech.quirks,
            profile: ProfileMsg { schema: self.supports_schema(), memory: self.options.memory },
        };
        self.configure(st, configure)?;
        st.seq += 1;
        let seq = st.seq;
        let during = format!("run (seq {seq})");
        let line = to_line(&Request::Run(Run::for_case(seq, case, inputs)));
        st.last_elapsed = None;
        st.last_peak = None;
        let reply: RunReply = self.request(st, &during, line)?;
        st.last_elapsed = reply.elapsed_ns;
        st.last_peak = reply.peak_bytes;
        let problem =
            |problem: String| Failure::Protocol { during: during.clone(), problem, stderr: String::new() };
        if reply.seq != seq {
            return Err(self.fail(st, problem(format!("the reply is for seq {}", reply.seq))));
        }
        match reply.body {
            RunBody::Results(results) => match observations(results, inputs) {
                Ok(obs) => Ok(obs),
                Err(p) => Err(self.fail(st, problem(p))),
            },
            RunBody::Skipped { reason } => {
                st.stats.skipped += 1;
                Err(format!("the subject skipped the case: {reason}"))
            }
            RunBody::Errored { context } => {
                st.stats.errored += 1;
                let mut text = format!(
                    "the subject errored on the case: {}",
                    context.message.as_deref().unwrap_or("no message")
                );
                if let Some(tb) = context.traceback.as_deref().filter(|t| !t.trim().is_empty()) {
                    text.push('\n');
                    text.push_str(&indent(tb.trim_end()));
                }
                Err(text)
            }
        }
    }
}

impl Drop for ExecSubject {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(proc) = st.proc.take() {
            proc.stop(Some(stop_line()), Duration::from_secs(1));
        }
    }
}

impl Subject for ExecSubject {
    fn name(&self) -> String {
        format!("exec:{}", self.cmd)
    }

    fn factory(&self) -> Box<dyn Factory> {
        Box::new(Unfed { name: self.name() })
    }

    fn levels(&self) -> Vec<Level> {
        self.levels.clone()
    }

    fn settings(&self) -> Vec<(Level, Speech)> {
        ExecSubject::settings(self)
    }

    fn metadata(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("protocol".into(), protocol::PROTOCOL_VERSION.into());
        if let Ok(imp) = serde_json::to_value(&self.implementation) {
            m.insert("implementation".into(), imp);
        }
        m
    }

    fn last_peak_bytes(&self) -> Option<u64> {
        self.lock().last_peak
    }

    fn last_elapsed(&self) -> Option<Duration> {
        self.lock().last_elapsed.map(Duration::from_nanos)
    }

    fn observe(&self, case: &Case, inputs: &[Input<'_>], speech: Speech) -> Option<Vec<Observation>> {
        if inputs.is_empty() {
            return Some(Vec::new());
        }
        Some(self.run_case(case, inputs, speech).unwrap_or_else(|crash| {
            (0..inputs.len())
                .map(|_| Observation { crash: Some(crash.clone()), ..Observation::default() })
                .collect()
        }))
    }
}

/// Starts the process and shakes hands.
fn start(cmd: &str, options: &ExecOptions) -> Result<(Proc, StartReply), ExecError> {
    let mut proc = Proc::spawn(cmd, options.dir.as_deref(), options.max_line, options.stderr_tail)
        .map_err(|source| ExecError::Spawn { cmd: cmd.into(), source })?;
    let hello =
        Request::Start(Start { version: PROTOCOL_VERSION, toolcert: env!("CARGO_PKG_VERSION").into() });
    let reply: StartReply = match exchange(&mut proc, "start", to_line(&hello), options.start_timeout) {
        Ok(reply) => reply,
        Err(failure) => {
            proc.kill();
            return Err(ExecError::Handshake { cmd: cmd.into(), problem: failure.to_string() });
        }
    };
    if reply.version != PROTOCOL_VERSION {
        proc.stop(Some(stop_line()), Duration::from_millis(200));
        return Err(ExecError::VersionMismatch {
            cmd: cmd.into(),
            name: reply.implementation.name,
            harness: PROTOCOL_VERSION,
            subject: reply.version,
        });
    }
    Ok((proc, reply))
}

/// Sends `message` and reads one reply line as `T`.
fn exchange<T: for<'de> Deserialize<'de>>(
    proc: &mut Proc,
    during: &str,
    message: Vec<u8>,
    timeout: Duration,
) -> Result<T, Failure> {
    let sent = proc.send(message);
    let line = proc.recv(timeout);
    let protocol = |proc: &mut Proc, problem: String| Failure::Protocol {
        during: during.into(),
        problem,
        stderr: proc.stderr_tail(Duration::from_millis(50)),
    };
    let line = match line {
        Ok(line) => line,
        Err(RecvError::Timeout) => {
            proc.kill();
            return Err(Failure::Timeout {
                during: during.into(),
                after: timeout,
                stderr: proc.stderr_tail(Duration::from_millis(200)),
            });
        }
        Err(RecvError::Eof) => {
            // EOF on the reply pipe is a crash at once, whether or not the process goes on
            // living: a moment to collect the status of one that is exiting, then the kill.
            let status = proc.exit_status(Duration::from_millis(200));
            let _ = sent;
            return Err(Failure::Exited {
                during: during.into(),
                status,
                stderr: proc.stderr_tail(Duration::from_millis(200)),
            });
        }
        Err(RecvError::TooLong(limit)) => {
            return Err(protocol(proc, format!("it wrote a line longer than the {limit}-byte limit")));
        }
        Err(RecvError::Io(e)) => return Err(protocol(proc, format!("reading its stdout failed: {e}"))),
    };
    let text = match std::str::from_utf8(&line) {
        Ok(text) => text,
        Err(e) => {
            return Err(protocol(
                proc,
                format!(
                    "it wrote a line that is not UTF-8 (bad byte at offset {}): {}",
                    e.valid_up_to(),
                    excerpt(&line)
                ),
            ))
        }
    };
    let depth = toolcert_oracle::nesting_depth(text);
    if depth > MAX_REPLY_DEPTH {
        return Err(protocol(proc, format!("its reply nests {depth} deep (at most {MAX_REPLY_DEPTH})")));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    // Arguments may nest as deep as the oracle reads a document, inside the reply's own
    // nesting; the scan above bounds the depth, so the parser's own limit can go.
    de.disable_recursion_limit();
    let parsed: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    match parsed.map_err(|e| (e.path().to_string(), e.into_inner())).and_then(|v| {
        de.end().map_err(|e| (".".to_string(), e))?;
        Ok(v)
    }) {
        Ok(v) => Ok(v),
        Err((path, e)) => {
            let what = match e.classify() {
                serde_json::error::Category::Data if path != "." => format!("at {path}: {e}"),
                serde_json::error::Category::Data => format!("{e}"),
                _ => format!("it is not one JSON document: {e}"),
            };
            Err(protocol(proc, format!("{what}; the line: {}", excerpt(&line))))
        }
    }
}

/// The deepest reply accepted: arguments nested as deep as the oracle reads a document
/// (docs/SPEC.md), inside a reply's own few levels.
const MAX_REPLY_DEPTH: usize = toolcert_oracle::MAX_DEPTH + 64;

fn to_line<T: Serialize>(message: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("protocol messages serialise");
    line.push(b'\n');
    line
}

fn stop_line() -> Vec<u8> {
    to_line(&Request::Stop)
}

/// The reply's results as the driver's observations; a protocol problem when they cannot be.
fn observations(results: Vec<StreamResult>, inputs: &[Input<'_>]) -> Result<Vec<Observation>, String> {
    if results.len() != inputs.len() {
        return Err(format!("{} results for a case of {} streams", results.len(), inputs.len()));
    }
    results
        .into_iter()
        .zip(inputs)
        .enumerate()
        .map(|(s, (r, input))| {
            let len = input.units.len();
            let late = r
                .outcomes
                .iter()
                .map(|o| o.units)
                .chain(r.error.as_ref().map(|e| e.units))
                .chain(r.ending.as_ref().map(|e| e.units))
                .find(|&u| u as usize > len);
            if let Some(units) = late {
                return Err(format!(
                    "stream {s}: something was emitted after {units} units, but the stream has {len}"
                ));
            }
            Ok(Observation {
                outcomes: r.outcomes.into_iter().map(|o| Timed { at: o.stamp(), value: o.value }).collect(),
                text: r.text,
                layout: r.layout,
                error: r.error.map(|e| Timed { at: e.stamp(), value: e.value }),
                crash: r.crash,
                ending: r.ending.map(|e| Timed { at: e.stamp(), value: e.value }),
                pollution: r.pollution.map(bounded_pollution),
            })
        })
        .collect()
}

/// A subject's pollution list as a finding quotes it: at most 32 entries of at most 200
/// characters each (a polluted runtime can report a great many, and one is enough to tell).
fn bounded_pollution(mut gained: Vec<String>) -> Vec<String> {
    const ENTRIES: usize = 32;
    const CHARS: usize = 200;
    let more = gained.len().saturating_sub(ENTRIES);
    gained.truncate(ENTRIES);
    for g in &mut gained {
        if let Some((cut, _)) = g.char_indices().nth(CHARS) {
            g.truncate(cut);
            g.push('…');
        }
    }
    if more > 0 {
        gained.push(format!("and {more} more"));
    }
    gained
}

/// The factory of an exec subject: never used by the runner (it calls
/// [`Subject::observe`]); its accumulators fail every turn saying so.
struct Unfed {
    name: String,
}

struct Refuse {
    name: String,
}

impl Refuse {
    fn error(&self) -> TurnError {
        TurnError::new(
            ErrorClass::Other,
            format!(
                "{} runs whole cases in its own process (Subject::observe); it cannot be driven event by event",
                self.name
            ),
        )
    }
}

impl Accumulator for Refuse {
    fn on_event(&mut self, _: &Event<'_>, _: &mut Emit) -> Result<(), TurnError> {
        Err(self.error())
    }
    fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> {
        Err(self.error())
    }
}

impl WireAccumulator for Refuse {
    fn on_wire(&mut self, _: &WireMessage, _: &mut Emit) -> Result<(), TurnError> {
        Err(self.error())
    }
    fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> {
        Err(self.error())
    }
}

impl BytesAccumulator for Refuse {
    fn on_bytes(&mut self, _: &[u8], _: &mut Emit) -> Result<(), TurnError> {
        Err(self.error())
    }
    fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> {
        Err(self.error())
    }
}

impl Factory for Unfed {
    fn make(&self, _: &StreamSpec<'_>) -> Option<Box<dyn Accumulator>> {
        Some(Box::new(Refuse { name: self.name.clone() }))
    }
    fn make_wire(&self, _: &StreamSpec<'_>) -> Option<Box<dyn WireAccumulator>> {
        Some(Box::new(Refuse { name: self.name.clone() }))
    }
    fn make_bytes(&self, _: &StreamSpec<'_>) -> Option<Box<dyn BytesAccumulator>> {
        Some(Box::new(Refuse { name: self.name.clone() }))
    }
}

/// `name version (language language_version)` and, on a second line, its levels, dialects
/// and capabilities: how `toolcert smoke` introduces an adapter.
impl std::fmt::Display for Implementation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn list(items: &[String]) -> String {
            if items.is_empty() {
                "none".into()
            } else {
                items.join(", ")
            }
        }
        write!(f, "{} {} ({}", self.name, self.version, self.language)?;
        if let Some(v) = &self.language_version {
            write!(f, " {v}")?;
        }
        writeln!(f, ")")?;
        write!(
            f,
            "  levels {}; dialects {}; capabilities {}",
            list(&self.levels),
            list(&self.dialects),
            list(&self.capabilities)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolcert_scenario::StreamSchedule;

    #[test]
    fn nesting_skips_strings() {
        assert_eq!(toolcert_oracle::nesting_depth(r#"{"a": [1, {"b": "[[[{"}], "c": "\\\"{"}"#), 3);
        assert_eq!(toolcert_oracle::nesting_depth("[]"), 1);
        assert_eq!(toolcert_oracle::nesting_depth("1"), 0);
    }

    #[test]
    fn exec_names() {
        assert_eq!(parse_subject("exec:python3 a.py"), Some("python3 a.py"));
        assert_eq!(parse_subject("exec:  node x.js "), Some("node x.js"));
        assert_eq!(parse_subject("exec:"), None);
        assert_eq!(parse_subject("builtin:reference"), None);
    }

    #[test]
    fn sequential_order_finishes_each_stream_after_its_last_unit() {
        let order = delivery_order(&StreamSchedule::Sequential, &[2, 0, 1]);
        assert_eq!(order, [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1]]);
    }

    #[test]
    fn concurrent_order_follows_the_schedule_then_round_robin() {
        let order = delivery_order(&StreamSchedule::Concurrent(vec![1, 1, 3, 0]), &[2, 3, 0]);
        // Stream 2 is empty: it finishes when made; entry 3 names stream 3 % 3 = 0.
        assert_eq!(order, [[2, 0], [1, 0], [1, 1], [0, 0], [0, 1], [0, 2], [1, 2], [1, 3]]);
    }
}
