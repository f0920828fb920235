//! The in-memory search structure of one vector index: a partition per
//! HASH value (one partition when the schema has no HASH), each holding its
//! members (the item key and the inline-filter values of every indexed
//! item) and their vectors.
//!
//! A new vector first goes to its partition's *pending* set, searched
//! exactly; an indexer thread moves pending vectors into the partition's
//! HNSW graph (usearch; docs/design/vector-search.md says why) once the
//! partition is large enough to need one, so a write never waits for a graph
//! insertion and a search always sees every committed vector. Small
//! partitions, and filters that leave few candidates, are searched exactly;
//! a filtered graph search that finds fewer than TopK matches falls back to
//! an exact scan of the matching members, so a search returns TopK items
//! whenever that many match.

use super::distance::{self, ascending};
use super::entry::Entry;
use crate::schema::DistanceFunction;
use ferrodyn_types::AttributeValue;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Below this many members a partition has no graph: an exact scan is as
/// fast as a graph search and exact.
pub const GRAPH_MIN: usize = 2048;
/// A filtered search over at most this many matching graph members scans
/// them exactly.
pub const EXACT_LIMIT: usize = 2048;
/// Pending vectors moved into a graph at a time.
const INSERT_BATCH: usize = 4096;
/// HNSW parameters (docs/design/vector-search.md: M = 32 is what lets
/// random 128-dimension vectors reach recall@10 ≥ 0.95 at all).
const CONNECTIVITY: usize = 32;
const EXPANSION_ADD: usize = 128;
/// The search expansion before a partition is calibrated.
const EXPANSION_SEARCH: usize = 256;
/// The expansions calibration tries, smallest first (64 at least: a query
/// far from every stored vector is harder than the partition's own
/// vectors), and the recall@10 it asks of them on a sample of the
/// partition's own vectors (a margin over the 0.95 the issue sets).
const EXPANSIONS: [usize; 6] = [64, 128, 256, 512, 1024, 2048];
const TARGET_RECALL: f64 = 0.97;
/// Sample queries per calibration.
const CALIBRATION_QUERIES: usize = 40;

/// One indexed item as the search structure knows it.
struct Member {
    item: Box<[u8]>,
    filters: Box<[Option<AttributeValue>]>,
    /// A hash of the vector's bits: setting an item to the vector it has
    /// already changes only its filters, with no graph work (a node
    /// following other nodes' writes sets its own items again, vector_ops/follow.rs).
    vector_hash: u64,
}

#[derive(Default)]
struct Members {
    by_item: HashMap<Box<[u8]>, u64>,
    members: HashMap<u64, Member>,
    /// Vectors not in the graph (yet), by label.
    pending: HashMap<u64, Box<[f32]>>,
    /// Labels removed from the members that are still in the graph: the
    /// indexer drops them (a graph is changed by the indexer alone, so no
    /// removal runs beside an insertion); searches skip them meanwhile.
    removed: Vec<u64>,
    next_label: u64,
}

struct Partition {
    members: RwLock<Members>,
    graph: RwLock<Option<usearch::Index>>,
    /// The graph's size when its search expansion was last calibrated.
    calibrated_at: std::sync::atomic::AtomicUsize,
    /// The graph's memory as usearch last counted it (by the indexer, after
    /// a batch: counting walks allocations an insertion may be making).
    graph_bytes: std::sync::atomic::AtomicUsize,
}

/// What `GET /ferrodyn/vectors` tells of one index's structure.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreReport {
    pub vectors: usize,
    /// Vectors scanned exactly until the indexer puts them into a graph.
    pub pending: usize,
    pub partitions: usize,
    pub graphs: usize,
    pub memory_bytes: usize,
    pub bytes_per_vector: usize,
    pub raw_bytes_per_vector: usize,
    pub search_expansions: Vec<usize>,
    pub settled: bool,
}

