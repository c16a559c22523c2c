//! An etcd of our own: started on free loopback ports with a fresh data directory, waited for until it
//! answers, and stopped and removed when dropped (on success, on error, and after Ctrl-C, which ends a
//! run between sequences).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::conformance::{EtcdToStart, SideError};

/// Where to get etcd when it is missing.
pub const INSTALL_HINT: &str = "run scripts/install-etcd (Debian's etcd-server 3.4.23)";

/// The binary of `release`: Debian's from PATH, or the one scripts/install-etcd built.
fn release_binary(release: &EtcdToStart) -> Result<PathBuf, SideError> {
    match release.built_path() {
        None => binary().ok_or_else(|| SideError(format!("etcd is not installed: {INSTALL_HINT}"))),
        Some(path) => crate::conformance::built::find(&path)
            .ok_or_else(|| SideError(format!("etcd {release} is not built: {}", release.install_hint()))),
    }
}

const EXITED: &str = "etcd exited at start";

/// A running etcd that we started.
#[derive(Debug)]
pub struct EtcdProcess {
    child: Child,
    dir: PathBuf,
    pub endpoint: String,
}

fn free_port() -> Result<u16, SideError> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| SideError(format!("no free loopback port: {e}")))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| SideError(format!("no free loopback port: {e}")))
}

fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")])
        .map(|dir| dir.join("etcd"))
        .find(|candidate| candidate.is_file())
}

/// A command for `program` that dies with this process even when it is killed outright (SIGKILL runs
/// no destructor): through util-linux's `setpriv --pdeathsig KILL` when it is there (Debian's etcd
/// does not set PR_SET_PDEATHSIG itself; the Go programs of this project do).
fn parent_bound(program: &std::path::Path) -> Command {
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].into_iter().map(PathBuf::from).find(|p| p.is_file());
    match setpriv {
        Some(setpriv) => {
            let mut command = Command::new(setpriv);
            command.arg("--pdeathsig=KILL").arg("--").arg(program);
            command
        }
        None => Command::new(program),
    }
}

impl EtcdProcess {
    /// Start etcd and wait until its client port accepts connections (at most `within`). The ports are
    /// picked free just before; another process may take one first, so an etcd that exits at start is
    /// tried again on new ports, three times in all.
    pub fn start(within: Duration) -> Result<Self, SideError> {
        Self::start_version(&EtcdToStart::Debian, within)
    }

    /// [`Self::start`] for the etcd `version` names.
    pub fn start_version(version: &EtcdToStart, within: Duration) -> Result<Self, SideError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match Self::start_once(version, within) {
                Err(SideError(e)) if attempt < 3 && e.starts_with(EXITED) => continue,
                result => return result,
            }
        }
    }

    fn start_once(version: &EtcdToStart, within: Duration) -> Result<Self, SideError> {
        let etcd = release_binary(version)?;
        let (client, peer) = (free_port()?, free_port()?);
        let dir = crate::conformance::scratch_dir("etcd", &client.to_string())?;
        let log = std::fs::File::create(dir.join("etcd.log"))
            .map_err(|e| SideError(format!("{}: {e}", dir.display())))?;
        let (client_url, peer_url) =
            (format!("http://127.0.0.1:{client}"), format!("http://127.0.0.1:{peer}"));
        let spawned = parent_bound(&etcd)
            .arg("--name=listwatch")
            .arg(format!("--data-dir={}", dir.join("data").display()))
            .arg(format!("--listen-client-urls={client_url}"))
            .arg(format!("--advertise-client-urls={client_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=listwatch={peer_url}"))
            .arg("--logger=zap")
            .arg("--log-outputs=stderr")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(SideError(format!(
                    "{}: cannot start: {e} ({})",
                    etcd.display(),
                    version.install_hint()
                )));
            }
        };
        let mut process = EtcdProcess { child, dir, endpoint: client_url };
        process.wait_ready(client, within)?;
        Ok(process)
    }

    fn wait_ready(&mut self, port: u16, within: Duration) -> Result<(), SideError> {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(SideError(format!("{EXITED} ({status}): {}", self.log_tail())));
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(());
            }
            if started.elapsed() > within {
                return Err(SideError(format!("etcd did not listen within {within:?}: {}", self.log_tail())));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The last line etcd logged, for an error message.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("etcd.log")).unwrap_or_default();
        text.lines().last().unwrap_or("no log").chars().take(300).collect()
    }

    /// Kill etcd now (what a crash looks like to the run); dropping still removes its directory.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the process is still running (an etcd that died mid-run is named in the error).
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for EtcdProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
