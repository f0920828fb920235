//! Point-in-time recovery checked against a model of the history (each
//! operation on its own: `recovery.rs`). A seeded history of puts, updates,
//! deletes, batch writes and transactions (some cancelled by a condition
//! check) runs one operation at a time from one client, so their order is
//! known, and each acknowledged operation is applied to an in-memory model.
//! Every 10 to 20 operations the test takes a cut: the server's now
//! (LatestRestorableDateTime: the server's clock gives the commit times, the
//! test's does not), with a pause on either side so that no write shares
//! its millisecond, and the model as it stood then. Twenty of the cuts are
//! restored side by side, and each restored table is compared with its
//! model item by item: a Scan, a Query of its global index for every `g`,
//! and its ItemCount.
//!
//! The history is seeded by [`SEED`]; `FERRODYN_TEST_SEED=n` runs another.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::primitives::DateTime;
use aws_sdk_dynamodb::types::{
    AttributeValue, BillingMode, DeleteRequest, GlobalSecondaryIndex, KeyType,
    PointInTimeRecoverySpecification, Projection, ProjectionType, PutRequest, ReturnValue,
    ScalarAttributeType as T, TableDescription, TableStatus, TransactWriteItem, WriteRequest,
};
use aws_sdk_dynamodb::Client;

use crate::util::{self, attr_def, get_n, get_s, item, key, n, s, txn, Rng};

/// The history's seed, unless `FERRODYN_TEST_SEED` gives another.
const SEED: u64 = 20_260_611;

/// Items put before recovery is enabled (they are in its base).
const INITIAL_ITEMS: usize = 20;

/// Operations in the history after recovery is enabled.
const OPERATIONS: usize = 400;

/// The item keys: partition keys `p0..p7` times sort keys 1..=5.
const PARTITIONS: usize = 8;
const SORT_KEYS: i64 = 5;

/// The values `g0..g3` of the indexed attribute `g`.
const GROUPS: usize = 4;

/// How many of the cuts are restored.
const RESTORES: usize = 20;

/// The global index on `g`.
const INDEX: &str = "by-g";

/// The pause on either side of a cut (RestoreDateTime is read to the
/// millisecond).
const PAUSE: Duration = Duration::from_millis(3);

/// How long a restore may take on the test server.
const WAIT: Duration = Duration::from_secs(40);

type Item = HashMap<String, AttributeValue>;

/// An item's table key: `pk` and `sk`.
type Key = (String, i64);

/// What the table holds, by key.
type Model = BTreeMap<Key, Item>;

/// An instant between two operations of the history, and the model then.
struct Cut {
    /// The cut's place among the cuts taken.
    number: usize,
    /// How many operations of the history had been acknowledged.
    after: usize,
    /// The server's LatestRestorableDateTime, in ms since the epoch.
    millis: i64,
    model: Model,
}

