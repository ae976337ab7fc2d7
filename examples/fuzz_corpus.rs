//! The fuzz corpora's housekeeping (`docs/FUZZING.md`):
//!
//! ```text
//! cargo run --example fuzz_corpus -- seeds
//!     rewrite corpus/fuzz/<target>/ from the seeds' named cases
//! cargo run --example fuzz_corpus -- regress <target> <crash-file> <name>
//!     keep a crash as corpus/fuzz/regressions/<target>/<name> (a reference plan becomes its
//!     value form, which keeps reproducing when the generators change), and show its report
//! cargo run --example fuzz_corpus -- show <target> <file>
//!     run one input and print what it does (the value form of a plan, the report if it fails)
//! ```

use std::path::{Path, PathBuf};

use toolcert::fuzzing::{parse_value, Target};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["seeds"] => seeds(&root.join("corpus/fuzz")),
        ["regress", target, file, name] => {
            let t = target_named(target);
            let data = std::fs::read(file).unwrap_or_else(|e| fail(&format!("{file}: {e}")));
            let dir = root.join("corpus/fuzz/regressions").join(t.name());
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(&format!("{}: {e}", dir.display())));
            let path = dir.join(name);
            let value = t.regression(&data);
            std::fs::write(&path, &value).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
            println!("wrote {}", path.display());
            show(t, &value);
        }
        ["show", target, file] => {
            let data = std::fs::read(file).unwrap_or_else(|e| fail(&format!("{file}: {e}")));
            show(target_named(target), &data);
        }
        _ => fail("usage: fuzz_corpus seeds | regress TARGET FILE NAME | show TARGET FILE"),
    }
}

fn target_named(name: &str) -> Target {
    Target::by_name(name).unwrap_or_else(|| {
        let names: Vec<_> = Target::ALL.iter().map(|t| t.name()).collect();
        fail(&format!("unknown target {name:?} (targets: {})", names.join(", ")))
    })
}

fn fail(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(2)
}

fn seeds(dir: &Path) {
    for t in Target::ALL {
        let d: PathBuf = dir.join(t.name());
        // The directory holds generated seeds only (the fuzzer writes its own corpus under
        // fuzz/corpus/): rewrite it whole.
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap_or_else(|e| fail(&format!("{}: {e}", d.display())));
        let seeds = t.seeds();
        for (name, data) in &seeds {
            std::fs::write(d.join(name), data).unwrap_or_else(|e| fail(&format!("{name}: {e}")));
        }
        println!("{}: {} seeds in {}", t.name(), seeds.len(), d.display());
    }
}

fn show(t: Target, data: &[u8]) {
    if t == Target::Reference {
        let value = t.regression(data);
        if parse_value(data).is_none() {
            println!("value form of this plan:\n{}", String::from_utf8_lossy(&value));
        }
    }
    match std::panic::catch_unwind(|| t.run(data)) {
        Ok(()) => println!("{}: passes", t.name()),
        Err(_) => println!("{}: FAILS (the report is above)", t.name()),
    }
}
