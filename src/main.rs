//! The `toolcert` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

// A run allocates and frees small strings and JSON values by the million; mimalloc does
// that markedly faster than the system allocator. Counted, so that `bench --bounded` can set
// an in-process subject's peak heap beside the floor's.
#[global_allocator]
static GLOBAL: toolcert::bench::cost::memory::Counting<mimalloc::MiMalloc> =
    toolcert::bench::cost::memory::Counting(mimalloc::MiMalloc);
use std::path::{Path, PathBuf};

use toolcert::runner::baseline::Baseline;
use toolcert::{Certification, Grade, Profile, Report};

/// Exit codes, one meaning each (a report's verdict gives 0, 1, 3 or 4:
/// [`toolcert::runner::Verdict::code`]).
mod exit {
    /// The subject conforms at the required grade (or every failure is in the baseline).
    pub const CONFORMS: u8 = 0;
    /// The subject broke at least one invariant.
    pub const VIOLATIONS: u8 = 1;
    /// The command line was wrong (clap uses 2 as well), or an input file was.
    pub const USAGE: u8 = 2;
    /// The subject crashed or timed out (or could not be started).
    pub const CRASHED: u8 = 3;
    /// An output could not be written.
    pub const INTERNAL: u8 = 5;
    /// Stdout was closed by its reader (`| head`): toolcert stops quietly, as a process
    /// killed by SIGPIPE would (128 + 13).
    pub const CLOSED_STDOUT: u8 = 141;
}

const EXIT_CODES: &str = "Exit codes (one meaning each):
  0  conforms at the required grade (or every failure is listed in the --baseline)
  1  violations: the subject broke at least one invariant (not listed in the baseline)
  2  usage error: a bad option, an unknown subject, an unreadable or malformed input file,
     or a run in which no case ran (a --case filter that matches nothing, every case skipped)
  3  the subject crashed or timed out: its only unexpected failures are SUBJECT-CRASH
  4  stale baseline: nothing unexpected failed, but a baseline entry no longer fails
  5  internal error: an output could not be written (stdout, --out, --write-baseline)
When several apply, the first of 5, 1, 3, 4 wins. A reader that closes stdout early
(`toolcert certify | head`) ends toolcert quietly with 141, as SIGPIPE ends other tools;
the subject is stopped and its process group killed first.";

const ZOO_COLUMNS: &str = "Columns of the text table:
  killed    killed (an invariant that must catch it did, on every seed), WRONG (it failed, but
            not on an invariant that must catch it) or SURVIVED (no failure within --max-cases)
  median    generated cases up to and including the first failure, median over the seeds
  max       the same, the most over the seeds
  events    provider-neutral events of the smallest shrunk counterexample over the seeds
  bytes     argument bytes of that counterexample
  invariants violated   what its first failures broke
`--format markdown` (docs/ZOO.md) adds fragments, findings, the invariants that must catch each
mutant, its bug and seed chapter.";

/// A whole-number option. clap alone reads `--cases -1` as an unknown flag `-1`; this names
/// what is wrong with the value instead.
fn whole<T: TryFrom<i128>>(s: &str) -> Result<T, String> {
    let n: i128 = s.trim().parse().map_err(|_| format!("expected a whole number, got {s:?}"))?;
    if n < 0 {
        return Err(format!("must be 0 or more, got {n}"));
    }
    T::try_from(n).map_err(|_| format!("{n} is too large"))
}

#[derive(Parser)]
#[command(name = "toolcert", version, about = "Certifies streaming tool-call accumulators", after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the seeds' named cases (and generated ones) against a subject and report which
    /// invariants hold. With no options, certifies the built-in reference accumulator.
    #[command(after_help = EXIT_CODES)]
    Certify(CertifyArgs),
    /// Merge reports (JSONL, or JSON summaries) of one implementation: the shards of a run
    /// (`certify --shard K/N --out DIR`) into the report of the whole run, or runs of other
    /// seeds into one. Prints text unless --format says otherwise. Exits with the merged
    /// report's verdict; shards short of the whole run exit 2 where it would be 0, unless
    /// --allow-partial.
    #[command(after_help = EXIT_CODES)]
    Merge(MergeArgs),
    /// Print an implementation × invariant table (must and should status per cell, with
    /// failure counts) from several reports; reports of the same implementation and setting
    /// are merged into one column.
    Matrix(MatrixArgs),
    /// What a release fixed, broke and kept: compares the bugs (by id, stable across caller
    /// policies, server profiles and versions) and tier verdicts of OLD's reports with NEW's,
    /// per subject, over the settings both have.
    #[command(after_help = DIFF_HELP)]
    Diff(DiffArgs),
    /// Hunt every mutant of the zoo with generated cases and print how fast each dies, which
    /// invariants it breaks and how small its shrunk counterexample is.
    #[command(after_help = ZOO_COLUMNS)]
    Zoo(ZooArgs),
    /// Show what a subject makes of a recorded `.sse` stream: its tool calls (ids, names,
    /// arguments), text and errors, and, where an expectation file (`X.expect.json`) sits
    /// beside `X.sse`, the verdict. The dialect is detected unless given.
    Replay(ReplayArgs),
    /// The `.sse` corpus: `write` renders the named cases of every dialect as raw bytes with
    /// expectation files; `check` replays every file through the reference and the oracle.
    Corpus(CorpusArgs),
    /// Price a subject: its own time per turn on the fixed, versioned cost suite (one call of
    /// 1 KiB to 512 KiB in 13- and 1-byte fragments, many calls, long text), beside a floor
    /// measured in the same run, with the growth exponent of each series and a verdict:
    /// linear, or superlinear (exit 1).
    #[command(after_help = BENCH_HELP)]
    Bench(BenchArgs),
    /// Check that an adapter speaks the subprocess protocol, with a tiny fixed suite at every
    /// level and dialect it declares, before anyone reads its conformance.
    Smoke(SmokeArgs),
    /// List the invariants with their rules and seed chapters (the full rules: docs/SPEC.md).
    Invariants,
    /// List the named cases.
    Cases,
    /// List the server profiles: each dialect's real servers and what their wire sends
    /// (docs/SPEC.md, "Server profiles"), as `certify --profile` and `replay --profile` name
    /// them.
    Profiles(ProfilesArgs),
    /// Run a local mock provider (127.0.0.1 only) that streams the named cases, generated
    /// cases or recorded `.sse` files to a real client, for debugging the client by hand.
    #[command(after_help = serve_cmd::AFTER_HELP)]
    Serve(serve_cmd::ServeArgs),
    /// Build the certification site from JSONL reports: a static, self-contained HTML site
    /// (no scripts, no external resources, relative links) with a front grid of SDKs by tier,
    /// a page per SDK (its bugs, most serious first, each with its smallest reproducer's bytes,
    /// replay command and a standalone script; the cost rows; what was not tested) and an SVG
    /// badge per SDK and tier.
    #[command(after_help = SITE_HELP)]
    Site(SiteArgs),
}

const SITE_HELP: &str = "\
Reports are named SDK--DIALECT[--PROFILE]--POLICY.jsonl (`certify --format jsonl`); the SDK is
the file name before the first `--`, POLICY `as-handed-over` or `documented`. The reproducers'
bytes are read from REPRODUCERS/SDK/DIALECT[--PROFILE]/POLICY/failures/CASE.sse (where the
findings' replay commands point). Notes: NOTES/BUG-xxxxxxxx.md is shown under that bug on every
SDK page it appears on; NOTES/SDK.md opens the SDK's page, its `## ID` sections (finding or bug
ids) go under the bug with that id or symptom, on that page only.
Writes OUT/index.html, OUT/sdk/SDK.html and OUT/badges/SDK-TIER.svg; the same inputs give the
same bytes.
Exit codes: 0 built; 2 a missing or malformed report, no report at all, an unreadable notes
directory, or a note naming a bug no report (of its SDK) contains; 5 the site could not be
written.";

#[derive(clap::Args)]
struct SiteArgs {
    /// The directory of JSONL reports.
    #[arg(long, value_name = "DIR")]
    reports: PathBuf,
    /// Where the site is written (created if needed; files of the same names are replaced).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The saved reproducers (scenarios and the .sse bytes fed).
    #[arg(long, value_name = "DIR", default_value = "corpus/findings")]
    reproducers: PathBuf,
    /// The notes: BUG-xxxxxxxx.md per bug id, SDK.md per SDK.
    #[arg(long, value_name = "DIR", default_value = "docs/certification/notes")]
    notes: PathBuf,
}

fn site(args: SiteArgs) -> ExitCode {
    let opts = toolcert_site::Options {
        reports: args.reports,
        out: args.out,
        reproducers: args.reproducers,
        notes: args.notes,
    };
    match toolcert_site::build(&opts) {
        Ok(b) => {
            eprintln!(
                "toolcert: wrote {} files to {}: {} SDKs, {} bugs, from {} reports",
                b.files,
                opts.out.display(),
                b.sdks,
                b.bugs,
                b.reports
            );
            ExitCode::from(exit::CONFORMS)
        }
        Err(e @ toolcert_site::Error::Input(_)) => {
            eprintln!("toolcert: {e}");
            ExitCode::from(exit::USAGE)
        }
        Err(e @ toolcert_site::Error::Output(_)) => {
            eprintln!("toolcert: {e}");
            ExitCode::from(exit::INTERNAL)
        }
    }
}

