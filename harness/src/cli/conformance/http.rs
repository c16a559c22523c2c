//! `listwatch conformance http`: the API server contract over HTTP, the model as the oracle, against
//! any server that speaks the Kubernetes API (`--endpoint`), or k8s.io/sample-apiserver started here.

use std::path::PathBuf;

use listwatch_model::ApiServerRelease;

use super::super::values::{at_least_one, parse_apiserver, resource, whole};
use super::super::UsageError;
use super::apiserver::read_sequence;
use super::{endpoint, max_ops, plant};
use crate::conformance::{EtcdToStart, Plant};

pub const HTTP_HELP: &str = "\
The sequences of `conformance apiserver` (writes, deletes, LISTs with resourceVersion,
resourceVersionMatch, limit and continue, WATCHes from an RV or \"0\" with bookmarks, streaming lists
with sendInitialEvents) sent through the Kubernetes REST API by client-go's dynamic client, as a
controller sends them, and every answer and watch message compared with the model's. Each sequence
writes objects k00..k03 of --resource in a namespace of its own (or in --namespace, emptied of such
objects first), labelled with a version count; the comparison, the barrier after each step and the
shrinking are those of `conformance apiserver`. A difference is shrunk, printed and written to --out;
--replay FILE runs such a file again.

Without --endpoint, listwatch starts k8s.io/sample-apiserver (scripts/build-sample-apiserver; the
newest release built, or --sample-apiserver's) on loopback over an etcd of its own (--etcd), writes its flunders, and reaches its etcd for compactions and
multi-key deletes; it stops both and removes their directories when done, on error and on Ctrl-C. With
--endpoint it sends only what goes through the API (no compactions, no transactions) to that server,
reached as kubectl reaches it (--kubeconfig, --context, --token-file, --certificate-authority,
--insecure-skip-tls-verify), and judges it by the rules of the release its /version names (or
--apiserver). Needs scripts/build-rest and a build with the apiserver feature:
  cargo run --release --features apiserver -- conformance http

exit status: 0 no unexplained difference, 1 a difference (the shrunk sequence is printed and written),
2 bad arguments, a server or program that cannot be built, started or reached or dies mid-run, or the
run was interrupted.";

/// `conformance http`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct HttpArgs {
    /// The server's URL; without it, listwatch starts k8s.io/sample-apiserver and its etcd
    #[arg(long, value_name = "URL", value_parser = endpoint)]
    pub endpoint: Option<String>,
    /// The kubeconfig to reach --endpoint with (as kubectl's flag)
    #[arg(long, value_name = "FILE", requires = "endpoint")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use
    #[arg(long, value_name = "NAME", requires = "endpoint")]
    pub context: Option<String>,
    /// A file holding a bearer token
    #[arg(long, value_name = "FILE", requires = "endpoint")]
    pub token_file: Option<PathBuf>,
    /// A PEM file of the CA that signed the server's certificate
    #[arg(long, value_name = "FILE", requires = "endpoint")]
    pub certificate_authority: Option<PathBuf>,
    /// Do not check the server's certificate
    #[arg(long, requires = "endpoint")]
    pub insecure_skip_tls_verify: bool,
    /// The namespaced resource to write, list and watch, GROUP/VERSION/RESOURCE (default: ConfigMaps
    /// with --endpoint, the sample-apiserver's flunders without)
    #[arg(long, value_name = "G/V/R", value_parser = resource)]
    pub resource: Option<String>,
    /// The namespace to use, which must exist (default: a namespace per sequence, never created, for
    /// servers that need none)
    #[arg(long, value_name = "NAME")]
    pub namespace: Option<String>,
    /// Judge the server by this k8s.io/apiserver release's rules (default: the release its /version names)
    #[arg(long, value_name = "VERSION", value_parser = parse_apiserver)]
    pub apiserver: Option<ApiServerRelease>,
    /// Which k8s.io/sample-apiserver release to start (scripts/build-sample-apiserver vX.Y.Z; default:
    /// the newest built); its k8s.io/apiserver release's rules judge it unless --apiserver says otherwise
    #[arg(long, value_name = "VERSION", value_parser = release, conflicts_with = "endpoint")]
    pub sample_apiserver: Option<String>,
    /// Which etcd to start under the sample-apiserver: 3.4 (Debian's 3.4.23), 3.5, 3.6, 3.7 or a
    /// release 3.M.P of those (scripts/install-etcd vX.Y.Z)
    #[arg(long, value_name = "VERSION", default_value = "3.4", value_parser = EtcdToStart::parse, conflicts_with = "endpoint")]
    pub etcd: EtcdToStart,
    /// How many sequences
    #[arg(long, value_name = "N", default_value = "100", value_parser = at_least_one)]
    pub sequences: u64,
    /// The seed of the sequences
    #[arg(long, value_name = "S", default_value = "0", value_parser = whole)]
    pub seed: u64,
    /// The most operations in one sequence
    #[arg(long, value_name = "N", default_value = "30", value_parser = max_ops)]
    pub max_ops: usize,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Run one sequence file (as --out writes them) instead of generated ones
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sequences", "seed"])]
    pub replay: Option<PathBuf>,
    /// Where to write a shrunk difference
    #[arg(long, value_name = "FILE", default_value = "target/listwatch/conformance/http-difference.json")]
    pub out: PathBuf,
    /// Plant a model bug, to see the run catch it
    #[arg(long, value_name = "BUG", default_value = "none", value_parser = plant, hide = true)]
    pub plant: Plant,
    /// Start the sample-apiserver with a mistake it makes on purpose (no-initial-events-end,
    /// expired-as-500), to see the run catch it, or a liberty the contract allows (no-pagination,
    /// opaque-rvs)
    #[arg(long, value_name = "MISTAKE", value_parser = mistake, hide = true, conflicts_with = "endpoint")]
    pub server_mistake: Option<String>,
}