/// A search's answer: an item key and its score.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub item: Vec<u8>,
    pub score: f64,
}

/// The partition key holding each item, by item key.
type Locations = HashMap<Box<[u8]>, Vec<u8>>;

/// INLINE_FILTER equalities: (position in the search schema's filters, value).
pub type Filter = [(usize, AttributeValue)];

struct Inner {
    /// The index's name (for its log lines).
    name: String,
    dimensions: usize,
    function: DistanceFunction,
    partitions: RwLock<HashMap<Vec<u8>, Arc<Partition>>>,
    indexing: AtomicBool,
    /// `--vector-search exact`: searches scan, so no graph is built.
    graphs_off: AtomicBool,
    /// Serialises graph insertions (one indexer at a time).
    insert: Mutex<()>,
    /// Which partition holds each item, for an index with a HASH element:
    /// an item is moved out of wherever it is, not out of where its writer
    /// thought it was (on shared storage a node's idea of an item's old
    /// entry can be older than its structure). None: one partition.
    located: Option<Mutex<Locations>>,
}

pub struct Store {
    inner: Arc<Inner>,
}

impl Store {
    /// `hashed`: whether the index has a HASH element (partitions by value).
    pub fn new(name: &str, dimensions: usize, function: DistanceFunction, hashed: bool) -> Store {
        Store {
            inner: Arc::new(Inner {
                name: name.to_string(),
                dimensions,
                function,
                partitions: RwLock::new(HashMap::new()),
                indexing: AtomicBool::new(false),
                graphs_off: AtomicBool::new(false),
                insert: Mutex::new(()),
                located: hashed.then(|| Mutex::new(HashMap::new())),
            }),
        }
    }

    /// Makes `new` the item's entry (None: the item is not indexed), taking
    /// it out of whichever partition held it. Setting an entry the item has
    /// already changes nothing, so setting it again is harmless.
    pub fn set(&self, item: &[u8], new: Option<&Entry>) {
        let target = new.map(|e| partition_key(&e.hash));
        let held = self.relocate(item, target.as_ref());
        if let Some(held) = held.filter(|h| Some(h) != target.as_ref()) {
            let partition = self.inner.partitions.read().get(&held).cloned();
            if let Some(partition) = partition {
                partition.remove(item);
                if partition.has_work() {
                    self.start_indexer();
                }
            }
        }
        if let Some(new) = new {
            let partition = self.partition(&new.hash);
            partition.put(item, new);
            if partition.len() >= GRAPH_MIN {
                self.start_indexer();
            }
        }
    }

    /// Notes that `item` is now in the partition `target` (None: none) and
    /// says which partition may hold it until now.
    fn relocate(&self, item: &[u8], target: Option<&Vec<u8>>) -> Option<Vec<u8>> {
        let Some(located) = &self.inner.located else {
            return Some(partition_key(&None)); // the only partition
        };
        let mut located = located.lock();
        match target {
            Some(target) => located.insert(item.into(), target.clone()),
            None => located.remove(item),
        }
    }

    /// Takes out every item `keep` refuses (a structure filled again from
    /// the stored entries drops the items that are no longer there).
    pub fn retain(&self, keep: impl Fn(&[u8]) -> bool) {
        let partitions: Vec<Arc<Partition>> =
            self.inner.partitions.read().values().cloned().collect();
        for partition in partitions {
            let gone: Vec<Box<[u8]>> = (partition.members.read().by_item.keys())
                .filter(|item| !keep(item))
                .cloned()
                .collect();
            for item in gone {
                self.set(&item, None);
            }
        }
    }

    /// Builds no graph: every search scans (`--vector-search exact`).
    pub fn without_graphs(&self) {
        self.inner.graphs_off.store(true, Ordering::SeqCst);
    }

