//! Global tables: a table replicated to other regions of this server or of
//! other Ferrodyn servers (`--peer REGION=URL`), as DynamoDB's global tables
//! version 2019.11.21 (UpdateTable's ReplicaUpdates) and 2017.11.29
//! (CreateGlobalTable & co.) do. docs/design/global-tables.md says why it is
//! built this way.
//!
//! - [`versions`]: each item's version (time, region) stored beside it;
//!   what last-writer-wins compares.
//! - [`group`]: the replication group in every replica's catalog record,
//!   and the table operations that change it (replicas created, filled,
//!   deleted; the group pushed to every region).
//! - [`sender`]: one background thread sends each replica's own changes,
//!   read from the change log (streams.rs) through a durable cursor per
//!   target region (`'k' | table id | replica/<region>`), to the other
//!   replicas, and fills new ones.
//! - [`strong`]: multi-Region strong consistency (MRSC).
//! - [`tombstones`]: deleted items' versions reclaimed once every other
//!   region has delivered what it made before them.
//! - [`shared_settings`]: the settings replicas share (TTL, capacity, GSIs).
//! - [`legacy`]: the 2017.11.29 operations (CreateGlobalTable,
//!   UpdateGlobalTable, DescribeGlobalTable, ListGlobalTables) over the
//!   same groups.
//! - [`settings`]: settings across regions (Describe/UpdateGlobalTableSettings,
//!   Describe/UpdateTableReplicaAutoScaling).
//! - [`source`]: CreateTable's GlobalTableSourceArn and the group settings
//!   UpdateTable sets alone (GlobalTableSettingsReplicationMode,
//!   DisassociationProtectionEnabled).
//!
//! Every message between regions is a [`Message`], handled by
//! [`Engine::handle_replication`]: called directly for a region this
//! server holds, or through the binary's [`PeerLink`] (an HTTP POST to the
//! peer's `/ferrodyn/replication`, signed) for a region another server
//! holds. One path either way, so a single-server test exercises the same
//! code as three servers.

pub mod group;
pub mod legacy;
pub mod sender;
pub mod settings;
pub mod shared_settings;
pub mod source;
pub mod strong;
pub mod tombstones;
pub mod versions;

pub use versions::{ItemVersion, VersionChange};

use crate::error::RetryPolicy;
use crate::items::Mutation;
use crate::keyspace;
use crate::locks::{Holder, LockKey};
use crate::region::{with_request_scope, RequestScope};
use crate::schema::TableDescription;
use crate::shared::{ChangeSource, GlobalTable};
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::ReadCheck;
use ferrodyn_types::{DynamoError, ErrorKind, Item, Result};
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The network side of replication, provided by the binary
/// (ferrodyn/src/peers.rs), so the engine holds no client.
pub trait PeerLink: Send + Sync {
    /// POSTs `message` (a [`Message`] as JSON) to the server at `url` and
    /// returns its answer's body.
    fn call(&self, url: &str, message: &[u8]) -> std::result::Result<Vec<u8>, PeerError>;
}

/// Why a peer gave no answer to use.
#[derive(Debug)]
pub enum PeerError {
    /// Not delivered, or the peer failed inside (HTTP 5xx): the region
    /// could not be reached, and what was sent may be sent again.
    Unreachable(String),
    /// The peer refused the message (HTTP 4xx) with this DynamoDB error
    /// name (`__type` after `#`) and message: answered to the client as the
    /// same error, as a region of this server would answer it.
    Refused { name: String, message: String },
}

/// The engine's replication state: the version clock, the peers, the
/// sender's bookkeeping (lost on restart: cursors are durable).
#[derive(Default)]
pub(crate) struct ReplicationState {
    pub(crate) clock: versions::VersionClock,
    /// Regions other servers hold, and their URLs (`--peer`).
    peers: RwLock<BTreeMap<String, String>>,
    link: RwLock<Option<Arc<dyn PeerLink>>>,
    pub(crate) worker_started: AtomicBool,
    /// An MRSC group here has a region another server holds: item requests
    /// then wait for the network, off the server's async workers.
    remote_strong: AtomicBool,
    /// The engine itself, for sends made where only `&Engine` is at hand
    /// (an MRSC write's proposals, from the commit path).
    pub(crate) me: RwLock<std::sync::Weak<Engine>>,
    /// Per (table id, target region): delivery errors, back-off, latency.
    pub(crate) links: Mutex<HashMap<(u64, String), sender::LinkState>>,
    /// The tombstone sweep and the delivery reports (tombstones.rs).
    pub(crate) tombstones: tombstones::TombstoneState,
    /// Setting changes waiting for a region (shared_settings.rs).
    pub(crate) outbox: shared_settings::OutboxState,
}

