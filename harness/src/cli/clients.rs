//! The one dispatch from a client's name to the drivers: `--client NAME` and a trace file's `client`
//! name a [`ClientChoice`], and [`with_clients!`] calls a driver, generic over
//! [`listwatch_model::Clients`], with the client it stands for. Which clients exist depends on the
//! build: the model reflector always, kube-runtime with `--features kube`, client-go with
//! `--features client-go` (each release whose Go program `scripts/build-client-go` built).

use listwatch_model::ModelReflector;

/// A client under test, by name (`listwatch clients` lists them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ClientChoice {
    #[default]
    Model,
    #[cfg(feature = "kube")]
    Kube(listwatch_kube::Kube<listwatch_kube::KubeConfig>),
    #[cfg(feature = "client-go")]
    ClientGo(listwatch_client_go::ClientGo),
}

/// Evaluate `$body` with `$k` bound to the [`listwatch_model::Clients`] that `$choice` names.
macro_rules! with_clients {
    ($choice:expr, $k:ident => $body:expr) => {
        match $choice {
            $crate::cli::clients::ClientChoice::Model => {
                let $k = &listwatch_model::ModelReflector;
                $body
            }
            #[cfg(feature = "kube")]
            $crate::cli::clients::ClientChoice::Kube($k) => $body,
            #[cfg(feature = "client-go")]
            $crate::cli::clients::ClientChoice::ClientGo($k) => $body,
        }
    };
}
pub(crate) use with_clients;

impl ClientChoice {
    /// The client a spec names: `model`, `NAME` or `NAME,option=value` (`listwatch clients`).
    pub fn parse(spec: &str) -> Result<ClientChoice, String> {
        if spec == ModelReflector::NAME {
            return Ok(ClientChoice::Model);
        }
        if spec.starts_with("kube-runtime") {
            #[cfg(feature = "kube")]
            return listwatch_kube::KubeConfig::parse(spec)
                .map(|kc| ClientChoice::Kube(listwatch_kube::Kube(kc)));
            #[cfg(not(feature = "kube"))]
            return Err(format!(
                "{spec:?}: kube-runtime clients need listwatch built with `--features kube`"
            ));
        }
        // controller-runtime's cache runs in client-go's Go program.
        // A Go user's own client (listwatchtest) runs in its test binary the same way.
        if spec.starts_with("client-go") || spec.starts_with("controller-runtime") || spec.starts_with("go:")
        {
            #[cfg(feature = "client-go")]
            return listwatch_client_go::ClientGo::parse(spec).map(ClientChoice::ClientGo);
            #[cfg(not(feature = "client-go"))]
            return Err(format!(
                "{spec:?}: client-go clients need listwatch built with `--features client-go` and the Go \
                 program (scripts/build-client-go)"
            ));
        }
        Err(format!("no client named {spec:?} (`listwatch clients` lists them)"))
    }

    /// The spec [`Self::parse`] reads back.
    pub fn spec(&self) -> String {
        with_clients!(self, k => listwatch_model::Clients::name(k))
    }

    pub fn is_model(&self) -> bool {
        *self == ClientChoice::Model
    }

    /// Whether `flaws` can be switched on with this client under test: the model reflector takes every
    /// flaw; another client brings its own reflector, cache and manager, so only the flaws of the
    /// model's API server, which serves it, apply.
    pub fn takes(&self, flaws: listwatch_model::Flaws) -> Result<(), String> {
        use listwatch_model::Component;
        match flaws.iter().find(|f| !self.is_model() && f.component() != Component::Server) {
            Some(f) => Err(format!(
                "--flaw {f}: a flaw of the model's {}, and --client {} brings its own; only the model API \
                 server's flaws apply to another client",
                f.component().name(),
                self.spec()
            )),
            None => Ok(()),
        }
    }

    /// The options a client's name may take, each with what it does (the client-go configurations').
    pub fn options() -> Vec<(&'static str, &'static str)> {
        #[allow(unused_mut)]
        let mut out = Vec::new();
        #[cfg(feature = "client-go")]
        out.extend(listwatch_client_go::config::OPTIONS);
        out
    }

    /// The specs that name a Go user's own code, each with what it runs (`go:`).
    pub fn go_specs() -> Vec<(&'static str, &'static str)> {
        #[allow(unused_mut)]
        let mut out = Vec::new();
        #[cfg(feature = "client-go")]
        out.extend(listwatch_client_go::go_package::SPECS);
        out
    }

    /// Every client this build can run: its name and what it is.
    pub fn all() -> Vec<(String, String)> {
        #[allow(unused_mut)]
        let mut out = vec![(
            ModelReflector::NAME.to_string(),
            "the model reflector (client-go's reflector and informer, as SEMANTICS.md gives them)"
                .to_string(),
        )];
        #[cfg(feature = "kube")]
        out.extend(listwatch_kube::KubeConfig::ALL.iter().map(|c| (c.name.to_string(), c.about.to_string())));
        #[cfg(feature = "client-go")]
        out.extend(listwatch_client_go::ClientGo::built().into_iter().map(|c| {
            use listwatch_model::Clients;
            (c.name(), format!("{} ({})", c.about, c.version))
        }));
        out
    }
}
