//! The one flag that SIGINT and SIGTERM set (the command line registers them): every long run (a check,
//! a campaign, a conformance run) looks at it and stops at once, reporting what it has as incomplete.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

/// The flag: set once a stop was asked for.
pub fn interrupted() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}
