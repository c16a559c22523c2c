//! `k8s.io/sample-apiserver` as `conformance http`'s server when no `--endpoint` is given: a real
//! aggregated API server (the API server's HTTP handlers, validation, admission and watch cache) over
//! an etcd listwatch started, built by `scripts/build-sample-apiserver` into
//! `target/go/sample-apiserver/vX.Y.Z/sample-apiserver`. It runs on loopback; it ends when its stdin
//! closes, when listwatch dies (PR_SET_PDEATHSIG), and when this is dropped, its directory removed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::conformance::SideError;

/// The script that builds it.
pub const BUILD_HINT: &str = "run scripts/build-sample-apiserver";
/// The etcd prefix it stores under, as kube-apiserver's default.
pub const ETCD_PREFIX: &str = "/registry";
/// The resources it serves: flunders (namespaced), written, listed and watched; fischers
/// (cluster-scoped), written to move the revision without a flunder's event.
pub const FLUNDERS: &str = "wardle.example.com/v1alpha1/flunders";
pub const FISCHERS: &str = "wardle.example.com/v1alpha1/fischers";

/// The release to start and its binary: `wanted`, or the newest under `target/go/sample-apiserver/`.
pub fn binary(wanted: Option<&str>) -> Result<(String, PathBuf), SideError> {
    super::super::built::release("sample-apiserver", wanted).ok_or_else(|| {
        let which = wanted.map_or(String::new(), |v| format!(" {v}"));
        SideError(format!("k8s.io/sample-apiserver{which} is not built: {BUILD_HINT}{which}"))
    })
}

/// The line it prints once it serves.
#[derive(Debug, Deserialize)]
struct Ready {
    url: String,
    kubeconfig: PathBuf,
}

/// A running sample-apiserver.
pub struct SampleApiServer {
    child: Child,
    stdin: Option<ChildStdin>,
    dir: PathBuf,
    pub url: String,
    pub kubeconfig: PathBuf,
}

impl std::fmt::Debug for SampleApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SampleApiServer({})", self.url)
    }
}

impl SampleApiServer {
    /// Start `binary` on the etcd at `etcd` with the feature gates `gates` (and, for a test, a
    /// `mistake` it makes on purpose: harness/sample-apiserver/mistake.go), and wait until it serves
    /// (at most `within`).
    pub fn start(
        binary: &Path,
        etcd: &str,
        gates: &str,
        mistake: Option<&str>,
        within: Duration,
    ) -> Result<Self, SideError> {
        let dir = crate::conformance::scratch_dir("sample-apiserver", "")?;
        let log = std::fs::File::create(dir.join("server.log"))
            .map_err(|e| SideError(format!("{}: {e}", dir.display())))?;
        let mut command = Command::new(binary);
        command
            .arg(format!("--etcd={etcd}"))
            .arg(format!("--etcd-prefix={ETCD_PREFIX}"))
            .arg(format!("--dir={}", dir.display()));
        if !gates.is_empty() {
            command.arg(format!("--feature-gates={gates}"));
        }
        if let Some(m) = mistake {
            command.arg(format!("--mistake={m}"));
        }
        let spawned = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(log).spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(SideError(format!("{}: cannot start: {e} ({BUILD_HINT})", binary.display())));
            }
        };
        let stdout = child.stdout.take().expect("piped");
        let stdin = child.stdin.take();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let read = BufReader::new(stdout).read_line(&mut line).map(|_| line);
            let _ = tx.send(read);
        });
        let mut server =
            SampleApiServer { child, stdin, dir, url: String::new(), kubeconfig: PathBuf::new() };
        let deadline = Instant::now() + within;
        let line = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let ready = match line {
            Ok(Ok(text)) if !text.trim().is_empty() => serde_json::from_str::<Ready>(&text)
                .map_err(|e| SideError(format!("sample-apiserver printed {text:?}, not its address: {e}")))?,
            Ok(_) => return Err(server.failed("exited before it served")),
            Err(_) => return Err(server.failed(&format!("did not serve within {within:?}"))),
        };
        server.url = ready.url;
        server.kubeconfig = ready.kubeconfig;
        Ok(server)
    }

    fn failed(&mut self, what: &str) -> SideError {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let text = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no log");
        SideError(format!("sample-apiserver {what}: {}", last.chars().take(300).collect::<String>()))
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for SampleApiServer {
    fn drop(&mut self) {
        super::server::end_child(&mut self.child, self.stdin.take(), &self.dir);
    }
}