impl ReplicationState {
    /// The state of an engine whose tombstones are kept `retention`.
    pub(crate) fn with_tombstone_retention(retention: std::time::Duration) -> ReplicationState {
        let mut state = ReplicationState::default();
        state.tombstones.retention = retention;
        state
    }
}

/// One replicated change: an item's key, its new image (None: deleted) and
/// the change's version.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Change {
    pub key: Item,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Item>,
    pub version: ItemVersion,
    /// When it committed at its origin (ms), for ReplicationLatency.
    #[serde(default)]
    pub committed_ms: u64,
}

/// Where a message goes: a table of one region (and namespace).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Address {
    pub table: String,
    pub region: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A message from one region's replica to another's.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "Action")]
pub enum Message {
    /// Apply changes, last writer wins.
    Apply { to: Address, changes: Vec<Change> },
    /// Become (or stay) a replica: create the table like `description` if
    /// it does not exist, and take `group` as the replication group.
    Join {
        to: Address,
        description: Box<TableDescription>,
        group: GlobalTable,
    },
    /// Take `group` as the replication group (a replica's status changed,
    /// one joined or left).
    Group { to: Address, group: GlobalTable },
    /// Stop being a replica: delete the table.
    Leave { to: Address },
    /// MRSC: send `region` everything not yet sent there (a read barrier).
    Sync { to: Address, region: String },
    /// MRSC: apply one change if the item's version is still `expected`.
    Propose {
        to: Address,
        change: Change,
        expected: Option<ItemVersion>,
    },
    /// Whether the table exists and what it looks like (legacy operations).
    Describe { to: Address },
    /// Set one replica's status in the group (a filled replica is ACTIVE).
    Status {
        to: Address,
        region: String,
        status: String,
    },
    /// Make a setting change another region made (shared_settings.rs).
    ShareSetting {
        to: Address,
        change: shared_settings::SettingChange,
    },
    /// Region `from` has applied here everything it made before `through`
    /// (µs): what its tombstones wait for (tombstones.rs).
    Delivered {
        to: Address,
        from: String,
        through: u64,
    },
}

impl Message {
    fn address(&self) -> &Address {
        match self {
            Message::Apply { to, .. }
            | Message::Join { to, .. }
            | Message::Group { to, .. }
            | Message::Leave { to }
            | Message::Sync { to, .. }
            | Message::Propose { to, .. }
            | Message::Describe { to }
            | Message::Status { to, .. }
            | Message::ShareSetting { to, .. }
            | Message::Delivered { to, .. } => to,
        }
    }
}

impl Engine {
    /// Names the regions other servers hold (`--peer REGION=URL`) and the
    /// client that reaches them.
    pub fn set_peers(self: &Arc<Self>, peers: BTreeMap<String, String>, link: Arc<dyn PeerLink>) {
        *self.replication.peers.write() = peers;
        *self.replication.link.write() = Some(link);
        self.note_strong_groups();
        self.start_replication_worker_if_needed();
    }

