//! Staged edits against a spawned Ferrodyn: commit, diff, a cancelled commit
//! reported per change, idempotent retries and the atomicity limit.

use super::{client, create_table, get, obj, unique_name};
use ferrodyn_patterns::stage::{self, StageError, StageFile};
use serde_json::json;

#[test]
fn a_stage_commits_all_its_changes_in_one_transaction() {
    let api = client();
    let table = unique_name("users");
    create_table(&api, &table, "pk", None);
    api.call("PutItem", &json!({"TableName": table, "Item": {"pk":{"S":"u1"},"status":{"S":"new"},"visits":{"N":"1"}}})).unwrap();
    api.call(
        "PutItem",
        &json!({"TableName": table, "Item": {"pk":{"S":"u3"}}}),
    )
    .unwrap();

    let mut s = StageFile::default();
    stage::stage_put(
        &api,
        &mut s,
        &table,
        obj(json!({"pk":{"S":"u2"},"name":{"S":"Ada"}})),
    )
    .unwrap();
    let set = obj(json!({"status":{"S":"active"}}));
    stage::stage_update(
        &api,
        &mut s,
        &table,
        obj(json!({"pk":{"S":"u1"}})),
        set,
        &["visits".to_string()],
    )
    .unwrap();
    stage::stage_delete(&api, &mut s, &table, obj(json!({"pk":{"S":"u3"}}))).unwrap();

    let diffs = stage::diff(&api, &s).unwrap();
    let text: Vec<String> = diffs.iter().map(ToString::to_string).collect();
    assert_eq!(
        text[0],
        format!("change 1 (put {table}/u2)\n    + name: \"Ada\"\n    + pk: \"u2\"\n")
    );
    assert_eq!(
        text[1],
        format!(
            "change 2 (update {table}/u1)\n    ~ status: \"new\" → \"active\"\n    - visits: 1\n"
        )
    );
    assert!(diffs.iter().all(|d| d.drift.is_empty()));

    let report = stage::commit(&api, &s, false).unwrap();
    assert_eq!((report.changes, report.transactions), (3, 1));
    assert!(get(&api, &table, json!({"pk":{"S":"u2"}})).is_some());
    let u1 = get(&api, &table, json!({"pk":{"S":"u1"}})).unwrap();
    assert_eq!(u1["status"], json!({"S":"active"}));
    assert!(!u1.contains_key("visits"));
    assert!(get(&api, &table, json!({"pk":{"S":"u3"}})).is_none());

    // The answer was "lost": committing the same stage again within the
    // idempotency window is recognised by its token and writes nothing.
    api.call(
        "PutItem",
        &json!({"TableName": table, "Item": {"pk":{"S":"u3"},"back":{"BOOL":true}}}),
    )
    .unwrap();
    stage::commit(&api, &s, false).expect("a retried commit succeeds idempotently");
    assert!(
        get(&api, &table, json!({"pk":{"S":"u3"}})).is_some(),
        "the delete was not applied twice"
    );
}

#[test]
fn a_cancelled_commit_names_the_staged_change_that_failed_and_why() {
    let api = client();
    let table = unique_name("users");
    create_table(&api, &table, "pk", None);
    api.call(
        "PutItem",
        &json!({"TableName": table, "Item": {"pk":{"S":"u1"},"status":{"S":"new"}}}),
    )
    .unwrap();

    let mut s = StageFile::default();
    stage::stage_put(&api, &mut s, &table, obj(json!({"pk":{"S":"u0"}}))).unwrap();
    stage::stage_update(
        &api,
        &mut s,
        &table,
        obj(json!({"pk":{"S":"u1"}})),
        obj(json!({"status":{"S":"active"}})),
        &[],
    )
    .unwrap();
    stage::stage_put(&api, &mut s, &table, obj(json!({"pk":{"S":"u9"}}))).unwrap();

    // Someone else changes u1 and creates u9 after they were staged.
    api.call(
        "PutItem",
        &json!({"TableName": table, "Item": {"pk":{"S":"u1"},"status":{"S":"closed"}}}),
    )
    .unwrap();
    api.call(
        "PutItem",
        &json!({"TableName": table, "Item": {"pk":{"S":"u9"}}}),
    )
    .unwrap();

    let diffs = stage::diff(&api, &s).unwrap();
    assert!(diffs[1].to_string().contains("changed since staged"));
    assert!(diffs[2].existence_drift.is_some());

    let err = stage::commit(&api, &s, false).unwrap_err();
    let StageError::Cancelled {
        failures,
        committed_changes,
    } = &err
    else {
        panic!("expected a cancellation, got {err}");
    };
    assert_eq!(*committed_changes, 0);
    let lines: Vec<String> = failures.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        vec![
            format!("change 2 (update {table}/u1): ConditionalCheckFailed — item changed since staged (~ status: \"new\" → \"closed\")"),
            format!("change 3 (put {table}/u9): ConditionalCheckFailed — item exists now but did not when staged"),
        ]
    );
    // All or nothing: change 1 was not written either.
    assert!(get(&api, &table, json!({"pk":{"S":"u0"}})).is_none());
}

