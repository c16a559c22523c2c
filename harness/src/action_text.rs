//! The spelling of an action in a trace file: a verb and its operands (`create default/a`,
//! `route reflector-0 apiserver-1`, `refuse reflector-0 429`). It is the model's `Display` of an action,
//! the one spelling `show`, `check`, `bugs` and the Explorer share; this module parses it back.

use listwatch_model::manager::{ClusterId, RequestId};
use listwatch_model::{Action, ApiError, ClientId, Fault, Key, Rev, ServerId};

/// An action as a trace file spells it: its `Display`.
pub fn format(action: &Action) -> String {
    action.to_string()
}

/// Parse an action spelled as [`format`] spells it; the error says what is wrong in a few words.
pub fn parse(text: &str) -> Result<Action, String> {
    let words: Vec<&str> = text.split(' ').collect();
    let (verb, operands) = words.split_first().ok_or("empty action")?;
    let arity = |n: usize| {
        if operands.len() == n {
            Ok(())
        } else {
            Err(format!("'{verb}' takes {n} operand(s), got {}", operands.len()))
        }
    };
    let key = |i: usize| parse_key(operands[i]);
    let client = |i: usize| id(operands[i], "reflector-").map(ClientId);
    let server = |i: usize| parse_server(operands[i]);
    let cluster = |i: usize| id(operands[i], "cluster-").map(ClusterId);
    let request = |i: usize| id(operands[i], "request-").map(RequestId);
    let error = |i: usize| {
        ApiError::ALL.into_iter().find(|e| e.code() == operands[i]).ok_or_else(|| {
            let known: Vec<&str> = ApiError::ALL.iter().map(|e| e.code()).collect();
            format!("unknown error '{}' (known: {})", operands[i], known.join(", "))
        })
    };
    let action = match *verb {
        "create" => arity(1).and_then(|_| key(0)).map(Action::Create)?,
        "update" => arity(1).and_then(|_| key(0)).map(Action::Update)?,
        "delete" => arity(1).and_then(|_| key(0)).map(Action::Delete)?,
        "write-other" => arity(0).map(|_| Action::WriteOther)?,
        "revoke-lease" => arity(0).map(|_| Action::RevokeLease)?,
        "compact" => {
            arity(1)?;
            let rev =
                operands[0].parse::<u32>().map_err(|_| format!("'{}' is not a revision", operands[0]))?;
            Action::Compact(Rev(rev))
        }
        "ingest" => arity(1).and_then(|_| server(0)).map(Action::Ingest)?,
        "progress-notify" => arity(1).and_then(|_| server(0)).map(Action::ProgressNotify)?,
        "cache-ready" => arity(1).and_then(|_| server(0)).map(Action::CacheReady)?,
        "route" => {
            arity(2)?;
            Action::Route(client(0)?, server(1)?)
        }
        "list-wait-expired" => arity(1).and_then(|_| client(0)).map(Action::ListWaitExpired)?,
        "deliver" => arity(1).and_then(|_| client(0)).map(Action::Deliver)?,
        "bookmark" => arity(1).and_then(|_| client(0)).map(Action::Bookmark)?,
        "fire-timer" => arity(1).and_then(|_| client(0)).map(Action::FireTimer)?,
        "disconnect" => arity(1).and_then(|_| client(0)).map(|c| Action::Fault(Fault::Disconnect(c)))?,
        "server-timeout" => {
            arity(1).and_then(|_| client(0)).map(|c| Action::Fault(Fault::ServerTimeout(c)))?
        }
        "refuse" => {
            arity(2)?;
            Action::Fault(Fault::Refuse(client(0)?, error(1)?))
        }
        "watch-error" => {
            arity(2)?;
            Action::Fault(Fault::WatchError(client(0)?, error(1)?))
        }
        "evict-cache" => arity(1).and_then(|_| server(0)).map(|s| Action::Fault(Fault::EvictCache(s)))?,
        "relist-cache" => arity(1).and_then(|_| server(0)).map(|s| Action::Fault(Fault::RelistCache(s)))?,
        "restart" => arity(1).and_then(|_| server(0)).map(|s| Action::Fault(Fault::RestartServer(s)))?,
        "silent-death" => arity(1).and_then(|_| client(0)).map(|c| Action::Fault(Fault::SilentDeath(c)))?,
        "silence-noticed" => arity(1).and_then(|_| client(0)).map(Action::SilenceNoticed)?,
        "freshness-timeout" => {
            arity(1).and_then(|_| client(0)).map(|c| Action::Fault(Fault::FreshnessTimeout(c)))?
        }
        "garble" => arity(1).and_then(|_| client(0)).map(|c| Action::Fault(Fault::Garble(c)))?,
        "hold-consumer" => arity(1).and_then(|_| client(0)).map(|c| Action::Fault(Fault::HoldConsumer(c)))?,
        "release-consumer" => arity(1).and_then(|_| client(0)).map(Action::ReleaseConsumer)?,
        "pause" => arity(1).and_then(|_| cluster(0)).map(|c| Action::Fault(Fault::PauseCluster(c)))?,
        "manager-step" => arity(1).and_then(|_| request(0)).map(Action::ManagerStep)?,
        "manager-time" => arity(0).map(|_| Action::ManagerTime)?,
        "cluster-sync" => arity(1).and_then(|_| cluster(0)).map(Action::ClusterSync)?,
        "resume" => arity(1).and_then(|_| cluster(0)).map(Action::ResumeCluster)?,
        "heal" => arity(0).map(|_| Action::Heal)?,
        other => return Err(format!("unknown action '{other}'")),
    };
    Ok(action)
}

