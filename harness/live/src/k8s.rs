//! Real Kubernetes objects in the live object cache: every `k8s_openapi` resource with an `ObjectMeta`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::Metadata;
use listwatch_model::guard::Stamp;

use super::object_cache::ApiObject;

impl<K: Metadata<Ty = ObjectMeta>> ApiObject for K {
    fn write_key(&self, key: &mut String) {
        let meta = self.metadata();
        if let Some(ns) = &meta.namespace {
            key.push_str(ns);
            key.push('/');
        }
        key.push_str(meta.name.as_deref().unwrap_or_default());
    }

    fn stamp(&self) -> Option<Stamp<'_, str>> {
        let meta = self.metadata();
        let rv = meta.resource_version.as_deref()?.parse().ok()?;
        Some(Stamp { uid: meta.uid.as_deref()?, rv })
    }
}
