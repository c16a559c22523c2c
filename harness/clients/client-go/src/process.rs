//! The Go program's process: one JSON command a line on its stdin, one JSON reply a line on its stdout,
//! every reply waited for with a real-time bound, so that a process that dies or stops answering is an
//! error naming the command, never a hang. Processes are reused: a finished session's process goes back
//! to a small pool, since shrinking and replay start clients by the thousand and a process costs a
//! start-up where a session costs a few milliseconds.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

/// How long a reply may take in real time. The program's own watchdog reports a stuck command after
/// 10 s; this bound is for a process that cannot even say that.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Idle processes kept per kind.
const POOL_MAX: usize = 4;
/// stderr lines kept to explain a process that died.
const STDERR_LINES: usize = 20;

/// What makes two processes interchangeable: the program and its environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kind {
    pub binary: PathBuf,
    /// The variables that switch the streaming list, as the configuration sets them
    /// (`ClientGo::watch_list_env`).
    pub env: Vec<(&'static str, &'static str)>,
    /// The Go test that serves a user's client (`go:` configurations), or none for the shim.
    pub test: Option<String>,
}

/// What a command came to.
#[derive(Debug)]
pub enum Reply {
    /// The program's reply to the command.
    Answer(Value),
    /// The client's bubble can never go on (the program says how, and with it what the client showed
    /// last): what the client did, not a failure of the program. The process has ended.
    Halted(Halt, Value),
}

/// How a client's bubble stopped for good.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Halt {
    /// A goroutine that never blocks: the client takes steps of no time and no progress for ever.
    Spinning(String),
    /// Every goroutine waits on something nothing will bring, such as a lock synctest cannot see.
    Blocked(String),
}

impl Halt {
    /// Where the bubble stopped, as the program said it.
    pub fn at(&self) -> &str {
        match self {
            Halt::Spinning(at) | Halt::Blocked(at) => at,
        }
    }
}

/// A running shim.
#[derive(Debug)]
pub struct Process {
    kind: Kind,
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

static POOL: Mutex<Vec<Process>> = Mutex::new(Vec::new());

type SpawnRequest = (Command, Sender<std::io::Result<Child>>);

/// Every process is started from one thread that lives as long as this process: the Go program asks
/// Linux to end it when the *thread* that started it ends (`PR_SET_PDEATHSIG`), and a pooled process
/// outlives the test or task thread that first needed it.
fn spawn_child(command: Command) -> std::io::Result<Child> {
    static SPAWNER: OnceLock<Mutex<Sender<SpawnRequest>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::spawn(move || {
            for (mut command, reply) in rx {
                let _ = reply.send(command.spawn());
            }
        });
        Mutex::new(tx)
    });
    let (tx, rx) = mpsc::channel();
    let sent = spawner.lock().unwrap_or_else(|p| p.into_inner()).send((command, tx));
    sent.map_err(|_| std::io::Error::other("the spawning thread is gone"))?;
    rx.recv().map_err(|_| std::io::Error::other("the spawning thread is gone"))?
}

impl Process {
    /// An idle process of `kind` from the pool, or a new one.
    pub fn take(kind: &Kind) -> Result<Process, String> {
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(i) = pool.iter().position(|p| p.kind == *kind) {
            let mut p = pool.swap_remove(i);
            // A process whose spawning thread ended is gone (the program asks Linux to end it then).
            if matches!(p.child.try_wait(), Ok(None)) {
                return Ok(p);
            }
            p.kill();
        }
        drop(pool);
        Process::spawn(kind)
    }

