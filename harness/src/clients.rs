//! The clients a driver can put under test. The exhaustive checker explores the model reflector, which
//! it can clone and hash; the simulator, its shrinker and `replay` re-execute runs from the start, so
//! they take any [`Client`], made fresh for every run by a [`Clients`].

use listwatch_model::{Action, Client, ClientId, Config, Flaws, ModelClient, System};
use listwatch_properties::{Property, Violation};

use crate::replay::judge_with;
use crate::sim::run::{run_seed_with, Run};
use crate::sim::shrink::shrink_with;
use crate::tracefile::Verdict;

/// How a driver makes the clients of a world: one per reflector the configuration asks for.
pub trait Clients {
    type C: Client;
    /// The name trace files and reports give this client.
    fn name(&self) -> &str;
    /// A fresh client for reflector `id` of a run of `config`; `seed` is the run's seed (0 when a run has
    /// none), from which a client with randomness of its own draws it.
    fn make(&self, config: &Config, seed: u64, id: ClientId) -> Self::C;
    /// Whether the client reads Kubernetes' real wire, so that the simulator also draws the wire's own
    /// faults for it (a watch line that does not decode).
    fn over_the_wire(&self) -> bool {
        false
    }
}

/// The model reflector with its informer cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelReflector;

impl ModelReflector {
    pub const NAME: &'static str = "model";
}

impl Clients for ModelReflector {
    type C = ModelClient;
    fn name(&self) -> &str {
        Self::NAME
    }
    fn make(&self, config: &Config, _seed: u64, _id: ClientId) -> ModelClient {
        ModelClient::new(config.reflector, config.flaws)
    }
}

/// kube-runtime in one of its named configurations (`listwatch clients`).
#[cfg(feature = "kube")]
impl Clients for listwatch_kube::KubeConfig {
    type C = listwatch_kube::KubeRuntime;
    fn name(&self) -> &str {
        self.name
    }
    fn make(&self, config: &Config, seed: u64, id: ClientId) -> listwatch_kube::KubeRuntime {
        // A world whose reflectors list in pages has kube-runtime list in pages of the same size.
        let kc = listwatch_kube::KubeConfig { page_size: config.reflector.page_size.map(u32::from), ..*self };
        listwatch_kube::KubeRuntime::new(kc, seed ^ (u64::from(id.0) << 56))
    }
    fn over_the_wire(&self) -> bool {
        true
    }
}

/// The client a run puts under test, by name: `model`, or (built with `--features kube`) one of
/// kube-runtime's configurations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientChoice {
    #[default]
    Model,
    #[cfg(feature = "kube")]
    Kube(listwatch_kube::KubeConfig),
}

/// Call `$body` with `$k` bound to the chosen [`Clients`].
macro_rules! with_clients {
    ($choice:expr, $k:ident => $body:expr) => {
        match $choice {
            ClientChoice::Model => {
                let $k = &ModelReflector;
                $body
            }
            #[cfg(feature = "kube")]
            ClientChoice::Kube(kc) => {
                let $k = kc;
                $body
            }
        }
    };
}

impl ClientChoice {
    /// The client a spec names: `model`, `NAME` or `NAME,waiters=N` (`listwatch clients`).
    pub fn parse(spec: &str) -> Result<ClientChoice, String> {
        if spec == ModelReflector::NAME {
            return Ok(ClientChoice::Model);
        }
        #[cfg(feature = "kube")]
        {
            listwatch_kube::KubeConfig::parse(spec).map(ClientChoice::Kube)
        }
        #[cfg(not(feature = "kube"))]
        {
            if spec.starts_with("kube-runtime") {
                Err(format!("{spec:?}: kube-runtime clients need listwatch built with `--features kube`"))
            } else {
                Err(format!("no client named {spec:?} (`listwatch clients` lists them)"))
            }
        }
    }

    /// The spec [`Self::parse`] reads back.
    pub fn spec(&self) -> String {
        match self {
            ClientChoice::Model => ModelReflector::NAME.to_string(),
            #[cfg(feature = "kube")]
            ClientChoice::Kube(kc) => kc.spec(),
        }
    }

    pub fn is_model(&self) -> bool {
        *self == ClientChoice::Model
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
        out
    }

    /// One simulator run of this client.
    pub fn run_seed(&self, seed: u64, flaws: Flaws, steps: u32, heal_limit: u32) -> Run {
        with_clients!(self, k => run_seed_with(k, seed, flaws, steps, heal_limit))
    }

    /// Shrink a failing run of this client.
    pub fn shrink(
        &self,
        seed: u64,
        config: Config,
        actions: &[Action],
        property: Property,
    ) -> (Config, Vec<Action>) {
        with_clients!(self, k => shrink_with(k, seed, config, actions, property))
    }

    /// The verdict of `actions` with this client.
    pub fn judge(&self, seed: u64, config: Config, actions: &[Action]) -> (Verdict, Option<Violation>) {
        with_clients!(self, k => judge_with(k, seed, config, actions))
    }

    /// Every schedule of `config` of at most `depth` steps with this client (`crate::bounded`).
    pub fn bounded(&self, config: Config, depth: usize, max_schedules: u64) -> crate::bounded::Bounded {
        with_clients!(self, k => crate::bounded::explore(k, config, depth, max_schedules))
    }

    /// The first action of `actions` this client's system does not enable where it stands, if any.
    pub fn first_disabled(&self, seed: u64, config: Config, actions: &[Action]) -> Option<usize> {
        with_clients!(self, k => {
            let (mut sys, _) = System::start_with(config, |id| k.make(&config, seed, id));
            actions.iter().position(|a| sys.try_apply(*a).is_err())
        })
    }
}
