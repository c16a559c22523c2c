//! The real client-go under test. Its `SharedIndexInformer` (the reflector, the DeltaFIFO, the store,
//! the handlers), unmodified, runs in a Go program (`shim/`, its own Go module, built by
//! `scripts/build-client-go`) inside `testing/synctest` bubbles: time there is fake and moves only when
//! the harness fires a timer, and after every input the program waits until client-go has nothing left
//! to do before it reports. client-go talks through its own REST client, decoders, pager and watch-list
//! path to a transport that is the harness, which answers with the shared wire's bytes (`listwatch-wire`),
//! the same bytes kube-runtime reads.
//!
//! [`ClientGo`] is a configuration (`listwatch clients`) and the [`Clients`] every driver runs;
//! [`ClientGoClient`] is one informer in one Go process's session ([`process`]).

pub mod client;
pub mod config;
pub mod go_package;
pub mod manager;
pub mod process;
pub mod spec;

pub use client::ClientGoClient;
pub use config::ClientGo;
pub use manager::{GoManager, Managed};

use listwatch_model::manager::Manager;
use listwatch_model::{ClientId, Clients, Config, ManagerConfig};

impl Clients for ClientGo {
    type C = ClientGoClient;
    type M = Managed;
    fn name(&self) -> String {
        self.spec()
    }
    fn make(&self, config: &Config, seed: u64, id: ClientId) -> ClientGoClient {
        // A world whose reflectors list in pages has client-go list in pages of the same size.
        let world = ClientGo { page_size: config.reflector.page_size.map(u32::from), ..self.clone() };
        ClientGoClient::new(world, seed ^ (u64::from(id.0) << 56))
    }
    /// A Go user's manager (`go:DIR,test=NAME,manager`), or the model's.
    fn make_manager(&self, config: &Config, seed: u64, m: ManagerConfig) -> Managed {
        if self.manager {
            Managed::Go(GoManager::start(self, m, seed))
        } else {
            Managed::Model(Manager::new(m.clusters, m.requests, config.flaws))
        }
    }
    fn manager_under_test(&self) -> bool {
        self.manager
    }
    fn over_the_wire(&self) -> bool {
        true
    }
    /// The DeltaFIFO controller's consumer loop, and a handler behind `,slow-handler`'s gate.
    fn consumer_lever(&self) -> bool {
        self.lists == config::Lists::Fifo || self.slow_handler
    }
}
