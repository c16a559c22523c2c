//! A model object as a ConfigMap with real metadata (name, namespace, uid, resourceVersion), and back.
//! The object's content version travels as the ConfigMap's data, so two objects with the same key, UID
//! and version have the same content on the wire too.

use listwatch_model::{Key, Object, Rev, Uid};
use serde_json::{json, Value};

/// A revision as the wire spells it. etcd's revisions start at 1 (a fresh etcd is at revision 1) and the
/// model's at 0, so the wire counts one higher: no LIST ever answers `resourceVersion: "0"`, which a
/// client would send back meaning "any" (A2, A3), as no real server does either.
pub fn rv_text(rv: Rev) -> String {
    (u64::from(rv.0) + 1).to_string()
}

/// The revision a wire resourceVersion other than `"0"` stands for.
pub fn rv_of(text: &str) -> Option<Rev> {
    text.parse::<u32>().ok().and_then(|n| n.checked_sub(1)).map(Rev)
}

/// The object's name: the key without its namespace (`default/a` is `a`).
pub fn key_name(key: Key) -> String {
    let shown = key.to_string();
    shown.strip_prefix("default/").unwrap_or(&shown).to_string()
}

/// The key a name stands for, if it is one of the model's.
pub fn key_of(name: &str) -> Option<Key> {
    let mut chars = name.chars();
    let letter = chars.next().filter(char::is_ascii_lowercase)?;
    let rest = chars.as_str();
    let base = letter as u8 - b'a';
    if rest.is_empty() {
        return Some(Key(base));
    }
    let n: u8 = rest.parse().ok().filter(|n| *n > 0 && rest.as_bytes()[0] != b'0')?;
    n.checked_mul(26)?.checked_add(base).map(Key)
}

/// The uid the wire carries for an incarnation.
pub fn uid_text(uid: Uid) -> String {
    format!("8a1b3c4d-0000-4000-8000-{:012x}", uid.0 .0)
}

fn uid_of(text: &str) -> Option<Uid> {
    let hex = text.strip_prefix("8a1b3c4d-0000-4000-8000-")?;
    u32::from_str_radix(hex, 16).ok().map(|n| Uid(Rev(n)))
}

/// The ConfigMap JSON of an object.
pub fn to_json(o: &Object) -> Value {
    json!({
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {
            "name": key_name(o.key),
            "namespace": "default",
            "uid": uid_text(o.uid),
            "resourceVersion": rv_text(o.rv),
        },
        "data": { "version": o.version.to_string() },
    })
}

/// The object a ConfigMap a client holds stands for, as its JSON, or why it is not an object this server
/// served.
pub fn from_json(cm: &Value) -> Result<Object, String> {
    let meta = &cm["metadata"];
    let text = |v: &Value| v.as_str().map(str::to_string);
    let name = text(&meta["name"]).unwrap_or_default();
    let key = key_of(&name).ok_or_else(|| format!("name {name:?} is not a key this server serves"))?;
    let uid = text(&meta["uid"]);
    let uid =
        uid.as_deref().and_then(uid_of).ok_or_else(|| format!("{name}: uid {uid:?} was never served"))?;
    let rv = text(&meta["resourceVersion"]);
    let rv = rv
        .as_deref()
        .and_then(rv_of)
        .ok_or_else(|| format!("{name}: resourceVersion {rv:?} is not a revision"))?;
    let version = cm["data"]["version"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{name}: data.version is missing"))?;
    Ok(Object { key, uid, rv, version })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in [0u8, 1, 25, 26, 27, 51, 52, 255] {
            assert_eq!(key_of(&key_name(Key(k))), Some(Key(k)), "key {k}");
        }
        for bad in ["", "A", "a0", "a01", "ab", "z99999"] {
            assert_eq!(key_of(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn objects_round_trip_through_json() {
        let o = Object { key: Key(28), uid: Uid(Rev(3)), rv: Rev(9), version: 4 };
        assert_eq!(from_json(&to_json(&o)), Ok(o));
        let mut foreign = to_json(&o);
        foreign["metadata"]["uid"] = "not-ours".into();
        assert!(from_json(&foreign).unwrap_err().contains("was never served"));
    }
}
