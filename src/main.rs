//! The `toolcert` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

// A run allocates and frees small strings and JSON values by the million; mimalloc does
// that markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use toolcert::{Certification, Grade, Profile};

/// Exit codes, one meaning each.
mod exit {
    /// The subject conforms at the required grade.
    pub const CONFORMS: u8 = 0;
    /// The subject broke at least one invariant.
    pub const VIOLATIONS: u8 = 1;
    /// The command line was wrong (clap uses 2 as well).
    pub const USAGE: u8 = 2;
}

const EXIT_CODES: &str = "Exit codes:
  0  the subject conforms at the required grade
  1  the subject broke at least one invariant (violations are listed)
  2  usage error (unknown subject, bad option)";

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
    /// Hunt every mutant of the zoo with generated cases and print how fast each dies, which
    /// invariants it breaks and how small its shrunk counterexample is.
    Zoo(ZooArgs),
    /// List the invariants with their rules and seed chapters.
    Invariants,
    /// List the named cases.
    Cases,
}

#[derive(clap::Args)]
struct CertifyArgs {
    /// The implementation under test: `builtin:reference`.
    #[arg(long, default_value = "builtin:reference")]
    subject: String,
    /// Generated cases to run besides the named ones.
    #[arg(long, default_value_t = 0)]
    cases: usize,
    /// Seed for the generated cases: the same seed runs the same cases.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Only run cases whose name contains this.
    #[arg(long = "case")]
    case: Option<String>,
    /// What the subject is fed: `events` (provider-neutral), `wire` (one dialect's SSE
    /// events) or `bytes` (raw SSE bytes in transport chunks cut anywhere).
    #[arg(long, default_value = "events")]
    level: toolcert::subject::Level,
    /// The dialect the wire and bytes levels speak: anthropic, openai-chat, openai-responses.
    #[arg(long, default_value = "anthropic")]
    dialect: toolcert::scenario::Dialect,
    /// The quirk profile of OpenAI-compatible servers that reuse index 0 for every parallel
    /// call and tell calls apart by id (openai-chat only).
    #[arg(long)]
    chat_index_zero: bool,
    /// The grade the subject must reach: `must` (nothing unfinished dispatched, everything
    /// finished dispatched exactly) or `should` (per-call accounting as well).
    #[arg(long, value_enum, default_value_t = GradeArg::Should)]
    grade: GradeArg,
    /// Do not judge calls against their tools' JSON Schemas (for subjects that do not validate).
    #[arg(long)]
    no_schema: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Failing cases to print in full (text format).
    #[arg(long, default_value_t = 5)]
    show: usize,
    /// Run only this case, saved as JSON (a report's `failures[].scenario`).
    #[arg(long, value_name = "FILE")]
    scenario: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct ZooArgs {
    /// Seeds to hunt each mutant with (1..=N).
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// Generated cases per seed before a mutant counts as surviving.
    #[arg(long, default_value_t = 200)]
    max_cases: usize,
    /// Only this mutant (and print its shrunk counterexample).
    #[arg(long)]
    mutant: Option<String>,
    #[arg(long, value_enum, default_value_t = ZooFormat::Text)]
    format: ZooFormat,
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

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `toolcert` alone is `toolcert certify`.
    let command = cli.command.or_else(|| Cli::parse_from(["toolcert", "certify"]).command);
    match command.expect("certify parses with its defaults") {
        Command::Certify(args) => certify(args),
        Command::Zoo(args) => zoo(args),
        Command::Invariants => {
            for inv in toolcert::Invariant::ALL {
                println!("{:<15} [{}] {}\n{:<15} why: {}", inv.id(), inv.seed(), inv.rule(), "", inv.why());
            }
            ExitCode::from(exit::CONFORMS)
        }
        Command::Cases => {
            for c in toolcert::gen::named::all() {
                println!("{:<40} {}", c.case.name, c.about);
            }
            ExitCode::from(exit::CONFORMS)
        }
    }
}

fn certify(args: CertifyArgs) -> ExitCode {
    let subject = match toolcert::subject_by_name(&args.subject) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("toolcert: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    if !subject.levels().contains(&args.level) {
        let levels: Vec<String> = subject.levels().iter().map(|l| l.to_string()).collect();
        eprintln!(
            "toolcert: {} cannot be fed at the {} level (it declares: {})",
            args.subject,
            args.level,
            levels.join(", ")
        );
        return ExitCode::from(exit::USAGE);
    }
    let run = Certification {
        cases: args.cases,
        seed: args.seed,
        named: true,
        filter: args.case,
        profile: Profile { schema: !args.no_schema },
        level: args.level,
        speech: toolcert::subject::driver::Speech {
            dialect: args.dialect,
            quirks: toolcert::scenario::Quirks { chat_index_zero: args.chat_index_zero },
        },
        grade: match args.grade {
            GradeArg::Must => Grade::Must,
            GradeArg::Should => Grade::Should,
        },
    };
    if let Some(path) = &args.scenario {
        return replay_scenario(&*subject, path, run.profile, args.format);
    }
    let mut bar: Option<indicatif::ProgressBar> = None;
    let started = std::time::Instant::now();
    let quiet = matches!(args.format, Format::Json);
    let report = run.run_with(&*subject, &mut |done, total| {
        if quiet || started.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        let b = bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases  {per_sec}  eta {eta}")
                    .expect("a valid template"),
            );
            b
        });
        b.set_position(done as u64);
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match args.format {
        Format::Text => print!("{}", report.to_text(args.show)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&report).expect("a report serialises")),
    }
    ExitCode::from(if report.conforms { exit::CONFORMS } else { exit::VIOLATIONS })
}

