//! The subject's process: spawned under `sh -c`, fed and read without ever blocking the
//! harness.
//!
//! Three threads per process do the blocking I/O: a writer (so a subject that stops reading
//! its stdin cannot stall the harness on a full pipe), a line reader (lines bounded in
//! size, handed over a channel that the harness waits on with a timeout) and a stderr
//! drainer (so a chatty subject never blocks on a full stderr pipe; the tail is kept for
//! crash reports). On Unix the subject runs in its own process group, and killing it kills
//! the whole group: `sh`, the interpreter and anything they started. Live groups are listed
//! in a table that [`kill_live_groups`] (called from the harness's signal handlers and exit
//! paths) signals, so a harness stopped by Ctrl-C leaves no subject behind either.
//!
//! A subject that exits before reading its input makes the writer's next write fail: the
//! writer thread blocks SIGPIPE, so that failure is `EPIPE` (and the writer stops) whatever
//! disposition the host program gave SIGPIPE, never a signal that kills the harness.
//!
//! A command that is one simple command (`python3 a.py`) is run as `sh -c 'exec CMD'`: the
//! subject is then `sh`'s own process, and its stdout has no other holder, so a subject that
//! closes its stdout is seen at once as EOF (a crash), whatever it does next. A compound
//! command keeps `sh` as its parent, which holds the pipe open too (docs/PROTOCOL.md).

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What the line reader hands over.
enum Line {
    Text(Vec<u8>),
    /// A line grew past the limit before its newline.
    TooLong,
    /// Stdout closed.
    Eof,
    Error(io::Error),
}

/// Why no reply line arrived.
#[derive(Debug)]
pub(crate) enum RecvError {
    Timeout,
    /// Stdout closed (the subject exited or closed it).
    Eof,
    TooLong(usize),
    Io(io::Error),
}

/// The last bytes the subject wrote to stderr.
struct Tail {
    bytes: VecDeque<u8>,
    keep: usize,
    closed: bool,
}

pub(crate) struct Proc {
    child: Child,
    /// The slot of its process group in the table of live groups.
    group: Option<usize>,
    to_child: Option<Sender<Vec<u8>>>,
    from_child: Receiver<Line>,
    stderr: Arc<(Mutex<Tail>, Condvar)>,
    max_line: usize,
    /// Stdout is known closed.
    eof: bool,
    /// The subject was reaped, with this status: its pid (and process group id) may now
    /// belong to another process, so it is never signalled again.
    status: Option<Option<ExitStatus>>,
}

/// Lines read ahead of the harness: a subject that floods its stdout blocks on the pipe
/// instead of filling the harness's memory.
const LINES_AHEAD: usize = 4;

/// How often a wait for a reply checks that the subject is still running.
const EXIT_POLL: Duration = Duration::from_millis(50);

