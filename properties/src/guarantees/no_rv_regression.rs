//! `no-rv-regression`.
//!
//! Judged from the [`History`] several guarantees share: a claimed RV that goes back, or an event at or below it applied (`History::after_step`, the event path).

use listwatch_model::ApiError;

use crate::guarantees::Guarantee;
use crate::history::{History, Outstanding};
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "no-rv-regression";
    const GUARANTEE: &'static str =
        "the RV a reflector claims never goes backwards, and no event at or below an RV it already \
                 applied is applied again";
    const WITNESS: &'static str = "a relist after 410 happens";

    fn witnessed(&self, _obs: &impl Observations, history: &History) -> bool {
        history.clients.iter().any(|m| {
            m.last_error == Some(ApiError::Expired) && matches!(m.outstanding, Some(Outstanding::List { .. }))
        })
    }
}