/// An API server's name as traces spell it (`apiserver-0`).
pub fn parse_server(word: &str) -> Result<ServerId, String> {
    id(word, "apiserver-").map(ServerId)
}

fn id(word: &str, prefix: &str) -> Result<u8, String> {
    word.strip_prefix(prefix)
        .and_then(|n| n.parse::<u8>().ok())
        .ok_or_else(|| format!("'{word}' is not an id like {prefix}0"))
}

/// `default/a` .. `default/z`, then `default/a1` .. (the key's `Display`).
fn parse_key(word: &str) -> Result<Key, String> {
    let bad = || format!("'{word}' is not a key like default/a");
    let name = word.strip_prefix("default/").ok_or_else(bad)?;
    let mut chars = name.chars();
    let letter = chars.next().filter(char::is_ascii_lowercase).ok_or_else(bad)?;
    let rest = chars.as_str();
    let round = if rest.is_empty() { 0 } else { rest.parse::<u8>().map_err(|_| bad())? };
    let k = u32::from(round) * 26 + (letter as u32 - 'a' as u32);
    u8::try_from(k).map(Key).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_parses_back() {
        let c = ClientId(1);
        let s = ServerId(2);
        let all = [
            Action::Create(Key(0)),
            Action::Update(Key(27)),
            Action::Delete(Key(25)),
            Action::WriteOther,
            Action::Compact(Rev(7)),
            Action::RevokeLease,
            Action::Ingest(s),
            Action::ProgressNotify(s),
            Action::CacheReady(s),
            Action::Route(c, s),
            Action::ListWaitExpired(c),
            Action::Deliver(c),
            Action::Bookmark(c),
            Action::FireTimer(c),
            Action::Fault(Fault::Disconnect(c)),
            Action::Fault(Fault::ServerTimeout(c)),
            Action::Fault(Fault::Refuse(c, ApiError::TooManyRequests)),
            Action::Fault(Fault::WatchError(c, ApiError::InternalError)),
            Action::Fault(Fault::EvictCache(s)),
            Action::Fault(Fault::RelistCache(s)),
            Action::Fault(Fault::RestartServer(s)),
            Action::Fault(Fault::SilentDeath(c)),
            Action::SilenceNoticed(c),
            Action::Fault(Fault::FreshnessTimeout(c)),
            Action::Fault(Fault::Garble(c)),
            Action::Fault(Fault::HoldConsumer(c)),
            Action::ReleaseConsumer(c),
            Action::Fault(Fault::PauseCluster(ClusterId(1))),
            Action::ManagerStep(RequestId(3)),
            Action::ManagerTime,
            Action::ClusterSync(ClusterId(0)),
            Action::ResumeCluster(ClusterId(1)),
            Action::Heal,
        ];
        for a in all {
            assert_eq!(parse(&format(&a)), Ok(a), "{}", format(&a));
        }
    }

    #[test]
    fn bad_spellings_say_what_is_wrong() {
        assert_eq!(parse("teleport x").unwrap_err(), "unknown action 'teleport'");
        assert_eq!(parse("create").unwrap_err(), "'create' takes 1 operand(s), got 0");
        assert_eq!(parse("create a").unwrap_err(), "'a' is not a key like default/a");
        assert_eq!(
            parse("route reflector-0 server-1").unwrap_err(),
            "'server-1' is not an id like apiserver-0"
        );
        assert!(parse("refuse reflector-0 418").unwrap_err().starts_with("unknown error '418'"));
        assert_eq!(parse("").unwrap_err(), "unknown action ''");
    }
}
