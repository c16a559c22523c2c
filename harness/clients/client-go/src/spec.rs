//! A client spec read into its configuration: `NAME[@vX.Y.Z][,options]` names one of client-go's
//! configurations ([`ClientGo::all_named`]); `go:DIR,test=NAME[,options]` a Go package's own code
//! ([`crate::go_package`]). [`ClientGo::spec`] writes one back.

use crate::config::{
    binary, handlers_option, seconds_option, waiters_option, ClientGo, Lists, OPTIONS, PINNED,
};

impl ClientGo {
    /// The configuration a spec names: `NAME[@vX.Y.Z][,waiters=N][,timeout=Ns][,transform]`
    /// (`listwatch clients`).
    /// The release's shim must be built (`scripts/build-client-go vX.Y.Z`).
    pub fn parse(spec: &str) -> Result<ClientGo, String> {
        if spec.starts_with("go:") {
            return crate::go_package::parse(spec);
        }
        let mut parts = spec.split(',');
        let head = parts.next().unwrap_or("");
        let (name, version) = match head.split_once('@') {
            Some((name, version)) => (name, version.to_string()),
            None => (head, PINNED.to_string()),
        };
        let mut config = Self::all_named().into_iter().find(|c| c.name == name).ok_or_else(|| {
            let names: Vec<&str> = Self::all_named().iter().map(|c| c.name).collect();
            format!("no client named {spec:?} (client-go configurations: {})", names.join(", "))
        })?;
        if !version.starts_with('v') || version[1..].split('.').count() != 3 {
            return Err(format!("{spec:?}: {version:?} is not a release like {PINNED}"));
        }
        config.binary = binary(&version);
        config.version = version;
        for option in parts {
            match option.split_once('=') {
                Some(("waiters", n)) => config.waiters = waiters_option(spec, n)?,
                Some(("timeout", t)) => config.timeout_secs = Some(seconds_option(spec, "timeout", t)?),
                Some(("resync", t)) => {
                    if !config.lists.resyncs() {
                        return Err(format!(
                            "{spec:?}: resync is for the configurations with an informer or a DeltaFIFO \
                             (the SharedIndexInformer ones, client-go-fifo, client-go-indexer-informer, \
                             client-go-store-informer, controller-runtime)"
                        ));
                    }
                    config.resync_secs = Some(seconds_option(spec, "resync", t)?);
                }
                Some(("handlers", n)) => {
                    config.shared_informer_only(spec, "handlers")?;
                    config.handlers = handlers_option(spec, n)?;
                }
                None if option == "transform" => {
                    config.informer_option(spec, option, 24, "SetTransform")?;
                    config.transform = true;
                }
                None if option == "panic-handler" => {
                    config.informer_option(spec, option, 27, "a handler registration's HasSynced")?;
                    if config.lists == Lists::WatchList
                        || (config.lists == Lists::Defaults && config.minor() >= 35)
                    {
                        return Err(format!(
                            "{spec:?}: panic-handler needs an informer that LISTs (client-go-no-watchlist, \
                             client-go-paged, or a release before v0.35): a streaming list hands its objects \
                             to the handler in a Go map's order, which differs from run to run, and the panic \
                             makes that order seen"
                        ));
                    }
                    config.panic_handler = true;
                }
                Some(("rv", rv)) => {
                    config.pager_only(spec, "rv")?;
                    config.pager_rv = Some(match rv {
                        "0" => "0",
                        "unset" => "unset",
                        _ => return Err(format!("{spec:?}: rv must be 0 or unset")),
                    });
                }
                Some(("match", m)) => {
                    config.pager_only(spec, "match")?;
                    config.pager_match = Some(match m {
                        "NotOlderThan" => "NotOlderThan",
                        "Exact" => "Exact",
                        _ => return Err(format!("{spec:?}: match must be NotOlderThan or Exact")),
                    });
                }
                None if option == "slow-handler" => {
                    config.shared_informer_only(spec, option)?;
                    config.slow_handler = true;
                }
                None if option == "watch-error-handler" => {
                    if !config.lists.takes_watch_error_handler() {
                        return Err(format!(
                            "{spec:?}: watch-error-handler is for the SharedIndexInformer configurations, client-go-pager, client-go-fifo and controller-runtime"
                        ));
                    }
                    if config.minor() < 19 {
                        return Err(format!(
                            "{spec:?}: watch-error-handler needs client-go v0.19 or later (SetWatchErrorHandler, kubernetes PR #87329)"
                        ));
                    }
                    config.watch_error_handler = true;
                }
                _ => {
                    let known: Vec<&str> = OPTIONS.iter().filter_map(|(o, _)| o.strip_prefix(',')).collect();
                    return Err(format!("{spec:?}: unknown option {option:?} (known: {})", known.join(", ")));
                }
            }
        }
        if config.panic_handler && config.handlers > 1 {
            return Err(format!(
                "{spec:?}: panic-handler takes one handler (the one that panics); drop handlers"
            ));
        }
        if let Some(why) = config.unavailable() {
            return Err(format!("{spec:?}: {why}"));
        }
        let bin = &config.binary;
        if !bin.is_file() {
            return Err(format!(
                "{spec:?}: the client-go {} program is not built ({} is missing): run scripts/build-client-go {}",
                config.version,
                bin.display(),
                config.version
            ));
        }
        Ok(config)
    }

    /// Whether this configuration takes `option`, an option of the SharedIndexInformer configurations
    /// from client-go v0.`since` (which brought `what`); why not if it does not.
    fn informer_option(&self, spec: &str, option: &str, since: u32, what: &str) -> Result<(), String> {
        self.shared_informer_only(spec, option)?;
        if self.minor() < since {
            return Err(format!("{spec:?}: {option} needs client-go v0.{since} or later ({what})"));
        }
        Ok(())
    }

    /// Whether this configuration takes `option`, an option of `client-go-pager`'s; why not if not.
    fn pager_only(&self, spec: &str, option: &str) -> Result<(), String> {
        if self.lists != Lists::Pager {
            return Err(format!("{spec:?}: {option} is client-go-pager's option"));
        }
        Ok(())
    }

    /// Whether this configuration takes `option`, an option of the SharedIndexInformer configurations
    /// in every release; why not if it does not.
    fn shared_informer_only(&self, spec: &str, option: &str) -> Result<(), String> {
        if !self.lists.is_shared_informer() {
            return Err(format!("{spec:?}: {option} is for the SharedIndexInformer configurations"));
        }
        Ok(())
    }
}