fn seed() -> u64 {
    std::env::var("FERRODYN_TEST_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or(SEED)
}

/// Milliseconds since the epoch on the test's clock (only for the log).
fn local_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// A timestamp's epoch milliseconds, rounded (the SDK reads DynamoDB's
/// fractional seconds through an f64).
fn millis(t: &DateTime) -> i64 {
    (t.as_secs_f64() * 1000.0).round() as i64
}

fn random_key(rng: &mut Rng) -> Key {
    let partition = rng.usize(0..PARTITIONS);
    (format!("p{partition}"), rng.i64(1..=SORT_KEYS))
}

/// `count` different keys (a batch or a transaction names a key once).
fn distinct_keys(rng: &mut Rng, count: usize) -> Vec<Key> {
    let mut keys = Vec::with_capacity(count);
    while keys.len() < count {
        let key = random_key(rng);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

fn key_item(key: &Key) -> Item {
    item(&[("pk", s(&key.0)), ("sk", n(&key.1.to_string()))])
}

fn key_of(item: &Item) -> Key {
    (get_s(item, "pk").to_string(), get_n(item, "sk"))
}

fn random_group(rng: &mut Rng) -> String {
    format!("g{}", rng.usize(0..GROUPS))
}

/// A whole new item for `key`: `stamp` names the operation that wrote it,
/// `tally` is a number, `g` (in the index) and `memo` are there or not.
fn new_item(rng: &mut Rng, key: &Key, stamp: &str) -> Item {
    let mut new = key_item(key);
    new.insert("stamp".into(), s(stamp));
    new.insert("tally".into(), n(&rng.i64(0..100).to_string()));
    if rng.u8(0..5) > 0 {
        new.insert("g".into(), s(&random_group(rng)));
    }
    if rng.bool() {
        new.insert("memo".into(), s(&format!("memo of {stamp}")));
    }
    new
}

/// What an update does besides setting `stamp` (on a missing item it
/// creates one, as DynamoDB's UpdateItem does).
#[derive(Debug, Clone)]
enum Change {
    /// Adds to `tally` (from 0 if it is missing).
    Bump(i64),
    /// Removes `memo`.
    DropMemo,
    /// Moves the item to another `g`, or out of the index.
    Regroup(Option<String>),
}

impl Change {
    fn random(rng: &mut Rng) -> Change {
        match rng.u8(0..4) {
            0 | 1 => Change::Bump(rng.i64(-5..=20)),
            2 => Change::DropMemo,
            _ => Change::Regroup(rng.bool().then(|| random_group(rng))),
        }
    }

    fn expression(&self) -> &'static str {
        match self {
            Change::Bump(_) => "SET tally = if_not_exists(tally, :zero) + :d, stamp = :stamp",
            Change::DropMemo => "REMOVE memo SET stamp = :stamp",
            Change::Regroup(Some(_)) => "SET g = :g, stamp = :stamp",
            Change::Regroup(None) => "REMOVE g SET stamp = :stamp",
        }
    }

    fn values(&self, stamp: &str) -> Vec<(&'static str, AttributeValue)> {
        let mut values = vec![(":stamp", s(stamp))];
        match self {
            Change::Bump(d) => {
                values.push((":zero", n("0")));
                values.push((":d", n(&d.to_string())));
            }
            Change::Regroup(Some(g)) => values.push((":g", s(g))),
            Change::DropMemo | Change::Regroup(None) => {}
        }
        values
    }

    fn apply(&self, model: &mut Model, key: &Key, stamp: &str) {
        let it = model.entry(key.clone()).or_insert_with(|| key_item(key));
        match self {
            Change::Bump(d) => {
                let tally = it.get("tally").map_or(0, |_| get_n(it, "tally")) + d;
                it.insert("tally".into(), n(&tally.to_string()));
            }
            Change::DropMemo => {
                it.remove("memo");
            }
            Change::Regroup(Some(g)) => {
                it.insert("g".into(), s(g));
            }
            Change::Regroup(None) => {
                it.remove("g");
            }
        }
        it.insert("stamp".into(), s(stamp));
    }
}

/// One write of an operation.
#[derive(Debug, Clone)]
enum Action {
    Put(Item),
    Update(Key, Change),
    Delete(Key),
    /// A transaction's ConditionCheck `attribute_exists(pk)`.
    Check(Key),
}

impl Action {
    /// A Put, Update or Delete of `key`, at random.
    fn random(rng: &mut Rng, key: &Key, stamp: &str) -> Action {
        match rng.u8(0..10) {
            0..=3 => Action::Put(new_item(rng, key, stamp)),
            4..=7 => Action::Update(key.clone(), Change::random(rng)),
            _ => Action::Delete(key.clone()),
        }
    }

    /// A BatchWriteItem's request: a Put or a Delete of `key`.
    fn random_batched(rng: &mut Rng, key: &Key, stamp: &str) -> Action {
        match rng.u8(0..10) {
            0..=5 => Action::Put(new_item(rng, key, stamp)),
            _ => Action::Delete(key.clone()),
        }
    }

    fn apply(&self, model: &mut Model, stamp: &str) {
        match self {
            Action::Put(new) => {
                model.insert(key_of(new), new.clone());
            }
            Action::Update(key, change) => change.apply(model, key, stamp),
            Action::Delete(key) => {
                model.remove(key);
            }
            Action::Check(_) => {}
        }
    }

    fn write_request(&self) -> WriteRequest {
        match self {
            Action::Put(new) => {
                let put = PutRequest::builder().set_item(Some(new.clone()));
                WriteRequest::builder()
                    .put_request(put.build().unwrap())
                    .build()
            }
            Action::Delete(key) => {
                let delete = DeleteRequest::builder().set_key(Some(key_item(key)));
                WriteRequest::builder()
                    .delete_request(delete.build().unwrap())
                    .build()
            }
            other => panic!("BatchWriteItem has no {other:?}"),
        }
    }

    fn transact_item(&self, table: &str, stamp: &str) -> TransactWriteItem {
        match self {
            Action::Put(new) => txn::put(table, new.clone(), None, &[]),
            Action::Update(key, change) => txn::update(
                table,
                key_item(key),
                change.expression(),
                None,
                &change.values(stamp),
            ),
            Action::Delete(key) => txn::delete(table, key_item(key), None, &[]),
            Action::Check(key) => txn::check(table, key_item(key), "attribute_exists(pk)", &[]),
        }
    }
}

/// The history as it runs: the seeded choices, the model, and a log line
/// per acknowledged operation for a failure's report.
struct History<'a> {
    client: &'a Client,
    table: &'a str,
    rng: Rng,
    model: Model,
    done: usize,
    log: Vec<String>,
}

impl History<'_> {
    /// Puts `count` items with PutItem (before recovery: into its base).
    async fn fill(&mut self, count: usize) {
        for key in distinct_keys(&mut self.rng, count) {
            let new = new_item(&mut self.rng, &key, "initial");
            self.put(new).await;
        }
    }

    /// Runs `operations` operations, taking a cut before the first and every
    /// 10 to 20 after: the cuts.
    async fn run(&mut self, operations: usize) -> Vec<Cut> {
        let mut cuts = vec![self.cut(0).await];
        let mut next_cut = self.rng.usize(10..=20);
        while self.done < operations {
            self.step().await;
            if self.done == next_cut {
                cuts.push(self.cut(cuts.len()).await);
                next_cut += self.rng.usize(10..=20);
            }
        }
        cuts
    }

    /// The server's now between the operations before it and those after.
    async fn cut(&self, number: usize) -> Cut {
        tokio::time::sleep(PAUSE).await;
        let latest = latest_restorable(self.client, self.table).await;
        tokio::time::sleep(PAUSE).await;
        Cut {
            number,
            after: self.done,
            millis: millis(&latest),
            model: self.model.clone(),
        }
    }

    /// One random operation, sent, checked and applied to the model.
    async fn step(&mut self) {
        let stamp = format!("op{}", self.done + 1);
        let rng = &mut self.rng;
        let described = match rng.u8(0..20) {
            0..=4 => {
                let key = random_key(rng);
                let new = new_item(rng, &key, &stamp);
                self.put(new).await
            }
            5..=10 => {
                let (key, change) = (random_key(rng), Change::random(rng));
                self.update(key, change, &stamp).await
            }
            11..=13 => {
                let key = random_key(rng);
                self.delete(key).await
            }
            14..=16 => {
                let count = rng.usize(2..=5);
                let keys = distinct_keys(rng, count);
                let actions = (keys.iter())
                    .map(|key| Action::random_batched(rng, key, &stamp))
                    .collect();
                self.batch(actions, &stamp).await
            }
            _ => {
                let actions = self.random_transaction(&stamp);
                self.transact(actions, &stamp).await
            }
        };
        self.done += 1;
        let at = local_millis();
        self.log.push(format!(
            "{stamp} acknowledged at {at} (test clock): {described}"
        ));
    }

    /// Two or three actions on different keys; one in four transactions has
    /// a ConditionCheck that the model says may fail.
    fn random_transaction(&mut self, stamp: &str) -> Vec<Action> {
        let rng = &mut self.rng;
        let count = rng.usize(2..=3);
        let keys = distinct_keys(rng, count);
        let mut actions: Vec<Action> = (keys.iter())
            .map(|key| Action::random(rng, key, stamp))
            .collect();
        if rng.u8(0..4) == 0 {
            *actions.last_mut().unwrap() = Action::Check(keys.last().unwrap().clone());
        }
        actions
    }

    async fn put(&mut self, new: Item) -> String {
        (self.client.put_item())
            .table_name(self.table)
            .set_item(Some(new.clone()))
            .send()
            .await
            .expect("PutItem succeeds");
        let described = format!("PutItem {}", show(Some(&new)));
        self.model.insert(key_of(&new), new);
        described
    }

    /// UpdateItem, whose ALL_NEW answer must be the model's item (else the
    /// model, not recovery, is wrong).
    async fn update(&mut self, key: Key, change: Change, stamp: &str) -> String {
        let mut request = (self.client.update_item())
            .table_name(self.table)
            .set_key(Some(key_item(&key)))
            .update_expression(change.expression())
            .return_values(ReturnValue::AllNew);
        for (name, value) in change.values(stamp) {
            request = request.expression_attribute_values(name, value);
        }
        let out = request.send().await.expect("UpdateItem succeeds");
        change.apply(&mut self.model, &key, stamp);
        assert_eq!(
            out.attributes(),
            self.model.get(&key),
            "UpdateItem {key:?} {change:?}: ALL_NEW is not the model's item"
        );
        format!("UpdateItem {key:?} {change:?}")
    }

    async fn delete(&mut self, key: Key) -> String {
        (self.client.delete_item())
            .table_name(self.table)
            .set_key(Some(key_item(&key)))
            .send()
            .await
            .expect("DeleteItem succeeds");
        let had = self.model.remove(&key).is_some();
        format!("DeleteItem {key:?} (there: {had})")
    }

    async fn batch(&mut self, actions: Vec<Action>, stamp: &str) -> String {
        let requests = actions.iter().map(Action::write_request).collect();
        let out = (self.client.batch_write_item())
            .request_items(self.table, requests)
            .send()
            .await
            .expect("BatchWriteItem succeeds");
        let unprocessed = out.unprocessed_items().unwrap_or(&HashMap::new()).clone();
        assert!(unprocessed.is_empty(), "unprocessed: {unprocessed:?}");
        for action in &actions {
            action.apply(&mut self.model, stamp);
        }
        format!("BatchWriteItem {}", show_actions(&actions))
    }

    /// TransactWriteItems: it commits exactly when every ConditionCheck's
    /// item is in the model.
    async fn transact(&mut self, actions: Vec<Action>, stamp: &str) -> String {
        let expected = actions.iter().all(|action| match action {
            Action::Check(key) => self.model.contains_key(key),
            _ => true,
        });
        let items = (actions.iter())
            .map(|action| action.transact_item(self.table, stamp))
            .collect();
        let sent = (self.client.transact_write_items())
            .set_transact_items(Some(items))
            .send()
            .await;
        let committed = sent.is_ok();
        if !committed {
            let (_, reasons) = txn::canceled(sent);
            let codes = txn::codes(&reasons);
            assert!(codes.contains(&"ConditionalCheckFailed"), "{codes:?}");
        }
        assert_eq!(committed, expected, "{}", show_actions(&actions));
        if committed {
            for action in &actions {
                action.apply(&mut self.model, stamp);
            }
        }
        let outcome = if committed { "committed" } else { "cancelled" };
        format!("TransactWriteItems {outcome} {}", show_actions(&actions))
    }
}