const BENCH_HELP: &str = "\
The floor is what any accumulator that keeps the raw buffer must spend: each call's fragments
joined, one strict parse. In process (built-in subjects) it is Rust (push_str + serde_json). For
an exec: subject it is the adapter package's reference in the subject's own language, run the
same way: `python3 -m toolcert_adapter.floor` for a Python subject (the interpreter of the
subject's command), the npm package's `toolcert-adapter/floor` for a JavaScript one; --floor
names another, --floor none prices without one. An exec: subject must send `elapsed_ns` in its
run replies (docs/PROTOCOL.md; the adapter packages do), so process start and the pipes are not
priced.

Every series runs to its top tier, so a busy machine cannot turn a quadratic cost linear: a
run longer than half of --budget is repeated once only, and the subject and the floor run in
turn, each keeping its least time. A tier whose one run is predicted over 20 budgets (from the
tiers before it: a cubic subject) is not run; the report says where a series stopped.

With --bounded: the large streams of a hostile upstream instead (docs/SPEC.md, \"The bounded
rule\"). A built-in subject's peak heap is counted by the binary's allocator beside the floor's;
a crash, a wrong dispatch, a series stopped before its top or a heap past 8 times the floor's
(plus 1 MiB) breaks the rule.

Exit codes: 0 linear on every series (with --bounded: the rule holds), 1 superlinear (the rule
is broken), 2 usage error or inconclusive, 3 the subject (or the floor) crashed or cannot be
timed.";

#[derive(clap::Args)]
struct BenchArgs {
    /// The subject: builtin:reference, builtin:mutant/NAME (the cost mutants:
    /// builtin:mutant/rebuilt-buffer, builtin:mutant/reparse-every-fragment), exec:COMMAND.
    #[arg(long, default_value = "builtin:reference")]
    subject: String,
    /// The level to feed it at (default: events if it takes them, else the first level it
    /// declares).
    #[arg(long)]
    level: Option<toolcert::subject::Level>,
    /// The dialect below the events level (default: the first the subject declares there).
    #[arg(long)]
    dialect: Option<toolcert::scenario::Dialect>,
    /// The floor: exec:COMMAND, or `none` (default: see below).
    #[arg(long)]
    floor: Option<String>,
    /// Seconds a tier's repetitions may take: a run longer than half of it runs once. A series
    /// stops before a tier whose one run is predicted over 20 budgets.
    #[arg(long, default_value_t = 10.0)]
    budget: f64,
    /// Add the 4 MiB tier to the call series.
    #[arg(long)]
    large: bool,
    /// Run the bounded suite instead: the large streams of a hostile upstream (10,000 calls, a
    /// million one-byte fragments, 100 MiB of arguments, a 200 MB line, depth 100,000), and
    /// judge the bounded rule (docs/SPEC.md): each stream dispatched right or refused cleanly,
    /// time no steeper than the floor's, peak heap within 8 times the floor's plus 1 MiB.
    #[arg(long, conflicts_with = "large")]
    bounded: bool,
    /// `text` or `json`.
    #[arg(long, value_enum, default_value_t = BenchFormat::Text)]
    format: BenchFormat,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum BenchFormat {
    Text,
    Json,
}

#[derive(clap::Args)]
struct ProfilesArgs {
    /// Only this dialect's profiles.
    #[arg(long)]
    dialect: Option<toolcert::scenario::Dialect>,
    /// Only their ids (`openai-chat/vllm`), one a line, for scripts.
    #[arg(long)]
    names: bool,
}

#[derive(clap::Args)]
struct SmokeArgs {
    /// The adapter: `exec:COMMAND`.
    #[arg(long)]
    subject: String,
}

#[derive(clap::Args)]
struct ReplayArgs {
    /// The recorded stream (exact bytes, as `curl -N` records them).
    file: PathBuf,
    #[arg(long, default_value = "builtin:reference")]
    subject: String,
    /// anthropic, openai-chat, openai-responses, bedrock or gemini (detected from the stream if not given).
    #[arg(long)]
    dialect: Option<toolcert::scenario::Dialect>,
    /// The server profile that sent the stream (detected from the bytes if not given, and
    /// printed; the reference reads every profile of a dialect alike).
    #[command(flatten)]
    profile: ProfileArgs,
    /// Feed the bytes in chunks of this many bytes (0: all at once).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole::<usize>)]
    chunk: usize,
    /// `text`, or `json` (outcomes in the expectation files' shape).
    #[arg(long, default_value = "text")]
    format: String,
}

#[derive(clap::Args)]
struct CorpusArgs {
    #[command(subcommand)]
    action: CorpusAction,
    /// The corpus directory.
    #[arg(long, global = true, default_value = "corpus")]
    dir: PathBuf,
}

#[derive(Subcommand)]
enum CorpusAction {
    /// Render every named case of every dialect into DIR as `.sse` + `.expect.json`.
    Write,
    /// Replay every `.sse` under DIR through the reference (whole, byte by byte, in 7-byte
    /// chunks), judge it against its expectation, and flag files their scenario no longer
    /// matches.
    Check,
}

/// The server profile options of `certify` and `replay`.
#[derive(clap::Args)]
struct ProfileArgs {
    /// Only this server profile: one real server's wire behaviour (docs/SPEC.md, "Server
    /// profiles"). NAME of the --dialect given, or DIALECT/NAME.
    #[arg(long, value_name = "NAME", long_help = profile_help())]
    profile: Option<String>,
    /// Former name of `--profile openai-chat/ollama` (index 0 for every parallel call).
    #[arg(long, hide = true)]
    chat_index_zero: bool,
    /// Former name of `--profile openai-chat/vllm` (id, type and name on every entry).
    #[arg(long, hide = true)]
    chat_repeat_fields: bool,
}

/// `--profile`'s long help: what a profile is, and every profile by dialect.
fn profile_help() -> String {
    format!(
        "Only this server profile: one real server's wire behaviour (docs/SPEC.md, \"Server \
         profiles\"). NAME of the --dialect given, or DIALECT/NAME. A client cannot tell which \
         server it reads, so every profile of a dialect is judged by the same rules. `all`: \
         every profile of the dialects run; a name several dialects have, with no --dialect \
         (`hostile`, `openai`): each one's. Default: every profile of every dialect, or with \
         --dialect its provider's own profile only.\n\nThe profiles: {}.",
        toolcert::scenario::ServerProfile::help_list()
    )
}

impl ProfileArgs {
    /// The profile chosen, if any (`--chat-index-zero` and `--chat-repeat-fields` name the
    /// openai-chat profiles that send those shapes).
    fn chosen(
        &self,
        dialect: Option<toolcert::scenario::Dialect>,
    ) -> Result<Option<&'static toolcert::scenario::ServerProfile>, String> {
        use toolcert::scenario::{Dialect, ServerProfile};
        let former = match (self.chat_index_zero, self.chat_repeat_fields) {
            (false, false) => None,
            (true, false) => Some("openai-chat/ollama"),
            (false, true) => Some("openai-chat/vllm"),
            (true, true) => {
                return Err(
                    "--chat-index-zero and --chat-repeat-fields name two profiles; give one --profile".into(),
                )
            }
        };
        let name =
            match (&self.profile, former) {
                (Some(_), Some(_)) => return Err(
                    "give --profile alone (--chat-index-zero and --chat-repeat-fields are its former names)"
                        .into(),
                ),
                (Some(n), None) => n.as_str(),
                (None, Some(f)) => {
                    if dialect.is_some_and(|d| d != Dialect::OpenAiChat) {
                        return Err(format!(
                            "{f} is a profile of openai-chat, not of {}",
                            dialect.unwrap_or_default()
                        ));
                    }
                    f
                }
                (None, None) => return Ok(None),
            };
        if name == "all" {
            return Err("`--profile all` runs several settings; it does not choose one".into());
        }
        ServerProfile::find(dialect, name).map(Some)
    }

    /// The profiles `certify` is narrowed to: one, every one (`all`), or none given.
    fn narrowing(
        &self,
        dialect: Option<toolcert::scenario::Dialect>,
    ) -> Result<Option<toolcert::runner::ProfileChoice>, String> {
        match self.profile.as_deref() {
            Some("all") => return Ok(Some(toolcert::runner::ProfileChoice::Every)),
            // A name several dialects have, with no dialect: each one's (`hostile`).
            Some(name) if dialect.is_none() && !self.chat_index_zero && !self.chat_repeat_fields => {
                if let Ok(toolcert::runner::ProfileChoice::Named(n)) =
                    toolcert::runner::ProfileChoice::parse(None, name)
                {
                    return Ok(Some(toolcert::runner::ProfileChoice::Named(n)));
                }
            }
            _ => {}
        }
        Ok(self.chosen(dialect)?.map(toolcert::runner::ProfileChoice::One))
    }
}

#[derive(clap::Args)]
struct CertifyArgs {
    /// The implementation under test: `builtin:reference` (the reference accumulator),
    /// `builtin:mutant/NAME` (a mutant of the zoo: `toolcert zoo` lists them),
    /// `builtin:mutant-base` (the mutants' bug-free base) or `exec:CMD` (any program speaking
    /// docs/PROTOCOL.md, started as `sh -c CMD`)
    #[arg(long, default_value = "builtin:reference")]
    subject: String,
    /// Generated cases to run per setting, besides the named ones.
    #[arg(long, default_value_t = DEFAULT_CASES, allow_negative_numbers = true, value_parser = whole::<usize>)]
    cases: usize,
    /// Seed for the generated cases: the same seed runs the same cases.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = whole::<u64>)]
    seed: u64,
    /// Only run cases whose name contains this.
    #[arg(long = "case")]
    case: Option<String>,
    /// Only this level: `events` (provider-neutral), `wire` (one dialect's messages: SSE
    /// events, or Bedrock's event-stream frames) or `bytes` (the raw bytes of the stream in
    /// transport chunks cut anywhere). Default: every level the subject declares.
    #[arg(long)]
    level: Option<toolcert::subject::Level>,
    /// Only this dialect at the wire and bytes levels: anthropic, openai-chat,
    /// openai-responses, bedrock, gemini. Default: every dialect the subject declares, each in every
    /// server profile it declares (with --dialect alone: the dialect's provider's own profile).
    #[arg(long)]
    dialect: Option<toolcert::scenario::Dialect>,
    #[command(flatten)]
    profile: ProfileArgs,
    /// The grade the subject must reach: `must` (nothing unfinished dispatched, everything
    /// finished dispatched exactly) or `should` (per-call accounting as well).
    #[arg(long, value_enum, default_value_t = GradeArg::Should)]
    grade: GradeArg,
    /// Do not judge calls against their tools' JSON Schemas (for subjects that do not validate).
    #[arg(long)]
    no_schema: bool,
    /// The most bytes a generated huge document has (4096 to 67108864). Above the default
    /// 64 KiB, huge documents are also frequent: `--args-size 1048576` is the size profile
    /// that finds a buffer limit anywhere up to 1 MiB.
    #[arg(long, default_value_t = 65536, value_parser = clap::value_parser!(u64).range(4096..=67_108_864))]
    args_size: u64,
    /// Run only the shard K of N: named case i and generated case k when i (or k) mod N is
    /// K-1. `toolcert merge` puts the shards' reports back together.
    #[arg(long, value_name = "K/N")]
    shard: Option<toolcert::runner::Shard>,
    #[command(flatten)]
    output: OutputArgs,
    /// Threads that check generated cases, each with its own subject (a subprocess subject
    /// starts one process per job). Default: the available cores. Reports are the same for
    /// every job count.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Run only this case, saved as JSON (a report's `failures[].scenario`, or a reproducer
    /// that --out wrote), at the --level and --dialect given.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Also price the subject on the cost suite, as `toolcert bench` does (docs/COST.md), at
    /// one setting: events if it is among those run, else the first. The cost goes into that
    /// setting's report (every format, and the JSONL footer); a superlinear cost counts
    /// against the verdict (exit 1).
    #[arg(long)]
    cost: bool,
    /// Also run the bounded suite, as `toolcert bench --bounded` does (docs/SPEC.md, "The
    /// bounded rule": 10,000 calls, a million fragments, 100 MiB of arguments, a 200 MB line,
    /// depth 100,000, each beside the floor's time and heap), at one setting: the first
    /// hostile profile's among those run (`--profile hostile`), else the one --cost prices.
    /// The verdict goes into that setting's report, in the hostile upstream's tier; a broken
    /// rule counts against the verdict (exit 1).
    #[arg(long)]
    bounded: bool,
    /// With --cost or --bounded: seconds a tier's repetitions may take (a run longer than half
    /// of it runs once; a series stops before a tier predicted over 20 budgets).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    cost_budget: f64,
    /// With --cost or --bounded: the floor, exec:COMMAND or `none` (default: as `toolcert
    /// bench`).
    #[arg(long, value_name = "FLOOR")]
    cost_floor: Option<String>,
    /// How long a subprocess subject may take to start, and to answer one request, in
    /// seconds (default: TOOLCERT_SUBJECT_TIMEOUT, else 10). A real SDK that imports slowly
    /// on a loaded machine needs more.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: Option<u64>,
}

/// How a report is printed, saved and judged.
#[derive(clap::Args)]
struct OutputArgs {
    /// text (for a terminal), json (the summary), jsonl (one record per case), junit (JUnit
    /// XML for CI) or markdown.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Failing cases to print in full (text and markdown formats).
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = whole::<usize>)]
    show: usize,
    /// Also write DIR/report.jsonl and, for each failure kept in full, a reproducer:
    /// DIR/failures/CASE.json (replay it with --scenario) and the SSE bytes fed (CASE.sse,
    /// wire and bytes levels) or the transcript (CASE.txt, events level).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Judge the failures against an expected-failures baseline (JSON): a listed failure
    /// passes, an unlisted one fails, a listed one that now passes is stale (exit 4).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write the current failures as a baseline file, then exit 0 (or 5 if it cannot be
    /// written).
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
}

