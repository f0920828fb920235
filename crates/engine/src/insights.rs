//! Contributor Insights: per table and global index, whether DynamoDB's
//! CloudWatch rules are on (UpdateContributorInsights, Describe..., List...,
//! with DynamoDB's statuses, rule names, modes and its quota of 100 rules
//! per region), and, while they are, the most accessed and most throttled
//! keys counted from real traffic minute by minute, kept in memory for an
//! hour (CloudWatch's data is no table state: it is not saved).
//!
//! What is counted, as the developer guide defines the rules: accessed
//! keys by ConsumedThroughputUnits (3 × write units + read units) of the
//! item reads and writes, batches and transactions (the partition key, and
//! partition plus sort key), Query by the partition key it reads; throttled
//! keys by the number of requests refused for them. Settings live in the
//! catalog record; the upkeep (shards.rs) moves ENABLING and DISABLING on.

pub use crate::shared::InsightsState;
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::{AttributeValue, DynamoError, Item, Result};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Rules per account and region (CloudWatch Contributor Insights' quota).
pub const MAX_RULES: usize = 100;
/// Keys kept per rule and minute: enough that the top ones are exact.
const KEPT_KEYS: usize = 1_024;
/// Minutes of counts kept.
const KEPT_MINUTES: usize = 60;
/// The FailureException of an ENABLE past the rule quota (service model).
const QUOTA_FAILURE: &str = "Per-account Amazon CloudWatch Contributor Insights rule limit reached. Please disable Contributor Insights for other tables/indexes OR disable Contributor Insights rules before retrying.";

/// The rule kinds, in the order DynamoDB lists them.
pub const RULE_KINDS: [&str; 4] = ["PKC", "SKC", "PKT", "SKT"];

/// The names of the rules `state` makes for `resource` (the table, or
/// `table-index`): SK rules only with a sort key, PKC/SKC only when
/// accessed keys are counted.
pub fn rule_names(state: &InsightsState, resource: &str, has_sort_key: bool) -> Vec<String> {
    (RULE_KINDS.iter())
        .filter(|kind| has_sort_key || kind.starts_with('P'))
        .filter(|kind| state.counts_accessed() || kind.ends_with('T'))
        .map(|kind| {
            format!(
                "DynamoDBContributorInsights-{kind}-{resource}-{}",
                state.rule_ms
            )
        })
        .collect()
}

/// Keys by count, at most [`KEPT_KEYS`] of the largest after pruning.
#[derive(Default)]
struct TopKeys(HashMap<Vec<String>, f64>);

impl TopKeys {
    fn add(&mut self, key: Vec<String>, amount: f64) {
        *self.0.entry(key).or_default() += amount;
        if self.0.len() > 2 * KEPT_KEYS {
            let mut all: Vec<(Vec<String>, f64)> = self.0.drain().collect();
            all.sort_by(|a, b| b.1.total_cmp(&a.1));
            all.truncate(KEPT_KEYS);
            self.0.extend(all);
        }
    }
}

/// One minute of one resource's counts: [PKC, SKC, PKT, SKT].
#[derive(Default)]
struct Minute {
    rules: [TopKeys; 4],
}

/// One resource's last hour.
#[derive(Default)]
struct Window {
    minutes: VecDeque<(u64, Minute)>,
}

impl Window {
    fn minute(&mut self, minute: u64) -> &mut Minute {
        if self.minutes.back().is_none_or(|(m, _)| *m != minute) {
            self.minutes.push_back((minute, Minute::default()));
            while self.minutes.len() > KEPT_MINUTES {
                self.minutes.pop_front();
            }
        }
        &mut self.minutes.back_mut().expect("just pushed").1
    }
}

/// A table (index name "") or one of its global indexes.
type Resource = (u64, String);

/// A rule's top keys: each key's values as text, and its count.
pub type TopList = Vec<(Vec<String>, f64)>;

/// Every resource's counts, by (table id, index name or "").
#[derive(Default)]
pub struct InsightsCounts {
    windows: Mutex<HashMap<Resource, Arc<Mutex<Window>>>>,
}

/// A key as the rules show it: its values as text.
fn key_text(value: &AttributeValue) -> String {
    match value {
        AttributeValue::S(s) => s.clone(),
        AttributeValue::N(n) => n.to_string(),
        other => serde_json::to_string(other).expect("plain data always serialises"),
    }
}

/// An item's (partition key, partition and sort key) texts under `names`.
fn keys_of(
    item: &Item,
    hash: &[String],
    range: &[String],
) -> Option<(Vec<String>, Option<Vec<String>>)> {
    let part: Vec<String> = hash
        .iter()
        .map(|n| item.get(n).map(key_text))
        .collect::<Option<_>>()?;
    if range.is_empty() {
        return Some((part, None));
    }
    let sort: Option<Vec<String>> = range.iter().map(|n| item.get(n).map(key_text)).collect();
    let full = sort.map(|sort| part.iter().cloned().chain(sort).collect());
    Some((part, full))
}

impl Engine {
    /// Counts `units` of ConsumedThroughputUnits (or one refusal, when
    /// `throttled`) for item `item` of `table` (`index`: a global index's
    /// key in it).
    pub(crate) fn count_contributor(
        &self,
        table: &Table,
        index: Option<&str>,
        item: &Item,
        units: f64,
        throttled: bool,
    ) {
        if !table.counts_contributors() {
            return; // the request path's one check when insights are off
        }
        let Some(state) = table.insights_state(index.unwrap_or("")) else {
            return;
        };
        if !state.counting() || !(throttled || state.counts_accessed()) {
            return;
        }
        let (hash, range) = table.key_names(index);
        let Some((part, full)) = keys_of(item, &hash, &range) else {
            return;
        };
        let window = self.insights_window(table.id, index);
        let minute = self.clock.now_millis() / 60_000;
        let mut window = window.lock();
        let counts = window.minute(minute);
        let (first, amount) = if throttled { (2, 1.0) } else { (0, units) };
        counts.rules[first].add(part, amount);
        if let Some(full) = full {
            counts.rules[first + 1].add(full, amount);
        }
    }

    /// Counts one refusal of item `key` of `table` for lack of capacity, the
    /// table's or its partition's: the throttled-key rules count every
    /// refused request, whatever the operation.
    pub(crate) fn count_throttled(&self, table: &Table, key: &Item) {
        self.count_contributor(table, None, key, 0.0, true);
    }

    /// The top `limit` keys of each rule of a resource over the last
    /// `minutes` minutes: (rule kind, [(key, value)]).
    pub fn contributors(
        &self,
        table: &Table,
        index: Option<&str>,
        minutes: u64,
        limit: usize,
    ) -> Vec<(&'static str, TopList)> {
        let window = self
            .insights
            .windows
            .lock()
            .get(&(table.id, index.unwrap_or("").to_string()))
            .cloned();
        let now = self.clock.now_millis() / 60_000;
        let mut sums: [HashMap<Vec<String>, f64>; 4] = Default::default();
        if let Some(window) = window {
            let window = window.lock();
            for (_, counts) in window
                .minutes
                .iter()
                .filter(|(m, _)| now.saturating_sub(*m) < minutes)
            {
                for (sum, rule) in sums.iter_mut().zip(&counts.rules) {
                    for (key, value) in &rule.0 {
                        *sum.entry(key.clone()).or_default() += value;
                    }
                }
            }
        }
        RULE_KINDS
            .iter()
            .zip(sums)
            .map(|(kind, sum)| {
                let mut top: TopList = sum.into_iter().collect();
                top.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                top.truncate(limit);
                (*kind, top)
            })
            .collect()
    }

    /// Counts a Query page's read units on the rules of the table or index
    /// it read, by the partition key it named (a Query has no one sort key).
    pub(crate) fn count_query_contributor(
        &self,
        read: &crate::api::PageRead<'_>,
        hash: &[&AttributeValue],
        units: f64,
    ) {
        if !read.table.counts_contributors() {
            return;
        }
        let index = read.index.map(|i| i.name.as_str());
        let names = read.table.key_names(index).0;
        let mut key = Item::new();
        for (name, value) in names.into_iter().zip(hash) {
            key.insert(name, (*value).clone());
        }
        self.count_partition_key(read.table, index, key, units);
    }

    /// [`Engine::count_contributor`] for a key that names only its
    /// partition: the partition-key rules alone count it.
    fn count_partition_key(&self, table: &Table, index: Option<&str>, key: Item, units: f64) {
        let Some(state) = table.insights_state(index.unwrap_or("")) else {
            return;
        };
        if !state.counting() || !state.counts_accessed() {
            return;
        }
        let (hash, _) = table.key_names(index);
        let Some((part, _)) = keys_of(&key, &hash, &[]) else {
            return;
        };
        let window = self.insights_window(table.id, index);
        let minute = self.clock.now_millis() / 60_000;
        window.lock().minute(minute).rules[0].add(part, units);
    }

    /// The counts of one resource, made on first use.
    fn insights_window(&self, table_id: u64, index: Option<&str>) -> Arc<Mutex<Window>> {
        let mut windows = self.insights.windows.lock();
        Arc::clone(
            windows
                .entry((table_id, index.unwrap_or("").to_string()))
                .or_default(),
        )
    }

    /// Forgets the counts of a table (deleted).
    pub(crate) fn forget_contributors(&self, table_id: u64) {
        self.insights
            .windows
            .lock()
            .retain(|(id, _), _| *id != table_id);
    }
}

/// UpdateContributorInsights' action.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum InsightsAction {
    Enable,
    Disable,
}

