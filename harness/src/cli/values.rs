//! The parsers of argument values that more than one command takes: each turns a value into what the
//! command uses, or into the one line clap prints after the argument's name.

use listwatch_model::{ApiServerRelease, EtcdRelease};

/// A whole number, zero or more.
pub fn whole(v: &str) -> Result<u64, String> {
    v.parse::<u64>().map_err(|_| format!("'{v}' is not a whole number"))
}

/// A whole number, one or more.
pub fn at_least_one(v: &str) -> Result<u64, String> {
    whole(v).and_then(|n| if n == 0 { Err("must be at least 1".to_string()) } else { Ok(n) })
}

/// `--shard K/N`: this machine's share of a campaign or a check.
pub fn shard(v: &str) -> Result<(u64, u64), String> {
    let bad = || format!("'{v}' is not K/N with 1 <= K <= N (e.g. 2/8)");
    let (k, n) = v.split_once('/').ok_or_else(bad)?;
    let (k, n) = (k.parse::<u64>().map_err(|_| bad())?, n.parse::<u64>().map_err(|_| bad())?);
    if k == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// `--etcd`: a release `X.Y.Z`, or a minor `3.4` to `3.7` for the release `conformance` compares of it
/// (3.4: Debian's 3.4.23; 3.5 to 3.7: the newest pinned).
pub fn parse_etcd(v: &str) -> Result<EtcdRelease, String> {
    if let Some(release) = EtcdRelease::parse(v) {
        return Ok(release);
    }
    let newest = match crate::conformance::EtcdToStart::parse(v) {
        Ok(crate::conformance::EtcdToStart::Built(version)) if v.matches('.').count() == 1 => Some(version),
        Ok(crate::conformance::EtcdToStart::Debian) if v.matches('.').count() == 1 => Some("3.4.23".into()),
        _ => None,
    };
    newest.and_then(|n| EtcdRelease::parse(&n)).ok_or_else(|| {
        format!("'{v}' is not an etcd release (X.Y.Z, e.g. 3.5.35, or 3.4, 3.5, 3.6, 3.7 for the newest compared)")
    })
}

/// `--apiserver`: a k8s.io/apiserver release `v0.Y.Z` (or Kubernetes' `1.Y.Z`).
pub fn parse_apiserver(v: &str) -> Result<ApiServerRelease, String> {
    ApiServerRelease::parse(v)
        .ok_or_else(|| format!("'{v}' is not a k8s.io/apiserver release (v0.Y.Z, e.g. v0.33.13, or 1.33.13)"))
}

/// `--resource`: a namespaced resource of a real server, GROUP/VERSION/RESOURCE or, in the core group,
/// VERSION/RESOURCE.
pub fn resource(v: &str) -> Result<String, String> {
    let parts: Vec<&str> = v.split('/').collect();
    if (parts.len() == 2 || parts.len() == 3) && parts.iter().all(|p| !p.is_empty()) {
        Ok(v.to_string())
    } else {
        Err(format!("'{v}' is not GROUP/VERSION/RESOURCE (or VERSION/RESOURCE for the core group)"))
    }
}