fn release(v: &str) -> Result<String, String> {
    let parts: Vec<&str> = v.strip_prefix('v').unwrap_or("").split('.').collect();
    if parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
        Ok(v.to_string())
    } else {
        Err(format!("'{v}' is not a release like v0.37.2"))
    }
}

fn mistake(v: &str) -> Result<String, String> {
    match v {
        "no-initial-events-end" | "expired-as-500" | "no-pagination" | "opaque-rvs" => Ok(v.to_string()),
        _ => Err(format!(
            "'{v}' is not a server mistake (known: no-initial-events-end, expired-as-500, no-pagination, opaque-rvs)"
        )),
    }
}

/// Refuse a sequence with a step only the in-process watch cache takes (`conformance apiserver`'s):
/// over HTTP the run can neither hold a server's cache back, make it relist, nor move its clock.
fn over_http(
    path: &std::path::Path,
    seq: &crate::conformance::apiserver::ApiSequence,
) -> Result<(), UsageError> {
    use crate::conformance::apiserver::ApiOp;
    let cache_only = |op: &ApiOp| {
        matches!(op, ApiOp::HoldCache | ApiOp::ReleaseCache | ApiOp::RelistCache | ApiOp::Minute)
    };
    match seq.ops.iter().enumerate().find(|(_, op)| cache_only(op)) {
        Some((i, op)) => Err(UsageError(format!(
            "{}: step {i} ({op}) needs the in-process watch cache: over HTTP a run cannot hold, relist or \
             move a server's cache (run it with conformance apiserver --replay)",
            path.display()
        ))),
        None => Ok(()),
    }
}

impl HttpArgs {
    /// The REST driver's flags for a server someone else runs: where it is and how to reach it.
    pub fn driver_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                args.push(format!("--{name}={v}"));
            }
        };
        flag("server", self.endpoint.clone());
        flag("kubeconfig", self.kubeconfig.as_ref().map(|p| p.display().to_string()));
        flag("context", self.context.clone());
        flag("token-file", self.token_file.as_ref().map(|p| p.display().to_string()));
        flag("certificate-authority", self.certificate_authority.as_ref().map(|p| p.display().to_string()));
        flag("namespace", self.namespace.clone());
        flag("resource", Some(self.resource.clone().unwrap_or_else(|| "v1/configmaps".into())));
        if self.insecure_skip_tls_verify {
            args.push("--insecure-skip-tls-verify".into());
        }
        args
    }
}

#[cfg(not(feature = "apiserver"))]
pub fn conformance(args: &HttpArgs) -> Result<i32, UsageError> {
    if let Some(path) = &args.replay {
        over_http(path, &read_sequence(path)?)?;
    }
    Err(UsageError(
        "conformance http: this listwatch was built without the apiserver feature; run scripts/build-rest \
         (and, to start a server, scripts/install-etcd and scripts/build-sample-apiserver), then cargo run \
         --release --features apiserver -- conformance http"
            .into(),
    ))
}

#[cfg(feature = "apiserver")]
pub fn conformance(args: &HttpArgs) -> Result<i32, UsageError> {
    let replay = args.replay.as_ref().map(|p| read_sequence(p).map(|s| (p.clone(), s))).transpose()?;
    if let Some((path, seq)) = &replay {
        over_http(path, seq)?;
    }
    Ok(run::http(args, replay))
}

#[cfg(feature = "apiserver")]
pub(crate) mod run {
    use std::time::Duration;

    use listwatch_model::store::TombstonePolicy;
    use listwatch_model::ApiServerRelease;

    use super::super::apiserver::run::Run;
    use super::HttpArgs;
    use crate::conformance::apiserver::sample::{self, SampleApiServer, ETCD_PREFIX, FISCHERS, FLUNDERS};
    use crate::conformance::apiserver::server::{gates, ApiServerProcess, RestSide};
    use crate::conformance::apiserver::ApiSequence;
    use crate::conformance::built;
    use crate::conformance::etcd::{EtcdProcess, EtcdStore};