impl Proc {
    /// Starts `sh -c cmd` with piped stdio, in `dir` when given.
    pub fn spawn(cmd: &str, dir: Option<&Path>, max_line: usize, stderr_keep: usize) -> io::Result<Proc> {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(shell_command(cmd))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let mut child = command.spawn()?;
        let group = groups::register(child.id());
        let (Some(mut stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the subject's stdio could not be piped"));
        };

        let (to_child, writes) = mpsc::channel::<Vec<u8>>();
        thread::Builder::new().name("toolcert-exec-stdin".into()).spawn(move || {
            block_sigpipe();
            for message in writes {
                if stdin.write_all(&message).and_then(|()| stdin.flush()).is_err() {
                    break;
                }
            }
            // Dropping stdin closes the pipe: the subject reads EOF.
        })?;

        let (lines, from_child): (SyncSender<Line>, _) = mpsc::sync_channel(LINES_AHEAD);
        thread::Builder::new().name("toolcert-exec-stdout".into()).spawn(move || {
            let mut reader = BufReader::with_capacity(1 << 16, stdout);
            loop {
                let line = read_line(&mut reader, max_line);
                let stop = !matches!(line, Line::Text(_));
                if lines.send(line).is_err() || stop {
                    break;
                }
            }
        })?;

        let tail = Arc::new((
            Mutex::new(Tail { bytes: VecDeque::new(), keep: stderr_keep, closed: false }),
            Condvar::new(),
        ));
        let drain = Arc::clone(&tail);
        thread::Builder::new().name("toolcert-exec-stderr".into()).spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let n = match stderr.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let mut t = drain.0.lock().unwrap_or_else(|e| e.into_inner());
                t.bytes.extend(&buf[..n]);
                let over = t.bytes.len().saturating_sub(t.keep);
                t.bytes.drain(..over);
            }
            drain.0.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
            drain.1.notify_all();
        })?;

        Ok(Proc {
            child,
            group,
            to_child: Some(to_child),
            from_child,
            stderr: tail,
            max_line,
            eof: false,
            status: None,
        })
    }

    /// Queues `message` (one line, newline included) for the subject's stdin. False when the
    /// writer is gone (the subject closed its stdin or exited).
    pub fn send(&self, message: Vec<u8>) -> bool {
        self.to_child.as_ref().is_some_and(|t| t.send(message).is_ok())
    }

    /// The next line the subject writes, without its newline, waiting at most `timeout`.
    /// A subject whose process has exited owes nothing more, even when something it
    /// started still holds its stdout open.
    pub fn recv(&mut self, timeout: Duration) -> Result<Vec<u8>, RecvError> {
        if self.eof {
            return Err(RecvError::Eof);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(RecvError::Timeout);
            }
            match self.from_child.recv_timeout(left.min(EXIT_POLL)) {
                Ok(line) => return self.line(line),
                Err(RecvTimeoutError::Disconnected) => return self.line(Line::Eof),
                Err(RecvTimeoutError::Timeout) if self.status.is_some() || self.has_exited() => {
                    // Lines written just before the exit are still on their way.
                    return match self.from_child.recv_timeout(EXIT_POLL) {
                        Ok(line) => self.line(line),
                        Err(_) => self.line(Line::Eof),
                    };
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    fn line(&mut self, line: Line) -> Result<Vec<u8>, RecvError> {
        match line {
            Line::Text(line) => Ok(line),
            Line::TooLong => Err(RecvError::TooLong(self.max_line)),
            Line::Eof => {
                self.eof = true;
                Err(RecvError::Eof)
            }
            Line::Error(e) => Err(RecvError::Io(e)),
        }
    }

    /// Waits up to `grace` for the subject to exit by itself; then reaps it (and kills
    /// whatever it left running in its process group).
    pub fn exit_status(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.status {
            return status;
        }
        let deadline = Instant::now() + grace;
        loop {
            if self.has_exited() {
                return self.kill();
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether the subject has exited, without reaping it (so its process group can still
    /// be signalled safely: a zombie's pid is not reused).
    #[cfg(target_os = "linux")]
    fn has_exited(&mut self) -> bool {
        let pid: libc::id_t = self.child.id();
        // SAFETY: waitid(2) writes into the zeroed siginfo_t we own; WNOWAIT leaves the child
        // waitable, so `Child::wait` still reaps it later.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let r = libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT);
            r != 0 || info.si_pid() != 0
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn has_exited(&mut self) -> bool {
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.status = Some(Some(status));
                true
            }
            Ok(None) => false,
            Err(_) => true,
        }
    }

    /// The tail of the subject's stderr, waiting up to `grace` for it to be closed (a
    /// subject that just died may still have bytes in the pipe).
    pub fn stderr_tail(&self, grace: Duration) -> String {
        let (lock, closed) = &*self.stderr;
        let t = lock.lock().unwrap_or_else(|e| e.into_inner());
        let (t, _) = closed.wait_timeout_while(t, grace, |t| !t.closed).unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = t.bytes.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim_end().to_string()
    }

    /// Closes stdin (after `last`, if given) and gives the subject `grace` to exit; then
    /// kills it.
    pub fn stop(mut self, last: Option<Vec<u8>>, grace: Duration) {
        if let Some(message) = last {
            self.send(message);
        }
        self.to_child = None;
        if self.exit_status(grace).is_none() {
            self.kill();
        }
    }

    /// Kills the subject and everything in its process group, and reaps it; its exit status.
    pub fn kill(&mut self) -> Option<ExitStatus> {
        self.to_child = None;
        if let Some(status) = self.status {
            return status;
        }
        #[cfg(unix)]
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group the subject leads
            // (it was spawned with process_group(0)) and has no memory-safety preconditions.
            // The leader is not reaped yet, so the group id is still the subject's.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        // Out of the table before the reap: after it, the group id may be another's.
        groups::unregister(self.group.take());
        let status = self.child.wait().ok();
        self.status = Some(status);
        status
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The command line given to `sh -c`: `exec CMD` when `cmd` is one simple command (words,
/// quoted or not, with no operator, redirection, substitution or leading assignment), so
/// that `sh` becomes the subject instead of staying its parent; `cmd` itself otherwise.
pub(crate) fn shell_command(cmd: &str) -> String {
    if is_simple_command(cmd) {
        format!("exec {cmd}")
    } else {
        cmd.to_string()
    }
}

fn is_simple_command(cmd: &str) -> bool {
    let first = cmd.split_whitespace().next().unwrap_or("");
    // Reserved words and builtins that change the shell itself (`cd`, `exec`...) or that
    // `exec` cannot run; an assignment prefix (`A=1 prog`) would be exec'd as a program.
    const SHELL_WORDS: &[&str] = &[
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done", "{", "}",
        "!", "cd", "exec", "eval", ".", "source", "set", "export", "unset", "trap", "exit", "ulimit",
        "umask", "alias", "function", "time", "wait", "readonly", "shift", "command",
    ];
    if first.is_empty() || first.contains('=') || SHELL_WORDS.contains(&first) {
        return false;
    }
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in cmd.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            // Substitutions, even inside double quotes, may run anything: keep the shell.
            '$' | '`' if !single => return false,
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' | '#' | '*' | '?' | '[' | '~'
                if !single && !double =>
            {
                return false
            }
            _ => {}
        }
    }
    !single && !double && !escaped
}

/// Blocks SIGPIPE in the calling thread: a write to a pipe whose reader is gone then fails
/// with `EPIPE` instead of delivering a signal whose default action ends the process.
fn block_sigpipe() {
    #[cfg(unix)]
    // SAFETY: sigemptyset/sigaddset initialise the set we own; pthread_sigmask changes only
    // this thread's mask. A SIGPIPE left pending on this thread is dropped when it ends.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Kills the process group of every subject still running in this process. Async-signal-
/// safe (atomics and kill(2) only), for a signal handler or an exit path that skips
/// destructors.
pub fn kill_live_groups() {
    groups::kill_all();
}

/// Makes SIGINT, SIGTERM and SIGHUP kill every live subject's process group before they end
/// the harness as they would have (default action, re-raised). A subject runs in its own
/// process group, so Ctrl-C at a terminal reaches only the harness: without this, what the
/// subject started would outlive it.
pub fn kill_subjects_on_signals() {
    #[cfg(unix)]
    {
        extern "C" fn on_signal(signal: libc::c_int) {
            groups::kill_all();
            // SAFETY: signal(2) and raise(3) are async-signal-safe; the default action of
            // these signals ends the process, with the status a shell expects.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
        }
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: installs a handler that only does async-signal-safe work; a signal the
            // parent had ignored (`nohup`, a background job's SIGINT) stays ignored.
            unsafe {
                let previous =
                    libc::signal(signal, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
                if previous == libc::SIG_IGN {
                    libc::signal(signal, libc::SIG_IGN);
                }
            }
        }
    }
}

/// The table of live subjects' process groups, readable from a signal handler.
mod groups {
    use std::sync::atomic::{AtomicI32, Ordering};

    /// More subjects at once than this are still killed by their `Proc`, just not from a
    /// signal handler.
    const SLOTS: usize = 64;
    static LIVE: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

    pub fn register(pid: u32) -> Option<usize> {
        let pid = i32::try_from(pid).ok().filter(|&p| p > 0)?;
        (0..SLOTS).find(|&i| LIVE[i].compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst).is_ok())
    }

    pub fn unregister(slot: Option<usize>) {
        if let Some(i) = slot {
            LIVE[i].store(0, Ordering::SeqCst);
        }
    }

    pub fn kill_all() {
        for slot in &LIVE {
            let pid = slot.load(Ordering::SeqCst);
            if pid > 0 {
                #[cfg(unix)]
                // SAFETY: kill(2) has no memory-safety preconditions; the group leader is
                // not reaped while its slot is set, so the group id is still the subject's.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
        }
    }
}

/// Reads one line of at most `max` bytes (without the newline).
fn read_line(reader: &mut impl BufRead, max: usize) -> Line {
    let mut line = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Line::Error(e),
        };
        if buf.is_empty() {
            // A last line without its newline is still a line; then the end.
            return if line.is_empty() { Line::Eof } else { Line::Text(line) };
        }
        match memchr::memchr(b'\n', buf) {
            Some(i) => {
                if line.len() + i > max {
                    return Line::TooLong;
                }
                line.extend_from_slice(&buf[..i]);
                reader.consume(i + 1);
                return Line::Text(line);
            }
            None => {
                let n = buf.len();
                if line.len() + n > max {
                    return Line::TooLong;
                }
                line.extend_from_slice(buf);
                reader.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_commands_are_execed() {
        for simple in ["python3 a.py", "node 'my dir/x.js' --flag", "./adapter \"a b\"", "true"] {
            assert_eq!(shell_command(simple), format!("exec {simple}"), "{simple}");
        }
        for compound in [
            "cd x && python3 a.py",
            "A=1 prog",
            "prog; other",
            "prog | tee log",
            "prog > out",
            "prog \"$HOME\"",
            "exec prog",
            "if true; then prog; fi",
            "prog 'unclosed",
            "prog *.py",
        ] {
            assert_eq!(shell_command(compound), compound, "{compound}");
        }
    }

    #[test]
    fn lines_are_bounded() {
        let mut r = io::Cursor::new(b"short\nthis one is long\nend".to_vec());
        assert!(matches!(read_line(&mut r, 8), Line::Text(l) if l == b"short"));
        assert!(matches!(read_line(&mut r, 8), Line::TooLong));
        let mut r = io::Cursor::new(b"last".to_vec());
        assert!(matches!(read_line(&mut r, 8), Line::Text(l) if l == b"last"));
        assert!(matches!(read_line(&mut r, 8), Line::Eof));
    }
}