#[derive(clap::Args)]
struct MergeArgs {
    /// Reports to merge: JSONL (`--out DIR`'s report.jsonl, `--format jsonl`) or JSON.
    #[arg(required = true, value_name = "REPORT")]
    reports: Vec<PathBuf>,
    /// Accept shards that do not make the whole run (two of three): the merged verdict says
    /// which are missing either way; without this such a merge exits 2 instead of 0.
    #[arg(long)]
    allow_partial: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(clap::Args)]
struct MatrixArgs {
    /// Reports: JSONL (`--out DIR`'s report.jsonl, `--format jsonl`) or JSON.
    #[arg(required = true, value_name = "REPORT")]
    reports: Vec<PathBuf>,
    /// markdown, or html (a self-contained page).
    #[arg(long, value_enum, default_value_t = MatrixFormat::Markdown)]
    format: MatrixFormat,
    /// Hide the invariants that every implementation passes.
    #[arg(long)]
    pruned: bool,
    /// Put reports of one setting judged by different suites (suite digests) side by side;
    /// the matrix then says so. Without it such reports are refused (exit 2).
    #[arg(long)]
    allow_mixed_suites: bool,
}

const DIFF_HELP: &str = "\
OLD and NEW are each a report file (JSONL, or a JSON summary; one report, or one per setting)
or a directory of JSONL reports (*.jsonl). Reports pair by subject and setting: the subject is
the implementation the adapter names in its handshake (the same across its versions), else the
subject's name, and when each side holds one subject the two are taken as releases of one
another; the setting is the level, dialect, server profile and caller policy. Reports of one
subject and setting on one side (shards, seeds) are merged first. Settings on one side only
are listed, not compared. A bug is new when NEW has it in a compared setting and OLD in none,
fixed the other way round, kept when both have it. A warning says when two reports were judged
by different suites (suite digests) or NEW ran fewer cases: a bug absent from NEW may then not
have been run.

Exit codes:
  0  no new bug
  1  new bugs: NEW has a bug OLD has not, counting at the grade NEW's report requires
  2  bad input: an unreadable or malformed report file or directory (the message names the
     file and what is wrong), or no subject and setting in common
  5  the output could not be written";

#[derive(clap::Args)]
struct DiffArgs {
    /// The reports before: a report file, or a directory of JSONL reports.
    #[arg(value_name = "OLD")]
    old: PathBuf,
    /// The reports after.
    #[arg(value_name = "NEW")]
    new: PathBuf,
    /// text, json, or markdown (a section to paste into release notes).
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
}

#[derive(Clone, Copy, ValueEnum)]
enum DiffFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Clone, Copy, ValueEnum)]
enum MatrixFormat {
    Markdown,
    Html,
}

#[derive(clap::Args)]
struct ZooArgs {
    /// Seeds to hunt each mutant with (1..=N).
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = whole::<u64>)]
    seeds: u64,
    /// Generated cases per seed before a mutant counts as surviving.
    #[arg(long, default_value_t = 200, allow_negative_numbers = true, value_parser = whole::<usize>)]
    max_cases: usize,
    /// Only this mutant (and print its shrunk counterexample).
    #[arg(long)]
    mutant: Option<String>,
    /// text (the table, columns below), json (one object per mutant) or markdown (docs/ZOO.md).
    #[arg(long, value_enum, default_value_t = ZooFormat::Text)]
    format: ZooFormat,
    /// Threads, each hunting one mutant at a time. Default: the available cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ZooFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Clone, Copy, ValueEnum)]
enum GradeArg {
    Must,
    Should,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Jsonl,
    Junit,
    Markdown,
}

/// Writes to stdout, flushed. A reader that went away (`toolcert certify | head`) ends
/// toolcert quietly with [`exit::CLOSED_STDOUT`], as a SIGPIPE would have; any other failure
/// (a full disk, `> /dev/full`) is one line and [`exit::INTERNAL`]. SIGPIPE itself stays
/// ignored (Rust's default), so that a subject that stops reading its stdin is an `EPIPE`
/// in the harness, never the end of it.
fn write_stdout(args: std::fmt::Arguments<'_>) -> Result<(), ExitCode> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(ExitCode::from(exit::CLOSED_STDOUT)),
        Err(e) => {
            eprintln!("toolcert: cannot write to stdout: {e}");
            Err(ExitCode::from(exit::INTERNAL))
        }
    }
}

/// `print!` that returns the exit code of a failed write from the enclosing function (whose
/// locals, a running subject among them, are then dropped: stopped and killed).
macro_rules! out {
    ($($arg:tt)*) => {
        if let Err(code) = write_stdout(format_args!($($arg)*)) {
            return code;
        }
    };
}

/// `println!`, as [`out!`].
macro_rules! outln {
    () => { out!("\n") };
    ($($arg:tt)*) => { out!("{}\n", format_args!($($arg)*)) };
}

fn main() -> ExitCode {
    // mimalloc asks for transparent huge pages on the arenas it reserves, so every 2 MiB
    // region a thread touched counts in full: `--jobs 2` measured 64-85 MB max RSS on 100,000
    // events-level cases, 26 MB without (and no slower). Memory must stay bounded on long runs.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    // Ctrl-C reaches toolcert but not a subject (it has its own process group): kill the
    // subjects' groups on the way out.
    toolcert::exec::kill_subjects_on_signals();
    // A subject's panic is caught by the driver and reported as SUBJECT-CRASH; the default
    // hook would also print it (with a backtrace per case under RUST_BACKTRACE).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !toolcert::subject::driver::feeding() {
            default_hook(info);
        }
    }));
    let cli = Cli::parse();
    // `toolcert` alone is `toolcert certify`.
    let command = cli.command.or_else(|| Cli::parse_from(["toolcert", "certify"]).command);
    match command.expect("certify parses with its defaults") {
        Command::Certify(args) => certify(args),
        Command::Merge(args) => merge(args),
        Command::Matrix(args) => matrix(args),
        Command::Diff(args) => diff(args),
        Command::Zoo(args) => zoo(args),
        Command::Replay(args) => replay(args),
        Command::Smoke(args) => smoke(args),
        Command::Bench(args) => bench(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Corpus(args) => corpus(args),
        Command::Site(args) => site(args),
        Command::Invariants => {
            for inv in toolcert::Invariant::ALL {
                outln!("{:<17} [{}] {}\n{:<17} why: {}", inv.id(), inv.seed(), inv.rule(), "", inv.why());
            }
            outln!(
                "\nThe must and should parts of each rule, what exercises it, the ground truth and the \
                 number rule: docs/SPEC.md"
            );
            ExitCode::from(exit::CONFORMS)
        }
        Command::Cases => {
            for c in toolcert::gen::named::all() {
                outln!("{:<40} {}", c.case.name, c.about);
            }
            ExitCode::from(exit::CONFORMS)
        }
        Command::Profiles(args) => {
            let chosen =
                toolcert::scenario::PROFILES.iter().filter(|p| args.dialect.is_none_or(|d| d == p.dialect));
            for p in chosen {
                if args.names {
                    outln!("{}", p.id());
                } else {
                    outln!(
                        "{:<36} {}\n{:<36} sends: {}\n{:<36} shown in: {}",
                        p.id(),
                        p.servers,
                        "",
                        p.shapes,
                        "",
                        p.sources
                    );
                }
            }
            ExitCode::from(exit::CONFORMS)
        }
    }
}