impl Engine {
    /// UpdateContributorInsights on `table_name` (or its ARN) and global
    /// index `index`: the state after the change (ENABLING, DISABLING, or
    /// the same when nothing changes).
    pub fn update_contributor_insights(
        &self,
        table_name: &str,
        index: Option<&str>,
        action: InsightsAction,
        mode: Option<&str>,
    ) -> Result<(Arc<Table>, InsightsState)> {
        let _catalog = self.catalog_lock.lock();
        let table = self.insights_table(table_name, index)?;
        let resource = index.unwrap_or("").to_string();
        let current = table.insights_state(&resource);
        let mode = mode
            .map(str::to_string)
            .or_else(|| current.as_ref().map(|c| c.mode.clone()));
        let mode = mode.unwrap_or_else(|| "ACCESSED_AND_THROTTLED_KEYS".into());
        let now = self.now_seconds();
        let next = match (action, &current) {
            (InsightsAction::Enable, Some(c)) if c.counting() && c.mode == mode => {
                return Ok((table, c.clone()))
            }
            (InsightsAction::Disable, None) => return Ok((table, disabled(&mode, now))),
            (InsightsAction::Disable, Some(c)) if !c.counting() => return Ok((table, c.clone())),
            (InsightsAction::Enable, _) => {
                let mut state = InsightsState {
                    status: "ENABLING".into(),
                    mode,
                    rule_ms: (now * 1000.0) as u64,
                    updated: now,
                    failure: None,
                    over_quota: false,
                };
                let has_sort = !table.key_names(index).1.is_empty();
                let new_rules = rule_names(&state, "", has_sort).len();
                state.over_quota = self.rules_in_region(&table, &resource) + new_rules > MAX_RULES;
                state
            }
            (InsightsAction::Disable, Some(c)) => InsightsState {
                status: "DISABLING".into(),
                updated: now,
                ..c.clone()
            },
        };
        table.set_insights_state(&resource, next.clone());
        self.save_catalog_record(&table)?;
        Ok((table, next))
    }