    /// Whether item requests may wait for another server (an MRSC group
    /// with a region a peer holds): the server runs them on its blocking
    /// pool then, as it does writes that wait for an fsync.
    pub fn items_wait_for_peers(&self) -> bool {
        self.replication
            .remote_strong
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Notes whether a strong group of a table here has a remote region.
    pub(crate) fn note_strong_groups(&self) {
        let peers = self.replication.peers.read();
        let remote = (self.tables.read().values()).any(|t| {
            (t.global()).is_some_and(|g| {
                g.strong
                    && g.replicas
                        .iter()
                        .chain(&g.witnesses)
                        .any(|r| peers.contains_key(&r.region))
            })
        });
        (self.replication.remote_strong).store(remote, std::sync::atomic::Ordering::Relaxed);
    }

    /// The regions other servers hold, and their URLs.
    pub fn peers(&self) -> BTreeMap<String, String> {
        self.replication.peers.read().clone()
    }

    /// Sends `message` to the region it addresses: handled here for a
    /// region this server holds, posted to the peer that holds it otherwise.
    pub(crate) fn send(self: &Arc<Self>, message: &Message) -> Result<serde_json::Value> {
        let region = &message.address().region;
        let url = self.replication.peers.read().get(region).cloned();
        match url {
            None => self.handle_message(message.clone()),
            Some(url) => self.post(&url, region, message),
        }
    }

    /// [`Message::Apply`] of `changes` to `to`: the changes are serialised
    /// where they are for a peer (the sender sends one page to every
    /// target), copied only for a region this server holds.
    pub(crate) fn send_apply(
        self: &Arc<Self>,
        to: &Address,
        changes: &[Change],
    ) -> Result<serde_json::Value> {
        let url = self.replication.peers.read().get(&to.region).cloned();
        let Some(url) = url else {
            let changes = changes.to_vec();
            return self.handle_message(Message::Apply {
                to: to.clone(),
                changes,
            });
        };
        // Message::Apply's JSON shape, borrowed.
        #[derive(Serialize)]
        struct ApplyRef<'a> {
            #[serde(rename = "Action")]
            action: &'static str,
            to: &'a Address,
            changes: &'a [Change],
        }
        let message = ApplyRef {
            action: "Apply",
            to,
            changes,
        };
        self.post(&url, &to.region, &message)
    }

    /// POSTs a message to the peer at `url`; its answer.
    fn post(&self, url: &str, region: &str, message: &impl Serialize) -> Result<serde_json::Value> {
        let link = self.replication.link.read().clone();
        let link = link.ok_or_else(|| unreachable(region, "no peer client"))?;
        let body = serde_json::to_vec(message).expect("plain data always serialises");
        let answer = link.call(url, &body).map_err(|error| match error {
            PeerError::Unreachable(why) => unreachable(region, &why),
            PeerError::Refused { name, message } => {
                let kind = ErrorKind::from_name(&name).unwrap_or(ErrorKind::Validation);
                DynamoError::new(kind, message)
            }
        })?;
        serde_json::from_slice(&answer).map_err(|e| unreachable(region, &e.to_string()))
    }

    /// A message from another server (`POST /ferrodyn/replication`).
    pub fn handle_replication(self: &Arc<Self>, body: &[u8]) -> Result<serde_json::Value> {
        let message: Message = serde_json::from_slice(body)
            .map_err(|e| DynamoError::validation(format!("Malformed replication message: {e}")))?;
        self.handle_message(message)
    }

    fn handle_message(self: &Arc<Self>, message: Message) -> Result<serde_json::Value> {
        let to = message.address().clone();
        let scope = RequestScope {
            region: Some(to.region.clone()),
            namespace: to.namespace.clone(),
        };
        with_request_scope(scope, || match message {
            Message::Apply { changes, .. } => {
                let table = self.replica_table(&to.table)?;
                let applied = self.apply_replicated(&table, changes)?;
                Ok(serde_json::json!({ "Applied": applied }))
            }
            Message::Join {
                description, group, ..
            } => self.join_group(&to, &description, group),
            Message::Group { group, .. } => self.take_group(&to.table, group),
            Message::Leave { .. } => self.leave_group(&to.table),
            Message::Sync { region, .. } => self.sync_to(&to.table, &region),
            Message::Propose {
                change, expected, ..
            } => self.accept_proposal(&to.table, change, expected),
            Message::Describe { .. } => self.describe_for_peer(&to.table),
            Message::Status { region, status, .. } => self.take_status(&to.table, &region, &status),
            Message::ShareSetting { change, .. } => self.apply_setting(&to.table, change),
            Message::Delivered { from, through, .. } => {
                self.take_delivery_report(&to.table, &from, through)
            }
        })
    }

    /// The engine as an `Arc` (it always is one once opened).
    pub(crate) fn me(&self) -> Arc<Engine> {
        (self.replication.me.read().upgrade()).expect("the engine is open")
    }

    /// The table a message addresses, which must be a replica (a witness's
    /// hidden copy included).
    pub(crate) fn replica_table(&self, name: &str) -> Result<Arc<Table>> {
        let table = self.lookup(name).ok_or_else(|| {
            DynamoError::resource_not_found(format!(
                "Requested resource not found: Table: {name} not found"
            ))
        })?;
        if !table.is_replicated() {
            return Err(DynamoError::validation(format!(
                "Table {name} is not a replica of a global table"
            )));
        }
        Ok(table)
    }