/// What `open_subject` learned from a subprocess's handshake.
struct ExecFacts {
    cmd: String,
    language: String,
    /// It validates schemas.
    schema: bool,
}

/// Resolves a subject name (`exec:CMD` started with `options`); the exit code and a line on
/// stderr when it cannot: 3 for a subprocess that did not start, 2 for an unknown name.
fn open_subject(
    name: &str,
    options: toolcert::exec::ExecOptions,
) -> Result<(Box<dyn toolcert::subject::Subject>, Option<ExecFacts>), ExitCode> {
    match toolcert::exec::parse_subject(name) {
        Some(cmd) => match toolcert::exec::ExecSubject::spawn(cmd, options) {
            Ok(s) => {
                let facts = ExecFacts {
                    cmd: cmd.to_string(),
                    language: s.implementation().language.clone(),
                    schema: s.supports_schema(),
                };
                Ok((Box::new(s), Some(facts)))
            }
            Err(e) => {
                eprintln!("toolcert: {e}");
                Err(ExitCode::from(exit::CRASHED))
            }
        },
        None => toolcert::subject_by_name(name).map(|s| (s, None)).map_err(|e| {
            eprintln!("toolcert: {e}");
            ExitCode::from(exit::USAGE)
        }),
    }
}

fn certify(args: CertifyArgs) -> ExitCode {
    // A subprocess says whether it validates schemas; judge schemas only if it does.
    let mut schema = !args.no_schema;
    let mut exec_options = toolcert::exec::ExecOptions::default();
    if let Some(secs) = args.timeout {
        exec_options.timeout = std::time::Duration::from_secs(secs);
        exec_options.start_timeout = exec_options.timeout;
    }
    let (subject, exec) = match open_subject(&args.subject, exec_options.clone()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    schema &= exec.as_ref().is_none_or(|e| e.schema);
    let grade = match args.grade {
        GradeArg::Must => Grade::Must,
        GradeArg::Should => Grade::Should,
    };
    let run_in = |level, speech| Certification {
        cases: args.cases,
        seed: args.seed,
        named: true,
        filter: args.case.clone(),
        profile: Profile { schema, ..Default::default() },
        level,
        speech,
        grade,
        shard: args.shard.unwrap_or_default(),
        regressions: Vec::new(),
        args_size: args.args_size as usize,
        reproducers: None,
    };
    if args.scenario.is_some() && (args.cost || args.bounded) {
        eprintln!(
            "toolcert: --cost and --bounded price the subject on a suite of their own; they do not go with --scenario"
        );
        return ExitCode::from(exit::USAGE);
    }
    if let Some(path) = &args.scenario {
        // One saved case, at the level and dialect given (events and anthropic by default).
        let speech = toolcert::subject::driver::Speech {
            dialect: args.dialect.unwrap_or_default(),
            quirks: match args.profile.chosen(args.dialect) {
                Ok(p) => p.map_or_else(Default::default, |p| p.quirks),
                Err(e) => {
                    eprintln!("toolcert: {e}");
                    return ExitCode::from(exit::USAGE);
                }
            },
        };
        let run = run_in(args.level.unwrap_or_default(), speech);
        return replay_scenario(&*subject, path, run.setting(), args.output.format);
    }
    let narrowing = match args.profile.narrowing(args.dialect) {
        Ok(profile) => toolcert::runner::Narrowing { level: args.level, dialect: args.dialect, profile },
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let mut base = run_in(Default::default(), Default::default());
    base.reproducers = args.output.out.as_ref().map(|d| d.display().to_string());
    let settings = match toolcert::runner::Settings::choose(&*subject, base, &narrowing) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let count = settings.chosen.len();
    if count > 1 && (args.output.baseline.is_some() || args.output.write_baseline.is_some()) {
        eprintln!(
            "toolcert: a baseline belongs to one setting, and this run has {count}: give --level (and --dialect) \
             to choose one"
        );
        return ExitCode::from(exit::USAGE);
    }
    // Read the baseline before the run: a bad file is a usage error, found at once.
    let baseline = match args.output.baseline.as_deref().map(read_baseline).transpose() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    // Priced before the cases run: a streamed run writes its footer, which carries the cost,
    // as it ends.
    let priced =
        settings.chosen.iter().position(|(l, _)| *l == toolcert::subject::Level::Events).unwrap_or(0);
    let cost = match args
        .cost
        .then(|| certify_cost(&args, settings.chosen[priced], exec.as_ref(), false))
        .transpose()
    {
        Ok(c) => c,
        Err(code) => return code,
    };
    // The bounded suite is the hostile upstream's: priced at the first hostile setting run.
    let bounded_at = settings.chosen.iter().position(|(_, speech)| speech.quirks.hostile).unwrap_or(priced);
    let bounded = match args
        .bounded
        .then(|| certify_cost(&args, settings.chosen[bounded_at], exec.as_ref(), true))
        .transpose()
    {
        Ok(c) => c,
        Err(code) => return code,
    };
    let jobs = args.jobs.map_or_else(default_jobs, usize::from);
    let make = || -> Result<Box<dyn toolcert::subject::Subject>, String> {
        match toolcert::exec::parse_subject(&args.subject) {
            Some(cmd) => toolcert::exec::ExecSubject::spawn(cmd, exec_options.clone())
                .map(|s| Box::new(s) as Box<dyn toolcert::subject::Subject>)
                .map_err(|e| e.to_string()),
            None => toolcert::subject_by_name(&args.subject),
        }
    };
    let more = toolcert::runner::MoreSubjects { jobs, make: &make };
    let mut watch = CliWatch {
        out: args.output.out.clone(),
        stdout: args.output.format == Format::Jsonl,
        count,
        priced,
        cost,
        bounded_at,
        bounded,
        // The progress bar is for people at a terminal: never with machine-readable output.
        quiet: args.output.format != Format::Text,
        started: std::time::Instant::now(),
        setting_started: std::time::Instant::now(),
        bar: None,
    };
    let reports = settings.run(&*subject, (jobs > 1).then_some(&more), &mut watch);
    if let Some(b) = watch.bar.take() {
        b.finish_and_clear();
    }
    let reports = match reports {
        Ok(r) => r,
        Err(code) => return code,
    };
    // A run that ran nothing certifies nothing: a typo in CI must not pass. A setting where
    // nothing ran stays in the report (its rules n/a), so that shards merge back into the
    // whole run; it is said here.
    let mut combined = match toolcert::runner::settings::conclude(reports, args.case.as_deref()) {
        Ok((combined, idle)) => {
            for line in idle {
                eprintln!("toolcert: {line}");
            }
            combined
        }
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    if combined.settings.len() == 1 {
        let report = combined.settings.pop().expect("one report");
        return emit(report, &args.output, baseline);
    }
    emit_combined(combined, &args.output)
}

/// What `certify` does around each setting: streams its JSONL (to `--out` and, with
/// `--format jsonl`, to stdout) as the run goes, so the run keeps no record per case; draws
/// the progress bar; hands the price to the priced setting.
struct CliWatch {
    out: Option<PathBuf>,
    stdout: bool,
    /// Settings in the run.
    count: usize,
    /// The setting `--cost` priced, and its price.
    priced: usize,
    cost: Option<toolcert::runner::cost::CostReport>,
    /// The setting `--bounded` priced, and its price on the bounded suite.
    bounded_at: usize,
    bounded: Option<toolcert::runner::cost::CostReport>,
    quiet: bool,
    started: std::time::Instant,
    setting_started: std::time::Instant,
    bar: Option<indicatif::ProgressBar>,
}

impl toolcert::runner::settings::Watch for CliWatch {
    type Sink = StreamOut;
    type Stop = ExitCode;

    fn open(&mut self, k: usize, _run: &Certification) -> Option<StreamOut> {
        self.setting_started = std::time::Instant::now();
        let priced = self.priced_at(k);
        Some(StreamOut {
            dir: self.out.as_ref().map(|d| (d.clone(), self.count > 1)),
            file: None,
            stdout: self.stdout.then(|| {
                toolcert::runner::jsonl::JsonlWriter::new(std::io::BufWriter::new(std::io::stdout()))
                    .with_cost(priced.clone())
            }),
            error: None,
            priced,
        })
    }

    fn progress(&mut self, k: usize, run: &Certification, done: usize, total: usize) {
        if self.quiet || self.started.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        let b = self.bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} cases  {msg}")
                    .expect("a valid template"),
            );
            b
        });
        b.set_length(total as u64);
        b.set_prefix(format!("[{}/{}] {}", k + 1, self.count, setting_name(run.level, run.speech)));
        b.set_position(done as u64);
        // The average rate since this setting started: the bar appears after a second of
        // work, and indicatif's own estimate read that first jump from 0 as millions of
        // cases a second.
        if done > 0 {
            let rate = done as f64 / self.setting_started.elapsed().as_secs_f64().max(1e-3);
            let left = total.saturating_sub(done) as f64 / rate;
            b.set_message(format!("{rate:.0} cases/s  eta {}s", left.ceil() as u64));
        }
    }

    fn close(&mut self, k: usize, sink: Option<StreamOut>, report: &mut Report) -> Result<(), ExitCode> {
        if let Some(sink) = sink {
            sink.finish()?;
        }
        let priced = self.priced_at(k);
        report.cost = priced.cost;
        report.bounded = priced.bounded;
        Ok(())
    }
}

impl CliWatch {
    /// The prices setting `k`'s report carries.
    fn priced_at(&self, k: usize) -> toolcert::runner::jsonl::Priced {
        toolcert::runner::jsonl::Priced {
            cost: self.cost.as_ref().filter(|_| k == self.priced).cloned(),
            bounded: self.bounded.as_ref().filter(|_| k == self.bounded_at).cloned(),
        }
    }
}