/// An item compactly, attributes in name order: `{g: "g1", sk: 3, …}`.
fn show(item: Option<&Item>) -> String {
    let Some(item) = item else {
        return "(none)".into();
    };
    let sorted: BTreeMap<&String, &AttributeValue> = item.iter().collect();
    let shown: Vec<String> = (sorted.into_iter())
        .map(|(name, value)| match value {
            AttributeValue::S(v) => format!("{name}: {v:?}"),
            AttributeValue::N(v) => format!("{name}: {v}"),
            other => format!("{name}: {other:?}"),
        })
        .collect();
    format!("{{{}}}", shown.join(", "))
}

fn show_actions(actions: &[Action]) -> String {
    let shown: Vec<String> = (actions.iter())
        .map(|action| match action {
            Action::Put(new) => format!("Put {}", show(Some(new))),
            other => format!("{other:?}"),
        })
        .collect();
    shown.join("; ")
}

async fn create_table(client: &Client) -> String {
    let name = util::unique_name("pitr-model");
    let all = Projection::builder()
        .projection_type(ProjectionType::All)
        .build();
    let gsi = GlobalSecondaryIndex::builder()
        .index_name(INDEX)
        .key_schema(key("g", KeyType::Hash))
        .projection(all)
        .build()
        .unwrap();
    client
        .create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("pk", KeyType::Hash))
        .key_schema(key("sk", KeyType::Range))
        .attribute_definitions(attr_def("pk", T::S))
        .attribute_definitions(attr_def("sk", T::N))
        .attribute_definitions(attr_def("g", T::S))
        .global_secondary_indexes(gsi)
        .send()
        .await
        .expect("CreateTable succeeds");
    name
}