    /// The version a local write of the item stored under `storage_key`
    /// gets, and the version it overwrites (read and, on shared storage,
    /// checked at commit like the item).
    pub(crate) fn plan_version(
        &self,
        table: &Table,
        storage_key: &[u8],
        read: &mut Vec<ReadCheck>,
    ) -> Result<VersionChange> {
        let key = keyspace::version_key_of(storage_key);
        let found = self.storage.get(&key).map_err(crate::storage_error)?;
        read.extend(self.read_check(&key, &found));
        let stored = (found.as_deref())
            .and_then(ItemVersion::decode)
            .map(|(version, _)| version);
        let micros = (self.replication.clock).next(self.clock.now_micros(), stored.as_ref());
        let origin = self.region_of(&table.catalog_name).to_string();
        Ok(VersionChange {
            key,
            stored,
            new: ItemVersion { micros, origin },
            replicated: false,
        })
    }

    /// Applies changes from another region through the write path (indexes,
    /// statistics, the stream), each only if its version is newer than the
    /// item's: last writer wins. Returns how many were applied.
    pub(crate) fn apply_replicated(
        &self,
        table: &Arc<Table>,
        changes: Vec<Change>,
    ) -> Result<usize> {
        // One change per item: the newest.
        let mut newest: BTreeMap<Vec<u8>, Change> = BTreeMap::new();
        for change in changes {
            let key = table.schema.encode(table.id, &change.key);
            match newest.get(&key) {
                Some(kept) if kept.version >= change.version => {}
                _ => {
                    newest.insert(key, change);
                }
            }
        }
        if newest.is_empty() {
            return Ok(0);
        }
        let mut keys: Vec<LockKey> = Vec::with_capacity(newest.len());
        for change in newest.values() {
            self.push_write_keys(table, &change.key, &mut keys);
        }
        let _held = (self.locks)
            .acquire(Holder::Batch, &keys)
            .expect("batch requests are never rejected");
        let _writers = table.writers();
        self.apply_held(table, newest.into_iter().collect())
    }

    /// The version stored for the item under `storage_key`.
    pub(crate) fn stored_version(&self, storage_key: &[u8]) -> Result<Option<ItemVersion>> {
        let key = keyspace::version_key_of(storage_key);
        let found = self.storage.get(&key).map_err(crate::storage_error)?;
        Ok(found
            .as_deref()
            .and_then(ItemVersion::decode)
            .map(|(v, _)| v))
    }

    /// [`Engine::apply_replicated`] once the items' locks and the table's
    /// writers guard are held: one change per item, by storage key.
    pub(crate) fn apply_held(
        &self,
        table: &Arc<Table>,
        changes: Vec<(Vec<u8>, Change)>,
    ) -> Result<usize> {
        self.check_table_live(table)?;
        let applied = self.retry(RetryPolicy::Write, |_| {
            let mut planned = Vec::with_capacity(changes.len());
            for (storage_key, change) in &changes {
                let mutation = match &change.image {
                    Some(item) => Mutation::Put(item.clone()),
                    None => Mutation::Delete,
                };
                let mut plan = self.plan_write(
                    table,
                    &change.key,
                    storage_key.clone(),
                    mutation,
                    None,
                    false,
                )?;
                let version = plan
                    .version
                    .as_mut()
                    .expect("a replica's writes carry versions");
                if version.stored.as_ref() >= Some(&change.version) {
                    continue; // a newer write is here already
                }
                self.replication.clock.observe(change.version.micros);
                version.new = change.version.clone();
                version.replicated = true;
                planned.push(plan);
            }
            self.commit_from(&mut planned, ChangeSource::Application)?;
            Ok(planned.len())
        })?;
        Ok(applied)
    }
}

/// The error a replica region that cannot be reached gives.
fn unreachable(region: &str, why: &str) -> DynamoError {
    DynamoError::internal(format!(
        "The replica in region {region} could not be reached: {why}"
    ))
}

/// The address of table `name` in `region`, in the namespace of `table`.
pub(crate) fn address_in(engine: &Engine, table: &Table, region: &str) -> Address {
    let scope = engine.scope_of(&table.catalog_name);
    Address {
        table: table.name.clone(),
        region: region.to_string(),
        namespace: scope.namespace,
    }
}