/// `certify --cost` (and, `bounded`, `--bounded`): prices a fresh copy of the subject at
/// `setting` on the cost suite (the bounded suite), with the floor and timeouts of `toolcert
/// bench`; the exit code when it cannot be priced.
fn certify_cost(
    args: &CertifyArgs,
    (level, speech): (toolcert::subject::Level, toolcert::subject::driver::Speech),
    exec: Option<&ExecFacts>,
    bounded: bool,
) -> Result<toolcert::runner::cost::CostReport, ExitCode> {
    use toolcert::bench::cost;
    if !(args.cost_budget > 0.0 && args.cost_budget.is_finite()) {
        eprintln!("toolcert: --cost-budget must be a positive number of seconds (got {})", args.cost_budget);
        return Err(ExitCode::from(exit::USAGE));
    }
    let budget = std::time::Duration::from_secs_f64(args.cost_budget);
    let options = || bounded_exec_options(budget, bounded);
    let (subject, _) = open_subject(&args.subject, options())?;
    let exec_language = exec.map(|e| (e.cmd.clone(), e.language.clone()));
    let floor = Floor::open(args.cost_floor.as_deref(), exec_language.as_ref(), options())?;
    let opts = cost::CostOptions {
        level,
        speech,
        budget,
        bounded,
        timeout: Some(cost_exec_options(budget).timeout),
        ..Default::default()
    };
    let (suite, version) = if bounded {
        ("bounded suite", cost::BOUNDED_SUITE_VERSION)
    } else {
        ("cost suite", cost::SUITE_VERSION)
    };
    eprintln!(
        "toolcert: pricing {} on {suite} v{version} at the {} level (a tier predicted over {} s is skipped)",
        subject.name(),
        setting_name(level, speech),
        args.cost_budget * cost::STOP_AFTER_BUDGETS
    );
    cost::price(&*subject, floor.as_floor(), &opts).map_err(|e| {
        eprintln!("toolcert: cannot price {}: {e}", subject.name());
        ExitCode::from(exit::CRASHED)
    })
}

/// Where a streamed run's JSONL goes: `--out DIR`'s report.jsonl (DIR/SETTING/report.jsonl
/// over several settings), and stdout with `--format jsonl`.
struct StreamOut {
    /// The directory, and whether each setting has a folder of its own.
    dir: Option<(PathBuf, bool)>,
    file: Option<toolcert::runner::jsonl::JsonlWriter<std::io::BufWriter<std::fs::File>>>,
    stdout: Option<toolcert::runner::jsonl::JsonlWriter<std::io::BufWriter<std::io::Stdout>>>,
    /// The --out file could not be opened.
    error: Option<String>,
    /// The prices its footer carries (`--cost` and `--bounded`, at this setting).
    priced: toolcert::runner::jsonl::Priced,
}

impl toolcert::runner::RecordSink for StreamOut {
    fn header(&mut self, report: &Report) {
        if let Some((dir, per_setting)) = &self.dir {
            let dir = match per_setting {
                true => dir.join(toolcert::runner::report::file_stem(&report.setting_label())),
                false => dir.clone(),
            };
            let path = dir.join("report.jsonl");
            match std::fs::create_dir_all(&dir).and_then(|()| std::fs::File::create(&path)) {
                Ok(f) => {
                    self.file = Some(
                        toolcert::runner::jsonl::JsonlWriter::new(std::io::BufWriter::new(f))
                            .with_cost(self.priced.clone()),
                    )
                }
                Err(e) => self.error = Some(format!("cannot write {}: {e}", path.display())),
            }
        }
        self.file.as_mut().into_iter().for_each(|w| w.header(report));
        self.stdout.as_mut().into_iter().for_each(|w| w.header(report));
    }

    fn case(&mut self, record: &toolcert::runner::CaseRecord) {
        self.file.as_mut().into_iter().for_each(|w| w.case(record));
        self.stdout.as_mut().into_iter().for_each(|w| w.case(record));
    }

    fn footer(&mut self, report: &Report) {
        self.file.as_mut().into_iter().for_each(|w| w.footer(report));
        self.stdout.as_mut().into_iter().for_each(|w| w.footer(report));
    }

    fn stopped(&self) -> bool {
        self.error.is_some()
            || self.file.as_ref().is_some_and(|w| w.stopped())
            || self.stdout.as_ref().is_some_and(|w| w.stopped())
    }
}

impl StreamOut {
    /// Flushes both; the exit code of the first failure (a closed stdout as a SIGPIPE would
    /// end toolcert, an --out file that could not be written as an internal error).
    fn finish(self) -> Result<(), ExitCode> {
        if let Some(w) = self.stdout {
            match w.finish() {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Err(ExitCode::from(exit::CLOSED_STDOUT))
                }
                Err(e) => {
                    eprintln!("toolcert: cannot write to stdout: {e}");
                    return Err(ExitCode::from(exit::INTERNAL));
                }
            }
        }
        let file =
            self.file.map(|w| w.finish().map(drop).map_err(|e| format!("cannot write report.jsonl: {e}")));
        if let Some(e) = self.error.or(file.and_then(Result::err)) {
            eprintln!("toolcert: {e}");
            return Err(ExitCode::from(exit::INTERNAL));
        }
        Ok(())
    }
}

/// The cores this process may use: the default of `--jobs`.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Generated cases per setting when `--cases` is not given: enough that every rule is
/// exercised in a few seconds for an in-process subject.
const DEFAULT_CASES: usize = 1000;

use toolcert::runner::report::setting_name;

/// Prints and saves the verdict over several settings; the exit code of the worst.
fn emit_combined(combined: toolcert::runner::Combined, output: &OutputArgs) -> ExitCode {
    let printed = match output.format {
        Format::Text => combined.to_text(output.show),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&combined).expect("a report serialises");
            s.push('\n');
            s
        }
        // A streamed run printed its streams as it ran.
        Format::Jsonl if combined.settings.iter().all(Report::is_streamed) => String::new(),
        Format::Jsonl => {
            let mut all = String::new();
            for r in &combined.settings {
                match toolcert::runner::jsonl::to_jsonl(r) {
                    Ok(s) => all += &s,
                    Err(e) => {
                        eprintln!("toolcert: {e}");
                        return ExitCode::from(exit::USAGE);
                    }
                }
            }
            all
        }
        Format::Junit => toolcert::runner::formats::to_junit_many(&combined.settings),
        Format::Markdown => combined.to_markdown(),
    };
    out!("{printed}");
    if let Some(dir) = &output.out {
        for r in &combined.settings {
            let sub = dir.join(toolcert::runner::report::file_stem(&r.setting_label()));
            match write_out(&sub, r) {
                Ok(files) => eprintln!(
                    "toolcert: wrote {} and {} reproducer files",
                    sub.join("report.jsonl").display(),
                    files
                ),
                Err(e) => {
                    eprintln!("toolcert: {e}");
                    return ExitCode::from(exit::INTERNAL);
                }
            }
        }
    }
    ExitCode::from(combined.verdict().code())
}

/// `--out DIR`: the reproducers, and report.jsonl unless the run streamed it there already;
/// the number of reproducer files.
fn write_out(dir: &Path, report: &Report) -> Result<usize, String> {
    if report.is_streamed() {
        return toolcert::runner::out::write_reproducers(dir, report).map(|f| f.len());
    }
    toolcert::runner::out::write_out(dir, report).map(|f| f.len() - 1)
}

fn read_baseline(path: &Path) -> Result<Baseline, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
    Baseline::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Judges, prints and saves a report as `output` says; the exit code of its verdict.
fn emit(mut report: Report, output: &OutputArgs, baseline: Option<Baseline>) -> ExitCode {
    if let Some(b) = &baseline {
        report.baseline = Some(b.check(&report));
    }
    let printed = match output.format {
        Format::Text => report.to_text(output.show),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report).expect("a report serialises");
            s.push('\n');
            s
        }
        Format::Jsonl if report.is_streamed() => String::new(),
        Format::Jsonl => match toolcert::runner::jsonl::to_jsonl(&report) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("toolcert: {e}");
                return ExitCode::from(exit::USAGE);
            }
        },
        Format::Junit => toolcert::runner::formats::to_junit(&report),
        Format::Markdown => toolcert::runner::formats::to_markdown(&report, output.show),
    };
    out!("{printed}");
    let mut internal = false;
    if let Some(dir) = &output.out {
        match write_out(dir, &report) {
            Ok(files) => eprintln!(
                "toolcert: wrote {} and {} reproducer files",
                dir.join("report.jsonl").display(),
                files
            ),
            Err(e) => {
                eprintln!("toolcert: {e}");
                internal = true;
            }
        }
    }
    if let Some(path) = &output.write_baseline {
        let written = Baseline::from_report(&report);
        match std::fs::write(path, written.to_json()) {
            Ok(()) => eprintln!(
                "toolcert: wrote {} expected failures to {}",
                written.expected_failures.len(),
                path.display()
            ),
            Err(e) => {
                eprintln!("toolcert: cannot write {}: {e}", path.display());
                internal = true;
            }
        }
    }
    if internal {
        return ExitCode::from(exit::INTERNAL);
    }
    if output.write_baseline.is_some() {
        return ExitCode::from(exit::CONFORMS);
    }
    ExitCode::from(report.verdict().code())
}

/// Reads report files (JSONL or JSON), each holding one report or one per setting.
fn read_reports(paths: &[PathBuf]) -> Result<Vec<Report>, String> {
    let mut all = Vec::new();
    for path in paths {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let reader = std::io::BufReader::with_capacity(1 << 16, file);
        all.extend(
            toolcert::runner::jsonl::read_reports_from(reader)
                .map_err(|e| format!("{}: {e}", path.display()))?,
        );
    }
    Ok(all)
}

