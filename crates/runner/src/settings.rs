//! A run over every setting a subject declares: what `toolcert certify` and the Rust API's
//! `toolcert::certify(...)` both run.
//!
//! It sits above [`Certification`] (one setting) and below the facade: [`Settings::choose`]
//! picks, among [`Subject::settings`], those a [`Narrowing`] leaves (a level, a dialect, a
//! server profile); [`Settings::run`] runs the same [`Certification`] at each of them in
//! declaration order, one [`Report`] per setting, and [`Combined`] (`combined.rs`) judges
//! them as one run. Where each setting's records stream and how progress shows are the
//! caller's ([`Watch`]): the command line streams JSONL and draws a bar, a test keeps the
//! records.

use toolcert_scenario::{Dialect, Quirks, ServerProfile};
use toolcert_subject::driver::Speech;
use toolcert_subject::{Level, Subject};

use crate::report::{file_stem, setting_name};
use crate::{Certification, Combined, MoreSubjects, RecordSink, Report};

/// The server profiles a run is narrowed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileChoice {
    /// One server profile (`vllm`, `openai-chat/ollama`).
    One(&'static ServerProfile),
    /// Every profile of the dialects run (`all`), also with a dialect given.
    Every,
    /// The profile of this name in each dialect that has one, when no dialect is given and
    /// several have it (`hostile`: every dialect's hostile upstream).
    Named(&'static str),
}

impl ProfileChoice {
    /// `all`, or a profile's name (`NAME` of `dialect`, or `DIALECT/NAME`).
    ///
    /// # Errors
    /// The name is no profile (of `dialect`, when given), naming the profiles there are.
    pub fn parse(dialect: Option<Dialect>, name: &str) -> Result<ProfileChoice, SettingsError> {
        if name == "all" {
            return Ok(ProfileChoice::Every);
        }
        if dialect.is_none() {
            let mut named = toolcert_scenario::PROFILES.iter().filter(|p| p.name == name);
            if let (Some(first), Some(_)) = (named.next(), named.next()) {
                return Ok(ProfileChoice::Named(first.name));
            }
        }
        ServerProfile::find(dialect, name).map(ProfileChoice::One).map_err(SettingsError::Profile)
    }
}

/// What narrows a run to fewer settings than the subject declares (`--level`, `--dialect`,
/// `--profile`; `.level()`, `.dialect()`, `.profile()`). Nothing given: every setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Narrowing {
    pub level: Option<Level>,
    /// Only this dialect below the events level, in its provider's own profile unless a
    /// profile is given (and the events level is left out unless it is given).
    pub dialect: Option<Dialect>,
    pub profile: Option<ProfileChoice>,
}

/// Why a run over settings could not start, or certified nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A profile name that names no server profile.
    #[error("{0}")]
    Profile(String),
    /// A server profile asked for at the events level, which speaks no wire.
    #[error(
        "server profiles are spoken at the wire and bytes levels, not at the events level (profile {0})"
    )]
    ProfileAtEvents(String),
    /// A level the subject does not declare.
    #[error("{subject} is not fed at the {level} level: it declares {declared}")]
    Level { subject: String, level: Level, declared: String },
    /// Nothing the subject declares is left by the narrowing.
    #[error("{subject} declares no setting that the options choose (it declares: {declared})")]
    NoneChosen { subject: String, declared: String },
    /// No case ran in any setting (a filter that matches nothing, every case skipped).
    #[error("no case ran, so nothing was certified: {0}")]
    NothingRan(String),
}

/// One [`Certification`] at every setting chosen.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The run at each setting: its level and speech are the setting's; its `reproducers`,
    /// if any, is the directory that holds a folder per setting when there are several.
    pub base: Certification,
    /// The settings, in the order the subject declares them.
    pub chosen: Vec<(Level, Speech)>,
}