async fn enable_recovery(client: &Client, table: &str) {
    let enabled = PointInTimeRecoverySpecification::builder()
        .point_in_time_recovery_enabled(true)
        .build()
        .unwrap();
    client
        .update_continuous_backups()
        .table_name(table)
        .point_in_time_recovery_specification(enabled)
        .send()
        .await
        .expect("UpdateContinuousBackups succeeds");
}

/// The server's now: LatestRestorableDateTime.
async fn latest_restorable(client: &Client, table: &str) -> DateTime {
    let described = client
        .describe_continuous_backups()
        .table_name(table)
        .send()
        .await
        .expect("DescribeContinuousBackups succeeds");
    let recovery = (described.continuous_backups_description)
        .and_then(|d| d.point_in_time_recovery_description)
        .expect("PointInTimeRecoveryDescription");
    recovery
        .latest_restorable_date_time
        .expect("LatestRestorableDateTime")
}

/// Starts the restore of `source` as it was at `millis` into a new table:
/// its name.
async fn restore(client: &Client, source: &str, millis: i64) -> String {
    let target = util::unique_name("pitr-model-restored");
    client
        .restore_table_to_point_in_time()
        .source_table_name(source)
        .target_table_name(&target)
        .restore_date_time(DateTime::from_millis(millis))
        .send()
        .await
        .expect("RestoreTableToPointInTime succeeds");
    target
}

