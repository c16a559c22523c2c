//! The live driver makes no protocol decision: it names no RV choice, error, end or phase, and calls
//! nothing of the model reflector but its sans-IO surface.

const DRIVER: &str = include_str!("../src/driver.rs");

#[test]
fn the_driver_names_no_protocol_choice() {
    for word in ["ListRv::", "ApiError::", "WatchEnd::", "Phase::", "WatchFrom::", "Flaw::", "Timer::"] {
        assert!(!DRIVER.contains(word), "driver.rs decides something itself: it names {word}");
    }
}

#[test]
fn the_driver_only_forwards_to_the_reflector() {
    let allowed = [
        "start",
        "handle_list_result",
        "handle_watch_refused",
        "handle_watch_event",
        "handle_watch_ended",
        "handle_timeout",
        "poll_output",
        "timers",
        "duration",
        "resource_version",
        "has_synced",
    ];
    for (i, _) in DRIVER.match_indices("self.reflector.") {
        let call: String = DRIVER[i + "self.reflector.".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        assert!(allowed.contains(&call.as_str()), "driver.rs calls reflector.{call}");
    }
}