impl Settings {
    /// The settings among those `subject` declares that `narrowing` leaves: `level` and
    /// `dialect` narrow; a profile picks that profile alone; with `dialect` and no profile,
    /// its provider's own profile; the events level only when no dialect or profile is given
    /// (or it is asked for).
    ///
    /// # Errors
    /// A level the subject does not declare, a profile at the events level, or a narrowing
    /// that leaves nothing.
    pub fn choose(
        subject: &dyn Subject,
        base: Certification,
        narrowing: &Narrowing,
    ) -> Result<Settings, SettingsError> {
        let Narrowing { level: only_level, dialect: only_dialect, profile: choice } = *narrowing;
        let every_profile = choice == Some(ProfileChoice::Every);
        let profile = match choice {
            Some(ProfileChoice::One(p)) => Some(p),
            _ => None,
        };
        if let Some(p) = profile {
            if only_level == Some(Level::Events) {
                return Err(SettingsError::ProfileAtEvents(p.id()));
            }
        }
        if let Some(level) = only_level {
            let levels = subject.levels();
            if !levels.contains(&level) {
                let declared: Vec<String> = levels.iter().map(ToString::to_string).collect();
                return Err(SettingsError::Level {
                    subject: subject.name(),
                    level,
                    declared: declared.join(", "),
                });
            }
        }
        let declared = subject.settings();
        let chosen: Vec<(Level, Speech)> = declared
            .iter()
            .copied()
            .filter(|&(level, speech)| {
                if only_level.is_some_and(|l| l != level) {
                    return false;
                }
                if level == Level::Events {
                    return only_level == Some(Level::Events) || (only_dialect.is_none() && choice.is_none());
                }
                let quirks_ok = match (profile, choice) {
                    (_, Some(ProfileChoice::Named(name))) => {
                        speech.dialect.profile(name).is_some_and(|p| p.quirks == speech.quirks)
                    }
                    (Some(p), _) => speech.dialect == p.dialect && speech.quirks == p.quirks,
                    (None, _) if only_dialect.is_some() && !every_profile => {
                        speech.quirks == Quirks::default()
                    }
                    (None, _) => true,
                };
                only_dialect.is_none_or(|d| d == speech.dialect) && quirks_ok
            })
            .collect();
        if chosen.is_empty() {
            let names: Vec<String> = declared.iter().map(|&(l, s)| setting_name(l, s)).collect();
            return Err(SettingsError::NoneChosen { subject: subject.name(), declared: names.join("; ") });
        }
        Ok(Settings { base, chosen })
    }

    /// The run of setting `k`: the base at its level and speech, its reproducers in a folder
    /// of its own when there are several settings.
    pub fn run_at(&self, k: usize) -> Certification {
        let (level, speech) = self.chosen[k];
        let reproducers = self.base.reproducers.as_ref().map(|dir| match self.chosen.len() {
            1 => dir.clone(),
            _ => {
                std::path::Path::new(dir).join(file_stem(&setting_name(level, speech))).display().to_string()
            }
        });
        Certification { level, speech, reproducers, ..self.base.clone() }
    }

    /// Runs every setting in turn, one report each, with `watch` saying where each setting's
    /// records go and seeing its progress; stops at the first setting `watch` refuses to
    /// close. Generated cases are checked on `more.jobs` threads when given (the reports are
    /// the same for every job count).
    ///
    /// # Errors
    /// What [`Watch::close`] returned.
    pub fn run<W: Watch>(
        &self,
        subject: &dyn Subject,
        more: Option<&MoreSubjects<'_>>,
        watch: &mut W,
    ) -> Result<Vec<Report>, W::Stop> {
        let mut reports = Vec::with_capacity(self.chosen.len());
        for k in 0..self.chosen.len() {
            let run = self.run_at(k);
            let mut sink = watch.open(k, &run);
            let mut progress = |done, total| watch.progress(k, &run, done, total);
            let mut report = match sink.as_mut() {
                Some(sink) => run.run_streamed(subject, more, &mut progress, sink),
                None => run.run_jobs(subject, more, &mut progress),
            };
            watch.close(k, sink, &mut report)?;
            reports.push(report);
        }
        Ok(reports)
    }