#[test]
fn a_stage_too_large_for_one_transaction_is_refused_unless_split() {
    let api = client();
    let table = unique_name("bulk");
    create_table(&api, &table, "pk", None);
    let mut s = StageFile::default();
    for n in 0..101 {
        stage::stage_put(
            &api,
            &mut s,
            &table,
            obj(json!({"pk":{"S":format!("i{n}")}})),
        )
        .unwrap();
    }
    let err = stage::commit(&api, &s, false).unwrap_err();
    assert!(
        matches!(
            err,
            StageError::NotAtomic {
                changes: 101,
                transactions: 2
            }
        ),
        "{err}"
    );
    assert!(get(&api, &table, json!({"pk":{"S":"i0"}})).is_none());
    let report = stage::commit(&api, &s, true).unwrap();
    assert_eq!(report.transactions, 2);
    assert!(get(&api, &table, json!({"pk":{"S":"i100"}})).is_some());
}

#[test]
fn many_deletes_stage_from_batched_reads_and_keep_earlier_snapshots() {
    let api = client();
    let table = unique_name("many");
    create_table(&api, &table, "pk", None);
    for chunk in (0..250).collect::<Vec<_>>().chunks(25) {
        let puts: Vec<_> = chunk
            .iter()
            .map(|n| json!({"PutRequest": {"Item": {"pk":{"S":format!("i{n}")},"n":{"N":n.to_string()}}}}))
            .collect();
        api.call("BatchWriteItem", &json!({"RequestItems": {&table: puts}}))
            .unwrap();
    }
    let mut s = StageFile::default();
    // An earlier change keeps the snapshot it took, as one GetItem would.
    let set = obj(json!({"n":{"N":"-1"}}));
    stage::stage_update(
        &api,
        &mut s,
        &table,
        obj(json!({"pk":{"S":"i7"}})),
        set,
        &[],
    )
    .unwrap();
    let mut keys: Vec<_> = (0..250)
        .map(|n| obj(json!({"pk":{"S":format!("i{n}")}})))
        .collect();
    keys.push(obj(json!({"pk":{"S":"missing"}})));
    let numbers = stage::stage_deletes(&api, &mut s, &table, keys).unwrap();
    assert_eq!(numbers.len(), 251);
    assert_eq!(numbers[7], 1, "merged into the earlier change");
    assert_eq!(s.changes.len(), 251);
    for (n, change) in s.changes.iter().enumerate() {
        assert_eq!(change.op, stage::Op::Delete);
        let expected = match n {
            0 => Some(json!({"pk":{"S":"i7"},"n":{"N":"7"}})),
            250 => None,
            _ => {
                let i = if n <= 7 { n - 1 } else { n };
                Some(json!({"pk":{"S":format!("i{i}")},"n":{"N":i.to_string()}}))
            }
        };
        assert_eq!(
            change.before.clone().map(serde_json::Value::Object),
            expected,
            "change {n}"
        );
    }
    let report = stage::commit(&api, &s, true).unwrap();
    assert_eq!((report.changes, report.transactions), (251, 3));
    assert!(get(&api, &table, json!({"pk":{"S":"i249"}})).is_none());
}

#[test]
fn a_malformed_key_among_many_deletes_stages_none_of_them() {
    let api = client();
    let table = unique_name("many");
    create_table(&api, &table, "pk", None);
    let mut s = StageFile::default();
    let keys = vec![obj(json!({"pk":{"S":"a"}})), obj(json!({"id":{"S":"b"}}))];
    let err = stage::stage_deletes(&api, &mut s, &table, keys).unwrap_err();
    assert!(matches!(err, StageError::Invalid(_)), "{err}");
    assert!(s.changes.is_empty());
}

#[test]
fn an_attribute_lock_lets_an_unrelated_change_through_and_still_guards_its_own() {
    let api = client();
    let table = unique_name("locks");
    create_table(&api, &table, "pk", None);
    let put = |item: serde_json::Value| {
        api.call("PutItem", &json!({"TableName": table, "Item": item}))
            .unwrap();
    };
    put(json!({"pk":{"S":"u1"},"status":{"S":"new"},"visits":{"N":"1"}}));
    let status = |s: &mut StageFile, value: &str| {
        let set = obj(json!({"status":{"S":value}}));
        stage::stage_update(&api, s, &table, obj(json!({"pk":{"S":"u1"}})), set, &[]).unwrap();
    };
    let mut s = StageFile::default();
    status(&mut s, "active");
    // Someone else counts a visit.
    api.call("UpdateItem", &json!({"TableName": table, "Key": {"pk":{"S":"u1"}}, "UpdateExpression": "ADD visits :one", "ExpressionAttributeValues": {":one":{"N":"1"}}})).unwrap();
    assert_eq!(stage::diff(&api, &s).unwrap()[0].drift.len(), 1);
    let err = stage::commit(&api, &s, false).unwrap_err();
    assert!(
        matches!(err, StageError::Cancelled { .. }),
        "the whole-item lock: {err}"
    );
    s.lock = stage::LockScope::Attributes;
    assert!(
        stage::diff(&api, &s).unwrap()[0].drift.is_empty(),
        "visits is not locked"
    );
    stage::commit(&api, &s, false).unwrap();
    let u1 = get(&api, &table, json!({"pk":{"S":"u1"}})).unwrap();
    assert_eq!(u1["status"], json!({"S":"active"}));
    assert_eq!(
        u1["visits"],
        json!({"N":"2"}),
        "the other writer's change is kept"
    );
    // A change to the attribute the update writes still cancels it.
    let mut s = StageFile {
        lock: stage::LockScope::Attributes,
        ..StageFile::default()
    };
    status(&mut s, "closed");
    put(json!({"pk":{"S":"u1"},"status":{"S":"banned"},"visits":{"N":"2"}}));
    let err = stage::commit(&api, &s, false).unwrap_err();
    assert!(matches!(err, StageError::Cancelled { .. }), "{err}");
}