    fn spawn(kind: &Kind) -> Result<Process, String> {
        let mut command = Command::new(&kind.binary);
        match &kind.test {
            // listwatchtest.Run serves when this names its test.
            Some(test) => command
                .args(["-test.run", &crate::go_package::run_pattern(test)])
                .env("LISTWATCH_GO_CLIENT", test),
            None => command.args(["-test.run", "^TestShim$"]),
        };
        command
            .env("GOMAXPROCS", "1")
            .env("GODEBUG", "randautoseed=0,randseednop=0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The release's default unless the configuration switches the streaming list.
        command.env_remove("KUBE_FEATURE_WatchListClient").env_remove("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA");
        command.envs(kind.env.iter().copied());

        let mut child = spawn_child(command).map_err(|e| {
            format!("cannot start {} ({e}): run scripts/build-client-go", shown(&kind.binary))
        })?;
        let stdin = child.stdin.take().ok_or("the client-go program has no stdin")?;
        let stdout = child.stdout.take().ok_or("the client-go program has no stdout")?;
        let stderr = child.stderr.take().ok_or("the client-go program has no stderr")?;
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let sink = Arc::clone(&kept);
        // Drained always: client-go logs there, and a full pipe would block the program.
        std::thread::spawn(move || {
            let mut text = String::new();
            let mut reader = BufReader::new(stderr);
            loop {
                text.clear();
                match reader.by_ref().take(64 * 1024).read_line(&mut text) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        // client-go's own log lines, for a person reading what it did.
                        if std::env::var_os("LISTWATCH_CLIENT_GO_LOG").is_some() {
                            eprint!("client-go: {text}");
                        }
                        let mut kept = sink.lock().unwrap_or_else(|p| p.into_inner());
                        if kept.len() == STDERR_LINES {
                            kept.pop_front();
                        }
                        kept.push_back(text.trim_end().to_string());
                    }
                }
            }
        });
        Ok(Process { kind: kind.clone(), child, stdin, replies, stderr: kept })
    }

    /// Send one command and wait for its reply line.
    pub fn call(&mut self, command: &Value) -> Result<Reply, String> {
        let what = command["cmd"].as_str().unwrap_or("?").to_string();
        let mut line = command.to_string();
        line.push('\n');
        if let Err(e) = self.stdin.write_all(line.as_bytes()).and_then(|()| self.stdin.flush()) {
            return Err(self.died(&what, &format!("writing to it failed: {e}")));
        }
        match self.replies.recv_timeout(REPLY_TIMEOUT) {
            Ok(reply) => {
                let value: Value = serde_json::from_str(&reply)
                    .map_err(|e| self.died(&what, &format!("it answered a line that is not JSON ({e})")))?;
                let text = |k: &str| value[k].as_str().map(str::to_string);
                if let Some(halt) =
                    text("spinning").map(Halt::Spinning).or_else(|| text("blocked").map(Halt::Blocked))
                {
                    self.kill();
                    return Ok(Reply::Halted(halt, value));
                }
                if let Some(stuck) = value["stuck"].as_str() {
                    return Err(self.died(&what, &format!("it is stuck: {stuck}")));
                }
                if let Some(error) = value["error"].as_str() {
                    return Err(self.died(&what, &format!("it failed: {error}")));
                }
                Ok(Reply::Answer(value))
            }
            Err(RecvTimeoutError::Timeout) => {
                Err(self.died(&what, &format!("it did not answer within {} s", REPLY_TIMEOUT.as_secs())))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.died(&what, "it exited")),
        }
    }

    /// The error for a process that failed at `what`; the process is ended.
    fn died(&mut self, what: &str, why: &str) -> String {
        self.kill();
        let status = self.child.try_wait().ok().flatten().map(|s| format!(" ({s})")).unwrap_or_default();
        let last = self.stderr.lock().unwrap_or_else(|p| p.into_inner()).back().cloned().unwrap_or_default();
        let said = if last.is_empty() { String::new() } else { format!("; its last log line: {last}") };
        let program = match &self.kind.test {
            Some(test) => format!("the Go program of test {test} ({})", shown(&self.kind.binary)),
            None => "the client-go program".to_string(),
        };
        format!("{program}, at its '{what}' command: {why}{status}{said}")
    }

    /// End the session and put the process back in the pool (or end it, if it cannot be reused).
    pub fn release(mut self) {
        let stopped = self.call(&serde_json::json!({"cmd": "stop"}));
        if !matches!(&stopped, Ok(Reply::Answer(v)) if v["stopped"] == Value::Bool(true)) {
            self.kill();
            return;
        }
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        if pool.iter().filter(|p| p.kind == self.kind).count() < POOL_MAX {
            pool.push(self);
        } else {
            drop(pool);
            self.kill();
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn shown(path: &Path) -> String {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}
