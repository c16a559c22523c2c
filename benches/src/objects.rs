//! The objects the stream's writes become: a small ConfigMap and a Pod of the size a real cluster
//! serves (two containers with env, probes, resources and mounts; status with conditions).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, ContainerState, ContainerStateRunning,
    ContainerStatus, EnvVar, HTTPGetAction, Pod, PodCondition, PodSpec, PodStatus, Probe,
    ResourceRequirements, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

use crate::Write;

fn meta(prefix: &str, w: &Write) -> ObjectMeta {
    ObjectMeta {
        name: Some(format!("{prefix}-{:05}", w.key)),
        namespace: Some("default".into()),
        uid: Some(format!("5f0c6a1e-0000-4000-8000-{:012x}", w.uid)),
        resource_version: Some(w.rv.to_string()),
        labels: Some(strings(&[("app", "checkout"), ("tier", "backend"), ("release", "stable")])),
        ..ObjectMeta::default()
    }
}

fn strings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A ConfigMap of three entries, the last of which changes with every write.
pub fn configmap(w: &Write) -> ConfigMap {
    ConfigMap {
        metadata: meta("cm", w),
        data: Some(strings(&[
            ("log-level", "info"),
            ("endpoint", "https://payments.internal.example:8443/v2"),
            ("revision", &format!("write-{}", w.rv)),
        ])),
        ..ConfigMap::default()
    }
}

fn time(seconds: i64) -> Time {
    Time(Timestamp::from_second(seconds).expect("a valid time"))
}

fn container(name: &str, image: &str, port: i32) -> Container {
    let env = (0..6)
        .map(|i| EnvVar {
            name: format!("{}_SETTING_{i}", name.to_uppercase()),
            value: Some(format!("value-{i}-for-{name}")),
            ..EnvVar::default()
        })
        .collect();
    let quantities = |cpu: &str, mem: &str| {
        Some(BTreeMap::from([
            ("cpu".to_string(), Quantity(cpu.into())),
            ("memory".to_string(), Quantity(mem.into())),
        ]))
    };
    Container {
        name: name.into(),
        image: Some(image.into()),
        args: Some(vec!["--port".into(), port.to_string(), "--log-format=json".into()]),
        env: Some(env),
        ports: Some(vec![ContainerPort {
            container_port: port,
            name: Some("http".into()),
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        resources: Some(ResourceRequirements {
            limits: quantities("500m", "512Mi"),
            requests: quantities("100m", "128Mi"),
            ..ResourceRequirements::default()
        }),
        readiness_probe: Some(Probe {
            http_get: Some(HTTPGetAction {
                path: Some("/healthz".into()),
                port: IntOrString::Int(port),
                ..HTTPGetAction::default()
            }),
            period_seconds: Some(10),
            ..Probe::default()
        }),
        volume_mounts: Some(vec![
            VolumeMount { name: "config".into(), mount_path: "/etc/app".into(), ..VolumeMount::default() },
            VolumeMount {
                name: "cache".into(),
                mount_path: "/var/cache/app".into(),
                ..VolumeMount::default()
            },
        ]),
        ..Container::default()
    }
}

fn status(name: &str, image: &str, started: i64) -> ContainerStatus {
    ContainerStatus {
        name: name.into(),
        image: image.into(),
        image_id: format!("{image}@sha256:{:064x}", 7),
        container_id: Some(format!("containerd://{:064x}", started)),
        ready: true,
        restart_count: 0,
        started: Some(true),
        state: Some(ContainerState {
            running: Some(ContainerStateRunning { started_at: Some(time(started)) }),
            ..ContainerState::default()
        }),
        ..ContainerStatus::default()
    }
}

/// A running Pod with two containers; its status changes with every write.
pub fn pod(w: &Write) -> Pod {
    let started = 1_760_000_000 + w.rv as i64;
    let mut metadata = meta("pod", w);
    metadata.annotations = Some(strings(&[
        ("kubectl.kubernetes.io/restartedAt", "2026-11-01T10:00:00Z"),
        ("prometheus.io/scrape", "true"),
    ]));
    metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: "checkout-7d9f8b6c5".into(),
        uid: "0b7e3d2a-1c4f-4e5a-9b8c-7d6e5f4a3b2c".into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    let condition = |kind: &str| PodCondition {
        type_: kind.into(),
        status: "True".into(),
        last_transition_time: Some(time(started)),
        ..PodCondition::default()
    };
    let images = [("app", "registry.example/checkout:1.42.0"), ("proxy", "registry.example/envoy:1.31.2")];
    Pod {
        metadata,
        spec: Some(PodSpec {
            containers: vec![
                container(images[0].0, images[0].1, 8080),
                container(images[1].0, images[1].1, 9901),
            ],
            volumes: Some(vec![
                Volume {
                    name: "config".into(),
                    config_map: Some(ConfigMapVolumeSource {
                        name: "checkout-config".into(),
                        ..ConfigMapVolumeSource::default()
                    }),
                    ..Volume::default()
                },
                Volume { name: "cache".into(), ..Volume::default() },
            ]),
            node_name: Some(format!("node-{:03}", w.key % 200)),
            service_account_name: Some("checkout".into()),
            restart_policy: Some("Always".into()),
            ..PodSpec::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            pod_ip: Some(format!("10.{}.{}.{}", w.key >> 16 & 255, w.key >> 8 & 255, w.key & 255)),
            host_ip: Some("192.168.10.17".into()),
            start_time: Some(time(started)),
            conditions: Some(
                ["Initialized", "Ready", "ContainersReady", "PodScheduled"].map(condition).to_vec(),
            ),
            container_statuses: Some(images.iter().map(|(n, i)| status(n, i, started)).collect()),
            ..PodStatus::default()
        }),
    }
}