/// Runs one saved scenario against the subject.
fn replay_scenario(
    subject: &dyn toolcert::subject::Subject,
    path: &std::path::Path,
    profile: Profile,
    format: Format,
) -> ExitCode {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("toolcert: cannot read {}: {e}", path.display());
            return ExitCode::from(exit::USAGE);
        }
    };
    let case: toolcert::scenario::Case = match serde_json::from_str(&text) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toolcert: {} is not a scenario (a report's failures[].scenario): {e}", path.display());
            return ExitCode::from(exit::USAGE);
        }
    };
    let checked = toolcert::check_case(subject, &case, profile);
    match format {
        Format::Json => println!(
            "{}",
            serde_json::json!({"case": case.name, "violations": checked.violations, "observations": checked.observations})
        ),
        Format::Text => {
            print!("{}", toolcert::render::transcript(&case));
            for v in &checked.violations {
                println!("{v}");
            }
            println!("{}", if checked.violations.is_empty() { "conforms" } else { "violations found" });
        }
    }
    ExitCode::from(if checked.violations.is_empty() { exit::CONFORMS } else { exit::VIOLATIONS })
}

fn zoo(args: ZooArgs) -> ExitCode {
    let zoo = toolcert::zoo::Zoo { seeds: (1..=args.seeds.max(1)).collect(), max_cases: args.max_cases };
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
            let rows = zoo.run(&mut |name| {
                bar.set_message(name.to_string());
                bar.inc(1);
            });
            bar.finish_and_clear();
            rows
        }
    };
    match args.format {
        ZooFormat::Text => {
            print!("{}", toolcert::zoo::to_text(&rows, &zoo));
            if args.mutant.is_some() {
                if let Some((case, violations)) = rows.first().and_then(|r| r.counterexample.as_ref()) {
                    println!(
                        "\nshrunk counterexample ({}):\n{}",
                        case.name,
                        toolcert::render::transcript(case)
                    );
                    for v in violations {
                        println!("{v}");
                    }
                }
            }
        }
        ZooFormat::Json => println!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise")),
        ZooFormat::Markdown => print!("{}", toolcert::zoo::to_markdown(&rows, &zoo)),
    }
    let all_dead = rows.iter().all(|r| r.killed && r.expected_caught);
    ExitCode::from(if all_dead { exit::CONFORMS } else { exit::VIOLATIONS })
}