    /// The table of a Contributor Insights request: by name or ARN, and its
    /// global index when named (an LSI has no rules: not found).
    fn insights_table(&self, name: &str, index: Option<&str>) -> Result<Arc<Table>> {
        let table = self.lookup(name).ok_or_else(|| {
            DynamoError::resource_not_found(format!(
                "Requested resource not found: Table: {name} not found"
            ))
        })?;
        if let Some(index) = index {
            let found = table
                .indexes()
                .iter()
                .any(|i| i.name == index && i.kind == crate::index::IndexKind::Global);
            if !found {
                return Err(DynamoError::resource_not_found(format!(
                    "Requested resource not found: Index: {index} not found for table: {}",
                    table.name
                )));
            }
        }
        Ok(table)
    }

    /// Rules counted against the region's quota now, leaving out
    /// `except` of `table` (the resource being enabled again).
    fn rules_in_region(&self, table: &Table, except: &str) -> usize {
        let region = self.request_region();
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        let mut rules = 0;
        for other in tables
            .iter()
            .filter(|t| self.name_in_region(&t.catalog_name, &region).is_some())
        {
            for (resource, state) in other.insights() {
                let this = other.id == table.id && resource == except;
                if state.counting() && !state.over_quota && !this {
                    let index = (!resource.is_empty()).then_some(resource.as_str());
                    rules += rule_names(&state, "", !other.key_names(index).1.is_empty()).len();
                }
            }
        }
        rules
    }