fn merge(args: MergeArgs) -> ExitCode {
    let baseline = match args.output.baseline.as_deref().map(read_baseline).transpose() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    // Reports of several settings (a run over all of them, its shards) merge setting by
    // setting into one verdict over all.
    let merged = read_reports(&args.reports).and_then(|reports| {
        // Settings side by side are one run only when subject, grade and schema profile agree.
        let run_of = |r: &Report| (r.subject.clone(), r.grade, r.schema);
        if let Some(other) = reports.iter().find(|r| run_of(r) != run_of(&reports[0])) {
            return Err(format!(
                "cannot merge reports of different runs (subject, grade and schema profile must agree):\n  {}\n  {}",
                toolcert::runner::setting_key(&reports[0]),
                toolcert::runner::setting_key(other)
            ));
        }
        let mut groups: Vec<(String, Vec<Report>)> = Vec::new();
        for r in reports {
            let key = toolcert::runner::setting_key(&r);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(r),
                None => groups.push((key, vec![r])),
            }
        }
        groups.into_iter().map(|(_, g)| toolcert::runner::merge(g)).collect::<Result<Vec<_>, _>>()
    });
    match merged {
        Ok(reports) if reports.len() == 1 => {
            let report = reports.into_iter().next().expect("one report");
            let missing = toolcert::runner::missing_shards(&report);
            let code = emit(report, &args.output, baseline);
            if missing.is_empty() || args.allow_partial || code != ExitCode::from(exit::CONFORMS) {
                return code;
            }
            let list: Vec<String> = missing.iter().map(usize::to_string).collect();
            eprintln!(
                "toolcert: incomplete merge: shards {} missing (--allow-partial accepts it)",
                list.join(", ")
            );
            ExitCode::from(exit::USAGE)
        }
        Ok(reports) if baseline.is_some() || args.output.write_baseline.is_some() => {
            eprintln!(
                "toolcert: a baseline belongs to one setting, and these reports have {}",
                reports.len()
            );
            ExitCode::from(exit::USAGE)
        }
        Ok(reports) => {
            let combined = toolcert::runner::Combined::new(reports);
            let missing = combined.missing_shards();
            let code = emit_combined(combined, &args.output);
            if missing.is_empty() || args.allow_partial || code != ExitCode::from(exit::CONFORMS) {
                return code;
            }
            let list: Vec<String> = missing.iter().map(usize::to_string).collect();
            eprintln!(
                "toolcert: incomplete merge: shards {} missing (--allow-partial accepts it)",
                list.join(", ")
            );
            ExitCode::from(exit::USAGE)
        }
        Err(e) => {
            eprintln!("toolcert: {e}");
            ExitCode::from(exit::USAGE)
        }
    }
}

fn matrix(args: MatrixArgs) -> ExitCode {
    let allow_mixed = args.allow_mixed_suites;
    match read_reports(&args.reports)
        .and_then(|reports| toolcert::runner::matrix::Matrix::build_checked(reports, allow_mixed))
    {
        Ok(m) => {
            match args.format {
                MatrixFormat::Markdown => out!("{}", m.to_markdown(args.pruned)),
                MatrixFormat::Html => out!("{}", m.to_html(args.pruned)),
            }
            ExitCode::from(exit::CONFORMS)
        }
        Err(e) => {
            eprintln!("toolcert: {e}");
            ExitCode::from(exit::USAGE)
        }
    }
}

/// Runs one saved scenario against the subject, at the setting's level and dialect.
fn diff(args: DiffArgs) -> ExitCode {
    use toolcert::runner::diff;
    let (old, new) = (args.old.display().to_string(), args.new.display().to_string());
    let built = diff::read_side(&args.old)
        .and_then(|o| Ok((o, diff::read_side(&args.new)?)))
        .and_then(|(o, n)| diff::Diff::build(&old, o, &new, n));
    let d = match built {
        Ok(d) => d,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    match args.format {
        DiffFormat::Text => out!("{}", d.to_text()),
        DiffFormat::Markdown => out!("{}", d.to_markdown()),
        DiffFormat::Json => {
            for w in d.warnings() {
                eprintln!("toolcert: warning: {w}");
            }
            outln!("{}", serde_json::to_string_pretty(&d).expect("a diff serialises"))
        }
    }
    ExitCode::from(d.code())
}

fn replay_scenario(
    subject: &dyn toolcert::subject::Subject,
    path: &Path,
    setting: toolcert::runner::Setting,
    format: Format,
) -> ExitCode {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("toolcert: cannot read {}: {e}", path.display());
            return ExitCode::from(exit::USAGE);
        }
    };
    // Parsed as it is read (a scenario may carry megabytes of arguments), after a look at its
    // first byte to say what else a file holds.
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let first = {
        use std::io::BufRead as _;
        loop {
            match reader.fill_buf() {
                Ok([]) => break None,
                Ok(buf) => match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                    Some(i) => break Some(buf[i]),
                    None => {
                        let n = buf.len();
                        reader.consume(n);
                    }
                },
                Err(e) => {
                    eprintln!("toolcert: cannot read {}: {e}", path.display());
                    return ExitCode::from(exit::USAGE);
                }
            }
        }
    };
    let kind = match first {
        Some(b'{') => None,
        Some(b'[') => Some("an array"),
        Some(b'"') => Some("a string"),
        Some(b'-' | b'0'..=b'9') => Some("a number"),
        Some(b't' | b'f') => Some("a boolean"),
        Some(b'n') => Some("null"),
        None => Some("nothing (it is empty)"),
        Some(_) => Some("something that is not JSON"),
    };
    if let Some(kind) = kind {
        eprintln!(
            "toolcert: {} holds {kind}, not a scenario: a scenario is a JSON object with \"name\" and \
             \"streams\" (a report's failures[].scenario)",
            path.display()
        );
        return ExitCode::from(exit::USAGE);
    }
    let case: toolcert::scenario::Case = match serde_json::from_reader(reader) {
        Ok(c) => c,
        Err(e) if e.is_data() => {
            eprintln!("toolcert: {} is not a scenario (a report's failures[].scenario): {e}", path.display());
            return ExitCode::from(exit::USAGE);
        }
        Err(e) => {
            eprintln!("toolcert: {} is not JSON ({e}), so not a scenario", path.display());
            return ExitCode::from(exit::USAGE);
        }
    };
    if let Err(e) = case.validate() {
        eprintln!("toolcert: {} is not a valid scenario: {e}", path.display());
        return ExitCode::from(exit::USAGE);
    }
    let checked = toolcert::runner::check(subject, &case, setting);
    if let Some(reason) = &checked.unsupported {
        eprintln!("toolcert: the scenario cannot be spoken at this level and dialect: {reason}");
        return ExitCode::from(exit::USAGE);
    }
    match format {
        Format::Json | Format::Jsonl => outln!(
            "{}",
            serde_json::json!({"case": case.name, "violations": checked.violations, "observations": checked.observations})
        ),
        Format::Text | Format::Junit | Format::Markdown => {
            out!("{}", toolcert::render::transcript(&case));
            for v in &checked.violations {
                outln!("{v}");
            }
            outln!("{}", if checked.violations.is_empty() { "conforms" } else { "violations found" });
        }
    }
    ExitCode::from(if checked.violations.is_empty() { exit::CONFORMS } else { exit::VIOLATIONS })
}

fn zoo(args: ZooArgs) -> ExitCode {
    let zoo = toolcert::zoo::Zoo { seeds: (1..=args.seeds.max(1)).collect(), max_cases: args.max_cases };
    if let Some(m) = args
        .mutant
        .as_deref()
        .and_then(|name| toolcert::mutants::cost_zoo().into_iter().find(|m| m.name == name))
    {
        // A cost mutant has no invariant to break: it is priced, not hunted.
        let row = toolcert::zoo::cost_row(&m);
        match args.format {
            ZooFormat::Json => outln!("{}", serde_json::to_string_pretty(&row).expect("rows serialise")),
            ZooFormat::Markdown => out!("{}", toolcert::zoo::cost_to_markdown(std::slice::from_ref(&row))),
            ZooFormat::Text => out!("{}", toolcert::zoo::cost_to_text(std::slice::from_ref(&row))),
        }
        return ExitCode::from(if row.killed { exit::CONFORMS } else { exit::VIOLATIONS });
    }
    let rows = match &args.mutant {
        Some(name) => match toolcert::mutants::by_name(name) {
            Some(m) => vec![zoo.run_one(&m)],
            None => {
                eprintln!("toolcert: no mutant {name:?}; `toolcert zoo` lists them");
                return ExitCode::from(exit::USAGE);
            }
        },
        None => {
            let bar = if matches!(args.format, ZooFormat::Text) {
                indicatif::ProgressBar::new(toolcert::mutants::zoo().len() as u64)
            } else {
                indicatif::ProgressBar::hidden()
            };
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} mutants  {msg}")
                    .expect("a valid template"),
            );
            let rows = zoo.run_jobs(args.jobs.map_or_else(default_jobs, usize::from), &mut |name| {
                bar.set_message(name.to_string());
                bar.inc(1);
            });
            bar.finish_and_clear();
            rows
        }
    };
    match args.format {
        ZooFormat::Text => {
            out!("{}", toolcert::zoo::to_text(&rows, &zoo));
            if args.mutant.is_some() {
                if let Some((case, violations)) = rows.first().and_then(|r| r.counterexample.as_ref()) {
                    outln!(
                        "\nshrunk counterexample ({}):\n{}",
                        case.name,
                        toolcert::render::transcript(case)
                    );
                    // Below the events level the bug is in how the stream is spelled: show
                    // the bytes as the mutant received them too.
                    let mutant = args.mutant.as_deref().and_then(toolcert::mutants::by_name);
                    if let Some(m) = mutant.filter(|m| m.level != toolcert::subject::Level::Events) {
                        if let Ok(text) = toolcert::runner::out::as_sent(case, m.dialect, m.quirks) {
                            let framing = if m.dialect == toolcert::scenario::Dialect::Bedrock {
                                "event stream, a message a line"
                            } else {
                                "SSE"
                            };
                            outln!("as sent ({} {framing}):", m.dialect.name());
                            out!("{text}");
                        }
                    }
                    for v in violations {
                        outln!("{v}");
                    }
                }
            }
        }
        ZooFormat::Json => outln!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise")),
        ZooFormat::Markdown => out!("{}", toolcert::zoo::to_markdown(&rows, &zoo)),
    }
    // The whole zoo also prices its cost mutants (text and Markdown; the JSON stays the
    // correctness rows, and `zoo --mutant NAME --format json` gives a cost row).
    let cost = if args.mutant.is_none() { toolcert::zoo::cost_rows() } else { Vec::new() };
    match args.format {
        ZooFormat::Text if !cost.is_empty() => out!("{}", toolcert::zoo::cost_to_text(&cost)),
        ZooFormat::Markdown if !cost.is_empty() => out!("{}", toolcert::zoo::cost_to_markdown(&cost)),
        _ => {}
    }
    let all_dead = rows.iter().all(|r| r.killed && r.expected_caught) && cost.iter().all(|c| c.killed);
    ExitCode::from(if all_dead { exit::CONFORMS } else { exit::VIOLATIONS })
}