    /// etcd and the sample-apiserver over it, both ours (dropped on every return), the tombstone
    /// policy of that etcd (E4), and the driver's flags for them.
    pub type Started = (EtcdProcess, SampleApiServer, TombstonePolicy, Vec<String>, ApiServerRelease);

    /// Where a resource's objects live in the server's etcd: the prefix, the group (none for the core
    /// group), the resource, as the generic registry stores them.
    fn in_etcd(resource: &str) -> String {
        match resource.split('/').collect::<Vec<_>>().as_slice() {
            [group, _, resource] => format!("{ETCD_PREFIX}/{group}/{resource}"),
            [_, resource] => format!("{ETCD_PREFIX}/{resource}"),
            _ => ETCD_PREFIX.to_string(),
        }
    }

    /// What to start when no endpoint is given: which sample-apiserver release (the newest built when
    /// none), over which etcd, with which mistake, serving which resource and namespace.
    #[derive(Clone, Debug)]
    pub struct SampleToStart<'a> {
        pub release: Option<&'a str>,
        pub etcd: &'a crate::conformance::EtcdToStart,
        pub mistake: Option<&'a str>,
        pub resource: Option<&'a str>,
        pub namespace: Option<&'a str>,
    }

    /// Start etcd and the sample-apiserver over it.
    pub fn start_sample(args: &SampleToStart<'_>) -> Result<Started, String> {
        let (release, binary) =
            sample::binary(args.release).map_err(|e| format!("finding the server: {e}"))?;
        let rules = ApiServerRelease::parse(&release)
            .ok_or_else(|| format!("{}: '{release}' names no release", binary.display()))?;
        let etcd = EtcdProcess::start_version(args.etcd, Duration::from_secs(20))
            .map_err(|e| format!("starting etcd: {e}"))?;
        let tombstones = EtcdStore::connect(&etcd.endpoint)
            .map_err(|e| format!("reaching etcd: {e} (scripts/install-etcd)"))?
            .tombstones();
        let server = SampleApiServer::start(
            &binary,
            &etcd.endpoint,
            gates(&release),
            args.mistake,
            Duration::from_secs(60),
        )
        .map_err(|e| format!("starting k8s.io/sample-apiserver {release}: {e}"))?;
        let resource = args.resource.unwrap_or(FLUNDERS);
        let mut driver = vec![
            format!("--kubeconfig={}", server.kubeconfig.display()),
            format!("--resource={resource}"),
            format!("--other-resource={FISCHERS}"),
            format!("--etcd={}", etcd.endpoint),
            format!("--etcd-prefix={}", in_etcd(resource)),
        ];
        if let Some(ns) = args.namespace {
            driver.push(format!("--namespace={ns}"));
        }
        Ok((etcd, server, tombstones, driver, rules))
    }

    pub fn http(args: &HttpArgs, replay: Option<(std::path::PathBuf, ApiSequence)>) -> i32 {
        let fail = |e: String| {
            eprintln!("listwatch: conformance http: {e}");
            2
        };
        let Some(driver) = built::find("rest/rest") else {
            return fail("the REST driver is not built: run scripts/build-rest".into());
        };
        let mut started = None;
        let (driver_args, side, tombstones) = match &args.endpoint {
            Some(url) => {
                let side = RestSide::reached(url.clone(), args.apiserver);
                (args.driver_args(), side, TombstonePolicy::KeepAtCompactRev)
            }
            None => match start_sample(&SampleToStart {
                release: args.sample_apiserver.as_deref(),
                etcd: &args.etcd,
                mistake: args.server_mistake.as_deref(),
                resource: args.resource.as_deref(),
                namespace: args.namespace.as_deref(),
            }) {
                Ok((etcd, server, tombstones, driver_args, rules)) => {
                    let name = match &args.server_mistake {
                        Some(m) => format!("k8s.io/sample-apiserver with the mistake {m} at {}", server.url),
                        None => format!("k8s.io/sample-apiserver at {}", server.url),
                    };
                    let side = RestSide::started(name, Some(args.apiserver.unwrap_or(rules)));
                    started = Some((etcd, server));
                    (driver_args, side, tombstones)
                }
                Err(e) => return fail(e),
            },
        };
        let server = ApiServerProcess::rest(&driver, &driver_args, side).and_then(ApiServerProcess::connect);
        let mut server = match server {
            Ok(s) => s,
            Err(e) => return fail(format!("reaching the server: {e}")),
        };
        let run = Run {
            command: "conformance http",
            hint: "scripts/build-rest, scripts/build-sample-apiserver",
            started_by: if started.is_some() { " (started by listwatch)" } else { "" },
            sequences: args.sequences,
            seed: args.seed,
            max_ops: args.max_ops,
            json: args.json,
            replay,
            out: &args.out,
            plant: args.plant,
        };
        run.drive(&mut server, tombstones, &mut || {
            let (etcd, sample) = started.as_mut()?;
            if !etcd.alive() {
                Some("etcd")
            } else if !sample.alive() {
                Some("the sample-apiserver")
            } else {
                None
            }
        })
    }
}