/// Polls DescribeTable until the table is ACTIVE.
async fn wait_active(client: &Client, table: &str) -> TableDescription {
    util::poll_until(
        "the restored table to be ACTIVE",
        WAIT,
        move || async move {
            let described = (client.describe_table().table_name(table).send().await)
                .expect("DescribeTable succeeds")
                .table
                .expect("Table");
            (described.table_status() == Some(&TableStatus::Active)).then_some(described)
        },
    )
    .await
}

/// Every item of `table` whose `g` is `group`, by Query of its index.
async fn query_group(client: &Client, table: &str, group: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = client
            .query()
            .table_name(table)
            .index_name(INDEX)
            .key_condition_expression("g = :g")
            .expression_attribute_values(":g", s(group))
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("Query of the index succeeds");
        items.extend(out.items().iter().cloned());
        start = out.last_evaluated_key().cloned();
        if start.is_none() {
            return items;
        }
    }
}

/// Items by key; a key found twice is a difference too.
fn to_model(items: Vec<Item>) -> Result<Model, String> {
    let mut model = Model::new();
    for found in items {
        if let Some(twice) = model.insert(key_of(&found), found) {
            return Err(format!("{} found twice", show(Some(&twice))));
        }
    }
    Ok(model)
}

/// The model's items whose `g` is `group`.
fn in_group(model: &Model, group: &str) -> Model {
    (model.iter())
        .filter(|(_, it)| it.get("g") == Some(&s(group)))
        .map(|(key, it)| (key.clone(), it.clone()))
        .collect()
}