fn replay(args: ReplayArgs) -> ExitCode {
    let subject = match toolcert::subject_by_name(&args.subject) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let profile = match args.profile.chosen(args.dialect) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let replayed = match toolcert::corpus::replay(&args.file, &*subject, args.dialect, profile, args.chunk) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    if args.format == "json" {
        outln!("{}", serde_json::to_string_pretty(&replayed.to_json()).expect("JSON values serialise"));
    } else {
        let o = &replayed.observation;
        let profile = match (replayed.profile, replayed.profile_detected) {
            (Some(p), false) => format!(", profile {}", p.name),
            (Some(p), true) => format!(", profile {} as its bytes show", p.name),
            (None, _) => ", a mix of behaviours no single profile sends".to_owned(),
        };
        outln!("{} ({}{profile}) through {}", args.file.display(), replayed.dialect, subject.name());
        for t in &o.outcomes {
            match &t.value {
                toolcert::subject::Outcome::Dispatchable { call_id, name, args } => {
                    outln!("  dispatch  {name}  {call_id}  {args}")
                }
                toolcert::subject::Outcome::SchemaError { call_id, name, args, errors } => {
                    outln!("  schema error  {name}  {call_id}  {args}  ({})", errors.join("; "))
                }
                toolcert::subject::Outcome::Failed { reason, call_id, name, raw } => outln!(
                    "  not run ({})  {}  {}  raw {}",
                    reason.as_str(),
                    name.as_deref().unwrap_or("?"),
                    call_id.as_deref().unwrap_or("?"),
                    toolcert::oracle::quote(raw)
                ),
            }
        }
        if o.outcomes.is_empty() {
            outln!("  no tool calls");
        }
        if !replayed.terminal {
            outln!(
                "  no terminal event arrived: the stream ends without a stop reason or an error \
                 (empty or cut short), so nothing in it may be dispatched"
            );
        }
        if !o.text.is_empty() {
            outln!("  text {}", toolcert::oracle::quote(&o.text));
        }
        let (others, chunks) = &replayed.other_choices;
        if !others.is_empty() {
            let list: Vec<String> = others.iter().map(u64::to_string).collect();
            outln!(
                "  skipped: choice {} ({chunks} chunks): a stream of several choices (n > 1); toolcert reads \
                 choice 0 only, each other choice is another completion",
                list.join(", ")
            );
        }
        if let Some(e) = &o.error {
            outln!("  turn failed: {}", e.value);
        }
        if let Some(c) = &o.crash {
            outln!("  crashed: {c}");
        }
        if let Some((path, v)) = &replayed.verdict {
            if v.is_empty() {
                outln!("conforms to {}", path.display());
            } else {
                outln!("does not conform to {}:", path.display());
                for v in v {
                    outln!("  {v}");
                }
            }
        }
    }
    let ok = replayed.verdict.as_ref().is_none_or(|(_, v)| v.is_empty());
    ExitCode::from(if ok { exit::CONFORMS } else { exit::VIOLATIONS })
}

fn corpus(args: CorpusArgs) -> ExitCode {
    match args.action {
        CorpusAction::Write => match toolcert::corpus::write(&args.dir) {
            Ok(n) => {
                outln!("wrote {n} cases under {}", args.dir.display());
                ExitCode::from(exit::CONFORMS)
            }
            Err(e) => {
                eprintln!("toolcert: {e}");
                ExitCode::from(exit::INTERNAL)
            }
        },
        CorpusAction::Check => corpus_check(&args.dir),
    }
}

fn corpus_check(dir: &Path) -> ExitCode {
    match toolcert::corpus::walk(dir) {
        Ok(walk) => {
            for skipped in &walk.skipped {
                eprintln!("toolcert: skipped {skipped}");
            }
            if walk.files.is_empty() {
                eprintln!("toolcert: no .sse files under {}", dir.display());
                return ExitCode::from(exit::USAGE);
            }
        }
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    }
    match toolcert::corpus::check(dir, &toolcert::reference::ReferenceSubject) {
        Ok(checked) => {
            let bad: Vec<_> = checked.iter().filter(|c| !c.problems.is_empty()).collect();
            for c in &bad {
                outln!("FAIL {}", c.path.display());
                for p in &c.problems {
                    outln!("  {p}");
                }
            }
            outln!("{} of {} corpus cases pass", checked.len() - bad.len(), checked.len());
            ExitCode::from(if bad.is_empty() { exit::CONFORMS } else { exit::VIOLATIONS })
        }
        Err(e) => {
            eprintln!("toolcert: {e}");
            ExitCode::from(exit::USAGE)
        }
    }
}

/// The longest reply `bench --bounded` takes from a subprocess: the 200 MB line's call
/// dispatched, its escapes and the envelope.
const BOUNDED_MAX_LINE: usize = 512 << 20;

/// How a priced subprocess is started: a run may take a budget's worth of accumulation, plus
/// shipping a 512 KiB turn in 1-byte events through a pipe.
fn cost_exec_options(budget: std::time::Duration) -> toolcert::exec::ExecOptions {
    toolcert::exec::ExecOptions {
        timeout: budget * 3 + std::time::Duration::from_secs(30),
        ..Default::default()
    }
}

/// [`cost_exec_options`]; on the bounded suite (`bounded`) a subprocess (and its floor) is
/// also asked for each run's peak heap, and its reply that dispatches the 200 MB call is taken
/// (a longer line is still refused).
fn bounded_exec_options(budget: std::time::Duration, bounded: bool) -> toolcert::exec::ExecOptions {
    let base = cost_exec_options(budget);
    let max_line = if bounded { BOUNDED_MAX_LINE } else { base.max_line };
    toolcert::exec::ExecOptions { memory: bounded, max_line, ..base }
}

/// The floor a subject is priced against, opened (`--floor exec:CMD|none`, else the default:
/// Rust in process, the adapter package's reference for an `exec:` subject's language).
enum Floor {
    Rust,
    Exec(Box<toolcert::exec::ExecSubject>, String),
    None(String),
}

impl Floor {
    /// `exec` is the subject's command and language when it is a subprocess; the exit code
    /// (and a line on stderr) when `floor` is malformed or the floor does not start.
    fn open(
        floor: Option<&str>,
        exec: Option<&(String, String)>,
        options: toolcert::exec::ExecOptions,
    ) -> Result<Floor, ExitCode> {
        let cmd = match (floor, exec) {
            (Some("none"), _) => return Ok(Floor::None("--floor none".into())),
            (Some(f), _) => match toolcert::exec::parse_subject(f) {
                Some(cmd) => cmd.to_string(),
                None => {
                    eprintln!("toolcert: --floor takes exec:COMMAND or none (got {f:?})");
                    return Err(ExitCode::from(exit::USAGE));
                }
            },
            (None, Some((cmd, language))) => match toolcert::bench::cost::default_floor(cmd, language) {
                Ok(cmd) => cmd,
                Err(why) => return Ok(Floor::None(why)),
            },
            (None, None) => return Ok(Floor::Rust),
        };
        match toolcert::exec::ExecSubject::spawn(&cmd, options) {
            Ok(s) => Ok(Floor::Exec(Box::new(s), cmd)),
            Err(e) => {
                eprintln!("toolcert: the floor `{cmd}`: {e}");
                Err(ExitCode::from(exit::CRASHED))
            }
        }
    }

    fn as_floor(&self) -> toolcert::bench::cost::Floor<'_> {
        use toolcert::bench::cost;
        match self {
            Floor::Rust => cost::Floor::Rust,
            Floor::Exec(s, cmd) => {
                cost::Floor::Subject(&**s, format!("exec:{cmd} (join + one strict parse, same language)"))
            }
            Floor::None(why) => cost::Floor::None(why.clone()),
        }
    }
}

fn bench(args: BenchArgs) -> ExitCode {
    use toolcert::bench::cost;
    if !(args.budget > 0.0 && args.budget.is_finite()) {
        eprintln!("toolcert: --budget must be a positive number of seconds (got {})", args.budget);
        return ExitCode::from(exit::USAGE);
    }
    let budget = std::time::Duration::from_secs_f64(args.budget);
    // The bounded suite asks a subprocess (and its floor) for each run's peak heap too, and
    // takes the reply that dispatches a 200 MB call (a longer line is still refused).
    let exec_options = || bounded_exec_options(budget, args.bounded);
    let (subject, exec) = match open_subject(&args.subject, exec_options()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let exec_language = exec.map(|e| (e.cmd, e.language));
    let settings = subject.settings();
    let level = args.level.unwrap_or_else(|| {
        if settings.iter().any(|(l, _)| *l == toolcert::subject::Level::Events) {
            toolcert::subject::Level::Events
        } else {
            settings.first().map_or(toolcert::subject::Level::Events, |(l, _)| *l)
        }
    });
    let speech = settings
        .iter()
        .filter(|(l, s)| *l == level && s.quirks == Default::default())
        .map(|(_, s)| *s)
        .find(|s| args.dialect.is_none_or(|d| s.dialect == d));
    let Some(speech) = speech.or_else(|| {
        // The events level has no dialect of its own to declare.
        (level == toolcert::subject::Level::Events && settings.iter().any(|(l, _)| *l == level))
            .then(toolcert::subject::driver::Speech::default)
    }) else {
        eprintln!(
            "toolcert: {} is not fed at the {level} level{} (it declares: {})",
            subject.name(),
            args.dialect.map_or(String::new(), |d| format!(" in {d}")),
            settings.iter().map(|(l, s)| format!("{l} {}", s.dialect)).collect::<Vec<_>>().join(", ")
        );
        return ExitCode::from(exit::USAGE);
    };
    let floor = match Floor::open(args.floor.as_deref(), exec_language.as_ref(), exec_options()) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let floor = floor.as_floor();
    let opts = cost::CostOptions {
        level,
        speech,
        budget,
        large: args.large,
        bounded: args.bounded,
        timeout: Some(cost_exec_options(budget).timeout),
        ..Default::default()
    };
    let (suite, version, workloads) = if args.bounded {
        ("bounded suite", cost::BOUNDED_SUITE_VERSION, cost::bounded_plan().len())
    } else {
        ("cost suite", cost::SUITE_VERSION, cost::suite(args.large).len())
    };
    eprintln!(
        "toolcert {} pricing {} on {suite} v{version} ({workloads} workloads; a tier predicted over {} s is skipped)",
        env!("CARGO_PKG_VERSION"),
        subject.name(),
        args.budget * cost::STOP_AFTER_BUDGETS
    );
    let report = match cost::price(&*subject, floor, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::CRASHED);
        }
    };
    match args.format {
        BenchFormat::Text => out!("{}", cost::render_text(&report)),
        BenchFormat::Json => match serde_json::to_string_pretty(&report) {
            Ok(j) => outln!("{j}"),
            Err(e) => {
                eprintln!("toolcert: {e}");
                return ExitCode::from(exit::INTERNAL);
            }
        },
    }
    // On the bounded suite the rule is the verdict; on the cost suite the growth is.
    ExitCode::from(match (&report.bounded, report.growth) {
        (Some(b), _) if b.holds => exit::CONFORMS,
        (Some(_), _) => exit::VIOLATIONS,
        (None, cost::Growth::Linear) => exit::CONFORMS,
        (None, cost::Growth::Superlinear) => exit::VIOLATIONS,
        (None, cost::Growth::Inconclusive) => exit::USAGE,
    })
}

