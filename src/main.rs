//! The `toolcert` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
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
    let run = Certification {
        cases: args.cases,
        seed: args.seed,
        named: true,
        filter: args.case,
        profile: Profile { schema: !args.no_schema },
        grade: match args.grade {
            GradeArg::Must => Grade::Must,
            GradeArg::Should => Grade::Should,
        },
    };
    let report = run.run(&*subject);
    match args.format {
        Format::Text => print!("{}", report.to_text(args.show)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&report).expect("a report serialises")),
    }
    ExitCode::from(if report.conforms { exit::CONFORMS } else { exit::VIOLATIONS })
}
