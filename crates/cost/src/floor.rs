//! Which floor an out-of-process subject is priced against: the adapter package's reference
//! in the subject's own language, started the way the subject is (`toolcert bench` and
//! `certify --cost` spawn it; [`crate::price`] runs it beside the subject).

/// The floor command for an `exec:` subject started as `subject_cmd` that declares
/// `language`: `python -m toolcert_adapter.floor` with the subject's interpreter for Python,
/// the npm package's `toolcert-adapter/floor` for JavaScript or TypeScript, the Go module's
/// `cmd/toolcert-floor` for Go, `dev.toolcert.adapter.Floor` on the subject's class path for
/// Java. `Err` says why there is none and what to give instead.
pub fn default_floor(subject_cmd: &str, language: &str) -> Result<String, String> {
    let lang = language.to_ascii_lowercase();
    if lang.starts_with("python") {
        let first = subject_cmd.split_whitespace().next().unwrap_or("python3");
        let base = std::path::Path::new(first).file_name().and_then(|f| f.to_str()).unwrap_or("");
        let interp = if base.starts_with("python") { first } else { "python3" };
        return Ok(format!("{interp} -m toolcert_adapter.floor"));
    }
    if ["javascript", "typescript", "node", "js", "ts"].contains(&lang.as_str()) {
        return Ok("node --input-type=module -e \"await import('toolcert-adapter/floor')\"".into());
    }
    if lang == "go" {
        // Resolved from the module the subject runs in, which requires the Go package.
        return Ok("go run github.com/toolcert/toolcert/go/cmd/toolcert-floor".into());
    }
    if lang == "java" {
        // The subject's own JVM and class path, which hold the Java package (the floor reads
        // the events level only: the package has no dialect decoders).
        let words: Vec<&str> = subject_cmd.split_whitespace().collect();
        let java = words.first().filter(|w| w.ends_with("java")).copied().unwrap_or("java");
        if let Some(at) = words.iter().position(|w| ["-cp", "-classpath", "--class-path"].contains(w)) {
            if let Some(cp) = words.get(at + 1) {
                return Ok(format!("{java} -cp {cp} dev.toolcert.adapter.Floor"));
            }
        }
        return Err(format!(
            "no floor for a Java subject started without -cp ({subject_cmd:?}): give --floor \
             'exec:java -cp CLASSPATH dev.toolcert.adapter.Floor', or --floor none"
        ));
    }
    Err(format!(
        "no floor for a subject in {language:?}: give --floor exec:COMMAND (an adapter that joins \
         fragments and parses once, in the same language), or --floor none"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_and_java_subjects_get_their_packages_floors() {
        assert_eq!(
            default_floor("go run ./examples/toyacc", "go").unwrap(),
            "go run github.com/toolcert/toolcert/go/cmd/toolcert-floor"
        );
        assert_eq!(
            default_floor("/usr/bin/java -cp a.jar:b.jar dev.x.Adapter", "java").unwrap(),
            "/usr/bin/java -cp a.jar:b.jar dev.toolcert.adapter.Floor"
        );
        assert!(default_floor("java -jar adapter.jar", "java").unwrap_err().contains("--floor"));
    }

    #[test]
    fn a_python_subject_gets_the_floor_in_its_own_interpreter() {
        assert_eq!(
            default_floor(".venv/bin/python adapter.py", "Python").unwrap(),
            ".venv/bin/python -m toolcert_adapter.floor"
        );
        // Started by another program: the interpreter on the path.
        assert_eq!(
            default_floor("env X=1 python3 a.py", "python").unwrap(),
            "python3 -m toolcert_adapter.floor"
        );
        assert!(default_floor("node a.mjs", "JavaScript").unwrap().contains("toolcert-adapter/floor"));
        assert!(default_floor("./genai", "rust").unwrap_err().contains("--floor"));
    }
}