    /// Runs every setting keeping every record (so each report can be written as JSONL), and
    /// judges them as one.
    pub fn run_kept(&self, subject: &dyn Subject) -> Combined {
        let reports = match self.run(subject, None, &mut Keep) {
            Ok(r) => r,
            Err(never) => match never {},
        };
        Combined::new(reports)
    }
}

/// What the caller does around each setting of [`Settings::run`].
pub trait Watch {
    /// Where a setting's records stream.
    type Sink: RecordSink;
    /// Why the run stops after a setting.
    type Stop;

    /// Before setting `k` runs: the sink its records stream to, or `None` to keep them in
    /// its report.
    fn open(&mut self, k: usize, run: &Certification) -> Option<Self::Sink>;

    /// `done` of `total` generated cases of setting `k` have run.
    fn progress(&mut self, _k: usize, _run: &Certification, _done: usize, _total: usize) {}

    /// After setting `k`: its sink to finish and its report to complete.
    ///
    /// # Errors
    /// The run stops here (an output could not be written).
    fn close(
        &mut self,
        _k: usize,
        _sink: Option<Self::Sink>,
        _report: &mut Report,
    ) -> Result<(), Self::Stop> {
        Ok(())
    }
}

/// Keeps every record in its report, and shows nothing.
pub struct Keep;

impl Watch for Keep {
    type Sink = crate::Discard;
    type Stop = std::convert::Infallible;

    fn open(&mut self, _k: usize, _run: &Certification) -> Option<crate::Discard> {
        None
    }
}

/// Why a report ran no case, in a sentence.
pub fn why_nothing_ran(r: &Report, filter: Option<&str>) -> String {
    if r.skipped.is_empty() && r.unsupported == 0 {
        return match filter {
            Some(f) => format!(
                "no case name contains {f:?} (`toolcert cases` lists the named cases; generated ones are gen/SEED/K)"
            ),
            None => "the run has no cases".into(),
        };
    }
    let reason = r
        .skipped
        .first()
        .map(|s| s.reason.clone())
        .or_else(|| r.records.iter().find_map(|c| c.reason.clone()))
        .unwrap_or_default();
    format!(
        "every case was skipped in {} ({} named, {} generated), for example: {reason}",
        r.setting_label(),
        r.skipped.len(),
        r.unsupported
    )
}