fn smoke(args: SmokeArgs) -> ExitCode {
    let Some(cmd) = toolcert::exec::parse_subject(&args.subject) else {
        eprintln!("toolcert: smoke takes an adapter, `exec:COMMAND` (got {:?})", args.subject);
        return ExitCode::from(exit::USAGE);
    };
    let subject = match toolcert::exec::ExecSubject::spawn(cmd, Default::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::CRASHED);
        }
    };
    let mut report = toolcert::runner::smoke_with(&subject, &subject.settings(), subject.profile());
    report.implementation = Some(subject.implementation().to_string());
    report.stats = Some(subject.stats().to_string());
    out!("{report}");
    ExitCode::from(if report.ok { exit::CONFORMS } else { exit::VIOLATIONS })
}

/// `toolcert serve`: the mock provider of `toolcert-serve` on its own, serving what toolcert
/// certifies with, for someone pointing a real client at it by hand.
mod serve_cmd {
    use std::io::Write as _;
    use std::path::PathBuf;
    use std::process::ExitCode;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use toolcert::runner::served::{self, Serving, Stream};
    use toolcert::scenario::Dialect;
    use toolcert_serve::{Config, Endpoint, MockProvider, Reply};

    use super::{exit, whole};

    pub const AFTER_HELP: &str = "\
Each endpoint serves its own list of streams in turn, starting over at the end:
  POST /v1/messages            anthropic         (Anthropic SDKs: base URL without /v1)
  POST /v1/chat/completions    openai-chat       (OpenAI SDKs: base URL with /v1)
  POST /v1/responses           openai-responses  (OpenAI SDKs: base URL with /v1)
  POST /model/{modelId}/converse-stream  bedrock  (AWS SDKs: endpoint URL, any model id)
  POST /v1beta/models/{model}:streamGenerateContent?alt=sse  gemini  (Google Gen AI SDKs: base URL, any model)
A named or generated case is rendered in the dialect of the endpoint asked (a case that
dialect cannot speak is left out of its list); a .sse or .eventstream file is served only on
the endpoint of its dialect. Any API key is accepted and request bodies are not checked,
only bounded: one over --max-body bytes (16 MiB by default) is discarded and gets a 413.
Every request is logged on stderr with the stream it got; a request with nothing to serve
gets a 500 with a JSON error. Ctrl-C stops the server.

Examples:
  toolcert serve --port 8787
  toolcert serve --sse corpus/anthropic/deltas/lookup-order-a4471.sse
  toolcert serve --dialect openai-chat --cases 50 --seed 7 --chunk-delay-ms 20
  curl -N http://127.0.0.1:8787/v1/chat/completions -d '{\"stream\": true}'";

    #[derive(clap::Args)]
    pub struct ServeArgs {
        /// The port to listen on, on 127.0.0.1 (0: a free one, printed at start).
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole::<u16>)]
        port: u16,
        /// A recorded stream to serve, as exact bytes (a corpus `.sse` file, or a failure's
        /// reproducer from `certify --out`); repeat for several. Its dialect is --dialect,
        /// else the one its `.expect.json` names, else detected from the stream.
        #[arg(long, value_name = "FILE")]
        sse: Vec<PathBuf>,
        /// Serve the named cases whose id contains NAME (`toolcert cases` lists them). With
        /// no --case, --cases or --sse, every named case is served.
        #[arg(long = "case", value_name = "NAME")]
        case: Option<String>,
        /// Serve this many generated cases: the ones `toolcert certify --level bytes
        /// --dialect D --no-schema --cases N --seed S` runs for each endpoint's dialect D.
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole::<usize>)]
        cases: usize,
        /// The seed of the generated cases.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = whole::<u64>)]
        seed: u64,
        /// Serve only this dialect's endpoint: anthropic, openai-chat, openai-responses, bedrock or gemini.
        #[arg(long)]
        dialect: Option<Dialect>,
        /// Re-cut every stream into chunks of this many bytes (0: as the case's transport
        /// cuts it; a file whole).
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole::<usize>)]
        chunk: usize,
        /// A pause between two chunks of a stream, in milliseconds.
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole::<u64>)]
        chunk_delay_ms: u64,
        /// The largest request body accepted, in bytes; a longer one is discarded as it is
        /// read and answered 413.
        #[arg(long, default_value_t = toolcert_serve::DEFAULT_MAX_BODY, allow_negative_numbers = true, value_parser = whole::<usize>)]
        max_body: usize,
    }

    pub fn run(args: ServeArgs) -> ExitCode {
        let serving = Serving {
            files: args.sse.clone(),
            case: args.case.clone(),
            cases: args.cases,
            seed: args.seed,
            dialect: args.dialect,
            chunk: args.chunk,
        };
        // Each dialect's streams on its endpoint (one endpoint per dialect, by name).
        let lists = match served::streams(&serving) {
            Ok(by_dialect) => {
                let mut lists: Vec<Vec<Stream>> = vec![Vec::new(); Endpoint::ALL.len()];
                for (d, l) in by_dialect {
                    match Endpoint::ALL.iter().position(|e| e.name() == d.name()) {
                        Some(slot) => lists[slot] = l,
                        None => {
                            eprintln!("toolcert: the mock provider has no endpoint for {d}");
                            return ExitCode::from(exit::INTERNAL);
                        }
                    }
                }
                lists
            }
            Err(e) => {
                eprintln!("toolcert: {e}");
                return ExitCode::from(exit::USAGE);
            }
        };
        if lists.iter().all(Vec::is_empty) {
            eprintln!("toolcert: nothing to serve (no named case matches --case, and no --cases or --sse)");
            return ExitCode::from(exit::USAGE);
        }
        let counts: Vec<String> =
            Endpoint::ALL.iter().zip(&lists).map(|(e, l)| format!("{e} {}", l.len())).collect();
        let lists = Arc::new(lists);
        let served = lists.clone();
        let next = Mutex::new([0usize; Endpoint::ALL.len()]);
        let config = Config::default()
            .port(args.port)
            .chunk_delay(Duration::from_millis(args.chunk_delay_ms))
            .log(true)
            .max_body(args.max_body)
            .fallback(move |endpoint, _body| {
                let slot = Endpoint::ALL.iter().position(|&e| e == endpoint)?;
                let list = &served[slot];
                if list.is_empty() {
                    return None;
                }
                let i = {
                    let mut next = next.lock().unwrap_or_else(|e| e.into_inner());
                    next[slot] += 1;
                    (next[slot] - 1) % list.len()
                };
                let (name, chunks) = &list[i];
                eprintln!(
                    "toolcert serve: {endpoint} <- {name} ({} of {}, {} chunks)",
                    i + 1,
                    list.len(),
                    chunks.len()
                );
                Some(Reply::sse(chunks.clone()))
            });
        let mock = match MockProvider::start(config) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("toolcert: cannot listen on 127.0.0.1:{}: {e}", args.port);
                return ExitCode::from(exit::INTERNAL);
            }
        };
        let base = mock.base_url();
        // Written, not printed: a closed stdout (`| head`) must not stop the server.
        let mut out = std::io::stdout().lock();
        // The first line is the address, for scripts (and tests) that start it with --port 0.
        let _ = writeln!(out, "toolcert serve: listening on {base} (Ctrl-C stops it)");
        let _ = writeln!(out, "streams per endpoint: {}", counts.join(", "));
        for (e, l) in Endpoint::ALL.iter().zip(lists.iter()) {
            if l.is_empty() {
                continue;
            }
            // Each endpoint is its dialect's, by name (tests/serve.rs checks they agree).
            let Some(d) = toolcert::dialect::registry().iter().find(|d| d.name() == e.name()) else {
                continue;
            };
            let sdk_base = d.sdk_base_url(&base);
            let query = if *e == Endpoint::Gemini { "?alt=sse" } else { "" };
            let _ = writeln!(
                out,
                "  {:<17} POST {}{query}\n  {:<17} base URL {sdk_base}",
                e.name(),
                mock.url(*e),
                ""
            );
        }
        let probe = Endpoint::ALL.iter().zip(lists.iter()).find(|(_, l)| !l.is_empty()).map(|(e, _)| *e);
        if let Some(e) = probe {
            // Each API's own request: Gemini streams SSE only with `alt=sse`, and its body
            // holds `contents` (the mock reads neither, but the line should be one to copy).
            let (query, body) = match e {
                Endpoint::Gemini => {
                    ("?alt=sse", r#"{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}"#)
                }
                _ => ("", r#"{"stream": true}"#),
            };
            let _ = writeln!(
                out,
                "try: curl -N '{}{query}' -H 'content-type: application/json' -d '{body}'",
                mock.url(e)
            );
        }
        let _ = out.flush();
        drop(out);
        mock.wait();
        ExitCode::from(exit::CONFORMS)
    }
}