/// The first key (in key order) whose item differs, and how many do.
fn first_difference(expected: &Model, found: &Model) -> Option<String> {
    let mut keys: Vec<&Key> = expected.keys().chain(found.keys()).collect();
    keys.sort();
    keys.dedup();
    let differing: Vec<&Key> = (keys.into_iter())
        .filter(|key| expected.get(*key) != found.get(*key))
        .collect();
    let first = differing.first()?;
    Some(format!(
        "{} of {} keys differ; first {first:?}: the model has {}, the restore {}",
        differing.len(),
        expected.len().max(found.len()),
        show(expected.get(*first)),
        show(found.get(*first)),
    ))
}

/// Restores `source` at the cut and compares the restored table with the
/// cut's model: a description of the first difference, if any.
async fn check_restore(client: Client, source: String, cut: Cut) -> Result<(), String> {
    let failed = |what: &str, difference: String| {
        format!(
            "cut {} (after op{}, RestoreDateTime {} ms): {what}: {difference}",
            cut.number, cut.after, cut.millis
        )
    };
    let target = restore(&client, &source, cut.millis).await;
    let active = wait_active(&client, &target).await;
    let scanned = to_model(util::scan_all(&client, &target, None).await);
    let scanned = scanned.map_err(|twice| failed("Scan", twice))?;
    if let Some(difference) = first_difference(&cut.model, &scanned) {
        return Err(failed("Scan", difference));
    }
    for group in (0..GROUPS).map(|g| format!("g{g}")) {
        let found = to_model(query_group(&client, &target, &group).await);
        let found = found.map_err(|twice| failed(&format!("Query {group}"), twice))?;
        if let Some(difference) = first_difference(&in_group(&cut.model, &group), &found) {
            return Err(failed(&format!("Query of {INDEX} for {group}"), difference));
        }
    }
    let expected = Some(cut.model.len() as i64);
    if active.item_count() != expected {
        let counts = format!("{:?}, the model {expected:?}", active.item_count());
        return Err(failed("ItemCount", counts));
    }
    Ok(())
}

/// The failures, each with the operations on either side of its cut.
fn report(failures: &[(usize, String)], log: &[String]) -> String {
    let mut report = format!("{} restores differ from the model:\n", failures.len());
    for (after, failure) in failures {
        report += &format!("{failure}\n  operations around the cut:\n");
        for line in &log[after.saturating_sub(3)..*after] {
            report += &format!("    {line}\n");
        }
        report += "    -- the cut --\n";
        for line in &log[*after..(after + 2).min(log.len())] {
            report += &format!("    {line}\n");
        }
    }
    report
}

#[tokio::test]
async fn twenty_restores_at_random_instants_of_a_seeded_history_each_hold_the_model_of_that_instant(
) {
    let started = std::time::Instant::now();
    let seed = seed();
    let client = util::client();
    let table = create_table(&client).await;
    let mut history = History {
        client: &client,
        table: &table,
        rng: Rng::with_seed(seed),
        model: Model::new(),
        done: 0,
        log: Vec::new(),
    };
    history.fill(INITIAL_ITEMS).await;
    enable_recovery(&client, &table).await;
    let cuts = history.run(OPERATIONS).await;
    let cut_count = cuts.len();
    assert!(cut_count >= RESTORES, "only {cut_count} cuts");
    let written = started.elapsed();

    let mut chosen = history.rng.choose_multiple(cuts, RESTORES);
    chosen.sort_by_key(|cut| cut.number);
    let checks: Vec<_> = (chosen.into_iter())
        .map(|cut| {
            let after = cut.after;
            let check = check_restore(client.clone(), table.clone(), cut);
            (after, tokio::spawn(check))
        })
        .collect();
    let mut failures = Vec::new();
    for (after, check) in checks {
        if let Err(failure) = check.await.expect("the restore's check does not panic") {
            failures.push((after, failure));
        }
    }
    println!(
        "seed {seed}: {OPERATIONS} operations and {cut_count} cuts in {written:?}; \
         {RESTORES} restores checked, {:?} in all",
        started.elapsed()
    );
    assert!(failures.is_empty(), "{}", report(&failures, &history.log));
}
