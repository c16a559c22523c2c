//! A property by name, and a broken guarantee: the types every part of the crate shares. The
//! guarantees themselves are [`crate::guarantees`]' files, registered in one list there, which gives
//! `Property` its variants (`build.rs`) and its words (`name`, `guarantee`, `witness`).

use std::fmt;

use listwatch_model::ClientId;

// `enum Property`, one variant per registered guarantee, with `COUNT` and `ALL`.
include!(concat!(env!("OUT_DIR"), "/property.rs"));

impl Property {
    pub fn parse(name: &str) -> Option<Property> {
        Property::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A broken guarantee: which, by whom, and what was seen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Violation {
    pub property: Property,
    pub client: Option<ClientId>,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} violated: \"{}\"", self.property, self.property.guarantee())?;
        match self.client {
            Some(c) => write!(f, " ({c}: {})", self.detail),
            None => write!(f, " ({})", self.detail),
        }
    }
}