/// Judges the settings' reports as one run: an error when no case ran in any of them (a run
/// that ran nothing certifies nothing), else the verdict over all, and a line for each setting
/// where nothing ran (it stays in the verdict, its rules `n/a`, so that shards merge back).
///
/// # Errors
/// [`SettingsError::NothingRan`], saying why the first setting ran nothing.
pub fn conclude(
    reports: Vec<Report>,
    filter: Option<&str>,
) -> Result<(Combined, Vec<String>), SettingsError> {
    if reports.iter().all(Report::ran_nothing) {
        let why = reports.first().map(|r| why_nothing_ran(r, filter)).unwrap_or_default();
        return Err(SettingsError::NothingRan(why));
    }
    let idle = reports
        .iter()
        .filter(|r| r.ran_nothing())
        .map(|r| format!("{}: no case ran ({})", r.setting_label(), why_nothing_ran(r, filter)))
        .collect();
    Ok((Combined::new(reports), idle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolcert_subject::Subject;

    /// A subject declaring every level (its accumulators never run here).
    struct Everywhere;
    impl Subject for Everywhere {
        fn name(&self) -> String {
            "everywhere".into()
        }
        fn factory(&self) -> Box<dyn toolcert_subject::Factory> {
            Box::new(|_: &toolcert_subject::StreamSpec<'_>| Nop)
        }
        fn levels(&self) -> Vec<Level> {
            Level::ALL.to_vec()
        }
    }

    fn chosen(n: Narrowing) -> Result<Vec<String>, SettingsError> {
        Settings::choose(&Everywhere, Certification::default(), &n)
            .map(|s| s.chosen.iter().map(|&(l, sp)| setting_name(l, sp)).collect())
    }

    #[test]
    fn nothing_given_is_every_declared_setting() {
        let all = chosen(Narrowing::default()).unwrap();
        let declared: Vec<String> = Everywhere.settings().iter().map(|&(l, s)| setting_name(l, s)).collect();
        assert_eq!(all, declared);
        // The events level once, and each dialect's every profile at wire and bytes.
        let profiles: usize = Dialect::ALL.iter().map(|d| d.profiles().count()).sum();
        assert_eq!(all.len(), 1 + 2 * profiles);
    }

    #[test]
    fn a_dialect_alone_is_its_providers_profile_at_wire_and_bytes() {
        let n = Narrowing { dialect: Some(Dialect::OpenAiChat), ..Default::default() };
        assert_eq!(chosen(n).unwrap(), ["wire (openai-chat)", "bytes (openai-chat)"]);
    }

    #[test]
    fn a_profile_is_that_profile_alone() {
        let vllm = ProfileChoice::parse(Some(Dialect::OpenAiChat), "vllm").unwrap();
        let n = Narrowing { level: Some(Level::Bytes), profile: Some(vllm), ..Default::default() };
        assert_eq!(chosen(n).unwrap(), ["bytes (openai-chat, vllm)"]);
        let n = Narrowing { level: Some(Level::Events), profile: Some(vllm), ..Default::default() };
        assert!(matches!(chosen(n), Err(SettingsError::ProfileAtEvents(p)) if p == "openai-chat/vllm"));
    }

    #[test]
    fn every_profile_of_one_dialect() {
        let n = Narrowing {
            dialect: Some(Dialect::OpenAiChat),
            profile: Some(ProfileChoice::Every),
            level: Some(Level::Wire),
        };
        assert_eq!(chosen(n).unwrap().len(), Dialect::OpenAiChat.profiles().count());
    }

    #[test]
    fn an_undeclared_level_names_what_is_declared() {
        let events_only = toolcert_subject::subject_fn("mine", |_: &toolcert_subject::StreamSpec<'_>| Nop);
        let n = Narrowing { level: Some(Level::Bytes), ..Default::default() };
        let err = Settings::choose(&events_only, Certification::default(), &n).unwrap_err();
        assert_eq!(err.to_string(), "mine is not fed at the bytes level: it declares events");
        let n = Narrowing { dialect: Some(Dialect::Anthropic), ..Default::default() };
        let err = Settings::choose(&events_only, Certification::default(), &n).unwrap_err();
        assert!(matches!(err, SettingsError::NoneChosen { .. }), "{err}");
    }

    #[test]
    fn several_settings_keep_their_reproducers_apart() {
        let base = Certification { reproducers: Some("out".into()), ..Default::default() };
        let n = Narrowing { dialect: Some(Dialect::OpenAiChat), ..Default::default() };
        let s = Settings::choose(&Everywhere, base, &n).unwrap();
        let dirs: Vec<Option<String>> = (0..2).map(|k| s.run_at(k).reproducers).collect();
        let sep = std::path::MAIN_SEPARATOR;
        assert_eq!(
            dirs,
            [Some(format!("out{sep}wire__openai-chat_")), Some(format!("out{sep}bytes__openai-chat_"))]
        );
    }

    struct Nop;
    impl toolcert_subject::Accumulator for Nop {
        fn on_event(
            &mut self,
            _: &toolcert_subject::Event<'_>,
            _: &mut toolcert_subject::Emit,
        ) -> Result<(), toolcert_subject::TurnError> {
            Ok(())
        }
        fn finish(
            &mut self,
            _: toolcert_subject::StreamEnd,
            _: &mut toolcert_subject::Emit,
        ) -> Result<(), toolcert_subject::TurnError> {
            Ok(())
        }
    }
}