    /// DescribeContributorInsights: the table (found by name or ARN) and
    /// the resource's state, if it was ever configured.
    pub fn describe_contributor_insights(
        &self,
        table_name: &str,
        index: Option<&str>,
    ) -> Result<(Arc<Table>, Option<InsightsState>)> {
        let table = self.insights_table(table_name, index)?;
        let state = table.insights_state(index.unwrap_or(""));
        Ok((table, state))
    }

    /// Every configured resource of the region's tables (or of one table),
    /// tables by name, each table before its indexes, DISABLED ones left out.
    pub fn list_contributor_insights(
        &self,
        table_name: Option<&str>,
    ) -> Result<Vec<(Arc<Table>, String, InsightsState)>> {
        let tables = match table_name {
            Some(name) => vec![self.insights_table(name, None)?],
            None => {
                let region = self.request_region();
                let mut all: Vec<Arc<Table>> = (self.tables.read().values())
                    .filter(|t| {
                        self.name_in_region(&t.catalog_name, &region).is_some() && !t.is_creating()
                    })
                    .cloned()
                    .collect();
                all.sort_by(|a, b| a.name.cmp(&b.name));
                all
            }
        };
        let mut out = Vec::new();
        for table in tables {
            for (resource, state) in table.insights() {
                if state.status != "DISABLED" {
                    out.push((Arc::clone(&table), resource, state));
                }
            }
        }
        Ok(out)
    }

    /// The upkeep's part: ENABLING becomes ENABLED (or FAILED past the
    /// quota), DISABLING becomes DISABLED, as CloudWatch's rules settle.
    pub(crate) fn settle_contributor_insights(&self, table: &Table) -> Result<()> {
        let unsettled = table
            .insights()
            .into_iter()
            .any(|(_, s)| matches!(s.status.as_str(), "ENABLING" | "DISABLING"));
        if !unsettled {
            return Ok(());
        }
        let _catalog = self.catalog_lock.lock();
        let now = self.now_seconds();
        for (resource, mut state) in table.insights() {
            match state.status.as_str() {
                "ENABLING" if state.over_quota => {
                    state.status = "FAILED".into();
                    state.failure = Some(("LimitExceededException".into(), QUOTA_FAILURE.into()));
                }
                "ENABLING" => state.status = "ENABLED".into(),
                "DISABLING" => {
                    state.status = "DISABLED".into();
                    if resource.is_empty() {
                        self.insights
                            .windows
                            .lock()
                            .retain(|(id, _), _| *id != table.id);
                    }
                }
                _ => continue,
            }
            state.updated = now;
            table.set_insights_state(&resource, state);
        }
        Ok(self.save_catalog_record(table)?)
    }
}

/// The answer to a DISABLE of a resource never enabled.
fn disabled(mode: &str, now: f64) -> InsightsState {
    InsightsState {
        status: "DISABLED".into(),
        mode: mode.into(),
        rule_ms: 0,
        updated: now,
        failure: None,
        over_quota: false,
    }
}