    /// Number of members of every partition.
    pub fn len(&self) -> usize {
        (self.inner.partitions.read().values())
            .map(|p| p.len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the structure holds: the graphs (usearch's own count) plus
    /// the pending vectors and the members' keys and filter values.
    pub fn memory_bytes(&self) -> usize {
        (self.inner.partitions.read().values())
            .map(|p| p.memory_bytes(self.inner.dimensions))
            .sum()
    }

    /// The structure's figures (`GET /ferrodyn/vectors`).
    pub fn report(&self) -> StoreReport {
        let partitions: Vec<Arc<Partition>> =
            self.inner.partitions.read().values().cloned().collect();
        let vectors = self.len();
        let memory_bytes = self.memory_bytes();
        StoreReport {
            vectors,
            pending: partitions
                .iter()
                .map(|p| p.members.read().pending.len())
                .sum(),
            partitions: partitions.len(),
            graphs: partitions
                .iter()
                .filter(|p| p.graph.read().is_some())
                .count(),
            memory_bytes,
            bytes_per_vector: memory_bytes / vectors.max(1),
            raw_bytes_per_vector: self.inner.dimensions * 4,
            search_expansions: (partitions.iter())
                .filter_map(|p| p.graph.read().as_ref().map(|g| g.expansion_search()))
                .collect(),
            settled: self.settled(),
        }
    }

    /// Whether every partition large enough for a graph has all its
    /// vectors in it (start-up rebuilds and benchmarks wait for this).
    pub fn settled(&self) -> bool {
        let off = self.inner.graphs_off.load(Ordering::SeqCst);
        off || !self.inner.indexing.load(Ordering::SeqCst)
            && (self.inner.partitions.read().values())
                .all(|p| p.len() < GRAPH_MIN || p.members.read().pending.is_empty())
    }

    /// The `k` most similar members of the partition `hash` that pass
    /// `filter`, most similar first (ties by item key). `exact` scans every
    /// candidate instead of using the graph.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        hash: &Option<AttributeValue>,
        filter: &Filter,
        exact: bool,
    ) -> Vec<Hit> {
        let Some(partition) = self.existing(hash) else {
            return Vec::new();
        };
        let mut hits = partition.search(&self.inner, query, k, filter, exact);
        let function = self.inner.function;
        hits.sort_by(|a, b| {
            let by_score = if ascending(function) {
                a.score.total_cmp(&b.score)
            } else {
                b.score.total_cmp(&a.score)
            };
            by_score.then_with(|| a.item.cmp(&b.item))
        });
        hits.truncate(k);
        hits
    }

    fn existing(&self, hash: &Option<AttributeValue>) -> Option<Arc<Partition>> {
        let key = partition_key(hash);
        self.inner.partitions.read().get(&key).cloned()
    }

    fn partition(&self, hash: &Option<AttributeValue>) -> Arc<Partition> {
        let key = partition_key(hash);
        if let Some(found) = self.inner.partitions.read().get(&key) {
            return Arc::clone(found);
        }
        let mut partitions = self.inner.partitions.write();
        Arc::clone(partitions.entry(key).or_insert_with(|| {
            Arc::new(Partition {
                members: RwLock::new(Members::default()),
                graph: RwLock::new(None),
                calibrated_at: std::sync::atomic::AtomicUsize::new(0),
                graph_bytes: std::sync::atomic::AtomicUsize::new(0),
            })
        }))
    }

    fn start_indexer(&self) {
        if self.inner.graphs_off.load(Ordering::SeqCst) {
            return;
        }
        if self.inner.indexing.swap(true, Ordering::SeqCst) {
            return;
        }
        let inner = Arc::clone(&self.inner);
        let started = std::thread::Builder::new()
            .name("vector-indexer".into())
            .spawn(move || loop {
                inner.index_pending();
                inner.indexing.store(false, Ordering::SeqCst);
                // A vector added after the last batch, while this thread
                // still held the flag, is taken now (unless another took it).
                if !inner.has_pending() || inner.indexing.swap(true, Ordering::SeqCst) {
                    return;
                }
            });
        if started.is_err() {
            self.inner.indexing.store(false, Ordering::SeqCst);
        }
    }
}

/// Returns freed memory to the operating system; set once by the binary,
/// which knows its allocator. mimalloc keeps freed pages and purges them
/// only as the process allocates again, so an idle server would keep the
/// pending copies of a large build (one more copy of every vector) for
/// good: bench/vector_memory.py measured 2.15x the raw size resident
/// without this. Purging at every free instead cost the data plane 16-19%.
static RELEASE_MEMORY: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Sets what returns freed memory to the operating system after a large
/// batch of vectors has gone into graphs.
pub fn set_memory_release(release: fn()) {
    let _ = RELEASE_MEMORY.set(release);
}

/// The hash of a vector's bits that tells whether a member's vector changed.
fn hash_vector(vector: &[f32]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for x in vector {
        x.to_bits().hash(&mut hasher);
    }
    hasher.finish()
}

/// The partition a HASH value names (the escaped key encoding; "" for an
/// index without HASH).
fn partition_key(hash: &Option<AttributeValue>) -> Vec<u8> {
    let mut key = Vec::new();
    if let Some(value) = hash {
        key.push(value.type_name().as_bytes()[0]);
        crate::index::encode_escaped(value, &mut key);
    }
    key
}

impl Inner {
    /// Whether a partition large enough for a graph has pending vectors.
    fn has_pending(&self) -> bool {
        self.partitions.read().values().any(|p| p.has_work())
    }

    /// Moves pending vectors into graphs until no large partition has any.
    fn index_pending(&self) {
        let _one = self.insert.lock();
        let started = std::time::Instant::now();
        let mut total = 0;
        loop {
            let partitions: Vec<Arc<Partition>> =
                self.partitions.read().values().cloned().collect();
            let mut moved = 0;
            for partition in partitions {
                partition.drop_removed();
                if partition.len() >= GRAPH_MIN {
                    moved += partition.index_batch(self);
                }
            }
            total += moved;
            if moved == 0 {
                break;
            }
        }
        self.calibrate_grown();
        if total >= GRAPH_MIN {
            self.report(total, started.elapsed());
            // The pending copies of those vectors were just freed.
            if let Some(release) = RELEASE_MEMORY.get() {
                release();
            }
        }
    }

    /// One line for operators (and bench/vectors.py) when a large batch of
    /// vectors went into graphs: how many, how long, the memory held.
    fn report(&self, inserted: usize, took: std::time::Duration) {
        let partitions: Vec<Arc<Partition>> = self.partitions.read().values().cloned().collect();
        let members: usize = partitions.iter().map(|p| p.len()).sum();
        let bytes: usize = partitions
            .iter()
            .map(|p| p.memory_bytes(self.dimensions))
            .sum();
        let expansions: Vec<usize> = (partitions.iter())
            .filter_map(|p| p.graph.read().as_ref().map(|g| g.expansion_search()))
            .collect();
        eprintln!(
            "ferrodyn: vector index {}: {inserted} vectors put into graphs in {:.1} s; {members} vectors, {bytes} bytes in memory ({} per vector, raw f32 {}); search expansions {expansions:?}",
            self.name,
            took.as_secs_f64(),
            bytes / members.max(1),
            self.dimensions * 4
        );
    }

    /// Calibrates again every graph that doubled since its last calibration.
    fn calibrate_grown(&self) {
        let partitions: Vec<Arc<Partition>> = self.partitions.read().values().cloned().collect();
        for partition in partitions {
            let size = partition.graph.read().as_ref().map_or(0, |g| g.size());
            if size >= GRAPH_MIN && size >= 2 * partition.calibrated_at.load(Ordering::SeqCst) {
                partition.calibrate();
                partition.calibrated_at.store(size, Ordering::SeqCst);
            }
        }
    }

    fn new_graph(&self) -> Option<usearch::Index> {
        let metric = match self.function {
            DistanceFunction::Cosine => usearch::MetricKind::Cos,
            DistanceFunction::Euclidean => usearch::MetricKind::L2sq,
            DistanceFunction::DotProduct => usearch::MetricKind::IP,
        };
        let options = usearch::IndexOptions {
            dimensions: self.dimensions,
            metric,
            quantization: usearch::ScalarKind::F32,
            connectivity: CONNECTIVITY,
            expansion_add: EXPANSION_ADD,
            expansion_search: EXPANSION_SEARCH,
            multi: false,
        };
        usearch::Index::new(&options).ok()
    }
}

impl Partition {
    fn len(&self) -> usize {
        self.members.read().members.len()
    }

    /// Makes `entry` the item's member here: only its filters change when
    /// it has this vector already, otherwise it gets a new label (its old
    /// one leaves the graph).
    fn put(&self, item: &[u8], entry: &Entry) {
        let vector_hash = hash_vector(&entry.vector);
        let filters = entry.filters.clone().into_boxed_slice();
        let mut m = self.members.write();
        if let Some(previous) = m.by_item.get(item).copied() {
            if let Some(member) = m.members.get_mut(&previous) {
                if member.vector_hash == vector_hash {
                    member.filters = filters;
                    return;
                }
            }
            m.members.remove(&previous);
            if m.pending.remove(&previous).is_none() {
                m.removed.push(previous);
            }
        }
        let label = m.next_label;
        m.next_label += 1;
        m.by_item.insert(item.into(), label);
        let member = Member {
            item: item.into(),
            filters,
            vector_hash,
        };
        m.members.insert(label, member);
        m.pending
            .insert(label, entry.vector.clone().into_boxed_slice());
    }

    fn remove(&self, item: &[u8]) {
        let mut m = self.members.write();
        let Some(label) = m.by_item.remove(item) else {
            return;
        };
        m.members.remove(&label);
        if m.pending.remove(&label).is_none() {
            m.removed.push(label);
        }
    }

    /// Drops the removed labels from the graph (the indexer's thread).
    fn drop_removed(&self) {
        let removed = std::mem::take(&mut self.members.write().removed);
        if removed.is_empty() {
            return;
        }
        if let Some(graph) = self.graph.write().as_ref() {
            for label in removed {
                let _ = graph.remove(label);
            }
        }
    }

    /// Whether the indexer has work here: pending vectors of a partition
    /// large enough for a graph, or labels to drop from its graph.
    fn has_work(&self) -> bool {
        let m = self.members.read();
        !m.removed.is_empty() || (m.members.len() >= GRAPH_MIN && !m.pending.is_empty())
    }

    fn memory_bytes(&self, dimensions: usize) -> usize {
        let m = self.members.read();
        let graph = self.graph_bytes.load(Ordering::Relaxed);
        let members: usize = (m.members.values())
            .map(|x| 2 * x.item.len() + 72 + x.filters.len() * 32)
            .sum();
        graph + members + m.pending.len() * (dimensions * 4 + 32)
    }
}

impl Partition {
    /// Moves up to a batch of pending vectors into the graph; how many.
    fn index_batch(&self, inner: &Inner) -> usize {
        let batch: Vec<(u64, Box<[f32]>)> = {
            let m = self.members.read();
            (m.pending.iter().take(INSERT_BATCH))
                .map(|(label, vector)| (*label, vector.clone()))
                .collect()
        };
        if batch.is_empty() || !self.reserve(inner, batch.len()) {
            return 0;
        }
        {
            let graph = self.graph.read();
            let Some(graph) = graph.as_ref() else {
                return 0;
            };
            let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
            let chunk = batch.len().div_ceil(workers);
            std::thread::scope(|scope| {
                for part in batch.chunks(chunk) {
                    scope.spawn(move || {
                        for (label, vector) in part {
                            let _ = graph.add(*label, vector);
                        }
                    });
                }
            });
            (self.graph_bytes).store(graph.memory_usage(), Ordering::Relaxed);
        }
        // A member removed while it was being inserted leaves the graph now.
        let mut m = self.members.write();
        for (label, _) in &batch {
            if m.pending.remove(label).is_none() {
                m.removed.push(*label);
            }
        }
        batch.len()
    }

    /// Creates the graph, or grows it to take `more` vectors.
    fn reserve(&self, inner: &Inner, more: usize) -> bool {
        let mut graph = self.graph.write();
        if graph.is_none() {
            *graph = inner.new_graph();
        }
        let Some(graph) = graph.as_ref() else {
            return false;
        };
        let needed = graph.size() + more;
        if graph.capacity() >= needed {
            return true;
        }
        // Grown by a quarter: usearch allocates the reserved slots' vectors.
        let grown = needed.max(graph.capacity() + graph.capacity() / 4);
        graph
            .reserve_capacity_and_threads(grown, GRAPH_THREADS)
            .is_ok()
    }

    fn search(
        &self,
        inner: &Inner,
        query: &[f32],
        k: usize,
        filter: &Filter,
        exact: bool,
    ) -> Vec<Hit> {
        let m = self.members.read();
        let passes = |member: &Member| {
            filter
                .iter()
                .all(|(i, value)| member.filters.get(*i).and_then(|v| v.as_ref()) == Some(value))
        };
        let live = |label: &u64| m.members.get(label).is_some_and(passes);
        // Pending vectors: always exact.
        let mut hits = scan(
            inner,
            query,
            k,
            m.pending
                .iter()
                .filter(|(l, _)| live(l))
                .map(|(l, v)| (*l, &v[..])),
        );
        let graph = self.graph.read();
        if let Some(graph) = graph.as_ref() {
            let in_graph = || {
                (m.members.iter())
                    .filter(|(l, member)| !m.pending.contains_key(*l) && passes(member))
            };
            let matching = if filter.is_empty() {
                m.members.len() - m.pending.len()
            } else {
                in_graph().count()
            };
            let approximate = (!exact && matching > EXACT_LIMIT)
                .then(|| graph_search(inner, graph, query, k, filter, &live, &m.pending))
                .flatten()
                .filter(|found| found.len() >= k.min(matching));
            // The exact scan reads members whose insertion has ended
            // (usearch's exact search would read slots an insertion is
            // still filling).
            let found = approximate.unwrap_or_else(|| {
                let mut buffer = vec![0f32; inner.dimensions];
                let stored = in_graph().filter_map(|(label, _)| {
                    graph.get(*label, &mut buffer).ok().filter(|n| *n > 0)?;
                    Some((*label, buffer.clone()))
                });
                let owned: Vec<(u64, Vec<f32>)> = stored.collect();
                scan(inner, query, k, owned.iter().map(|(l, v)| (*l, &v[..])))
            });
            hits.extend(found);
        }
        let mut seen = std::collections::HashSet::new();
        (hits.into_iter())
            .filter(|(label, _)| seen.insert(*label))
            .filter_map(|(label, score)| {
                let member = m.members.get(&label)?;
                Some(Hit {
                    item: member.item.to_vec(),
                    score,
                })
            })
            .collect()
    }
}

/// usearch's thread contexts per graph: searches run on many request
/// threads at once, and a graph call finding no free context fails.
const GRAPH_THREADS: usize = 64;

/// The exact scores of the `k` (plus a margin, for ties) best of
/// `candidates`, ranked in f32 first when there are many.
fn scan<'a>(
    inner: &Inner,
    query: &[f32],
    k: usize,
    candidates: impl Iterator<Item = (u64, &'a [f32])>,
) -> Vec<(u64, f64)> {
    let function = inner.function;
    let norm = distance::norm(query);
    let mut ranked: Vec<(f32, u64, &[f32])> = candidates
        .map(|(label, v)| (distance::rank_key(function, query, norm, v), label, v))
        .collect();
    let keep = k + 32;
    if ranked.len() > keep {
        ranked.select_nth_unstable_by(keep, |a, b| a.0.total_cmp(&b.0));
        ranked.truncate(keep);
    }
    (ranked.into_iter())
        .map(|(_, label, v)| (label, distance::score(function, query, v)))
        .collect()
}

/// An approximate search of the graph, rescored exactly; None if the graph
/// failed (the caller then scans).
fn graph_search(
    inner: &Inner,
    graph: &usearch::Index,
    query: &[f32],
    k: usize,
    filter: &Filter,
    live: &dyn Fn(&u64) -> bool,
    pending: &HashMap<u64, Box<[f32]>>,
) -> Option<Vec<(u64, f64)>> {
    let accept = |label: &u64| live(label) && !pending.contains_key(label);
    let found = if filter.is_empty() {
        graph.search(query, k).ok()?
    } else {
        graph
            .filtered_search(query, k, |label| accept(&label))
            .ok()?
    };
    graph_rescored(inner, graph, query, found, &accept)
}

/// The accepted labels of a graph answer with their exact scores.
fn graph_rescored(
    inner: &Inner,
    graph: &usearch::Index,
    query: &[f32],
    found: usearch::ffi::Matches,
    accept: &dyn Fn(&u64) -> bool,
) -> Option<Vec<(u64, f64)>> {
    let mut buffer = vec![0f32; inner.dimensions];
    let hits = (found.keys.iter())
        .filter(|label| accept(label))
        .filter_map(|label| {
            graph.get(*label, &mut buffer).ok().filter(|n| *n > 0)?;
            Some((*label, distance::score(inner.function, query, &buffer)))
        })
        .collect();
    Some(hits)
}

impl Partition {
    /// Sets the graph's search expansion to the smallest that finds, on a
    /// sample of the partition's own vectors used as queries, at least
    /// [`TARGET_RECALL`] of their ten exact nearest neighbours (themselves
    /// left out). How hard a data set is for a graph depends on the data
    /// (uniformly random vectors are the hardest): measuring it keeps
    /// easy data fast and hard data accurate.
    fn calibrate(&self) {
        let labels: Vec<u64> = {
            let m = self.members.read();
            let stride = (m.members.len() / CALIBRATION_QUERIES).max(1);
            (m.members.keys())
                .filter(|l| !m.pending.contains_key(l))
                .step_by(stride)
                .take(CALIBRATION_QUERIES)
                .copied()
                .collect()
        };
        let graph = self.graph.read();
        let Some(graph) = graph.as_ref() else {
            return;
        };
        let mut samples = Vec::new();
        for label in labels {
            let mut query = vec![0f32; graph.dimensions()];
            if graph.get(label, &mut query).is_ok_and(|n| n > 0) {
                if let Ok(exact) = graph.exact_search(&query, 11) {
                    samples.push((label, query, without(label, &exact.keys)));
                }
            }
        }
        for expansion in EXPANSIONS {
            graph.change_expansion_search(expansion);
            let found: usize = (samples.iter())
                .map(|(label, query, truth)| {
                    let keys = graph.search(query, 11).map(|m| m.keys).unwrap_or_default();
                    without(*label, &keys)
                        .iter()
                        .filter(|k| truth.contains(k))
                        .count()
                })
                .sum();
            let recall = found as f64 / (samples.len() * 10).max(1) as f64;
            if recall >= TARGET_RECALL {
                return;
            }
        }
    }
}

/// The first ten of `keys` other than `label`.
fn without(label: u64, keys: &[u64]) -> Vec<u64> {
    keys.iter()
        .copied()
        .filter(|k| *k != label)
        .take(10)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(vector: Vec<f32>, filter: &str) -> Entry {
        Entry {
            vector,
            hash: None,
            filters: vec![Some(AttributeValue::S(filter.into()))],
        }
    }

    /// 5,000 vectors in one partition (a graph), one in a hundred tagged
    /// "rare": searches find their exact neighbours' scores, a filter
    /// returns TopK of its matches, a removed item is never returned.
    #[test]
    fn a_graph_partition_answers_filters_and_removals() {
        let store = Store::new("t", 4, DistanceFunction::Euclidean, false);
        let mut rng = 7u64;
        let mut next = || {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let mut all = Vec::new();
        for i in 0..5000u32 {
            let v: Vec<f32> = (0..4).map(|_| next()).collect();
            let tag = if i % 100 == 0 { "rare" } else { "common" };
            store.set(&i.to_be_bytes(), Some(&entry(v.clone(), tag)));
            all.push((i, v, tag));
        }
        while !store.settled() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let rare = [(0, AttributeValue::S("rare".into()))];
        let query = [0.1, 0.2, -0.1, 0.0];
        let found = store.search(&query, 100, &None, &rare, false);
        assert_eq!(found.len(), 50, "every rare item, TopK 100");
        let found = store.search(&query, 10, &None, &[], false);
        assert_eq!(found.len(), 10);
        let mut exact: Vec<f64> = all
            .iter()
            .map(|(_, v, _)| distance::score(DistanceFunction::Euclidean, &query, v))
            .collect();
        exact.sort_by(f64::total_cmp);
        assert_eq!(
            found[0].score, exact[0],
            "the nearest is found, scored exactly"
        );
        let first = found[0].item.clone();
        let (i, _, _) = all
            .iter()
            .find(|(i, _, _)| i.to_be_bytes().as_slice() == first)
            .unwrap();
        store.set(&i.to_be_bytes(), None);
        let again = store.search(&query, 10, &None, &[], true);
        assert!(again.iter().all(|h| h.item != first));
        assert_eq!(again[0].score, exact[1]);
        assert_eq!(store.len(), 4999);
    }

    /// An item moves between HASH partitions whatever its writer thought its
    /// old entry was; setting the entry it has changes nothing but filters.
    #[test]
    fn an_item_is_taken_out_of_wherever_it_was() {
        let store = Store::new("t", 2, DistanceFunction::Euclidean, true);
        let hashed = |hash: &str, filter: &str, vector: [f32; 2]| Entry {
            vector: vector.to_vec(),
            hash: Some(AttributeValue::S(hash.into())),
            filters: vec![Some(AttributeValue::S(filter.into()))],
        };
        let (a, b) = (
            Some(AttributeValue::S("a".into())),
            Some(AttributeValue::S("b".into())),
        );
        store.set(b"x", Some(&hashed("a", "red", [1.0, 0.0])));
        store.set(b"x", Some(&hashed("b", "red", [1.0, 0.0])));
        assert!(store.search(&[1.0, 0.0], 5, &a, &[], true).is_empty());
        assert_eq!(store.search(&[1.0, 0.0], 5, &b, &[], true).len(), 1);
        // The same vector again: the filter changes, the member stays.
        store.set(b"x", Some(&hashed("b", "blue", [1.0, 0.0])));
        let blue = [(0, AttributeValue::S("blue".into()))];
        assert_eq!(store.search(&[1.0, 0.0], 5, &b, &blue, true).len(), 1);
        assert_eq!(store.report().pending, 1, "no second copy of the vector");
        store.set(b"x", None);
        assert_eq!(store.len(), 0);
        store.set(b"y", Some(&hashed("a", "red", [0.0, 1.0])));
        store.set(b"z", Some(&hashed("b", "red", [0.0, 1.0])));
        store.retain(|item| item == b"z");
        assert!(store.search(&[0.0, 1.0], 5, &a, &[], true).is_empty());
        assert_eq!(store.len(), 1);
    }
}
