//! Uniqueness constraints against a spawned Ferrodyn, following the seeds'
//! sign-up story: accounts with a unique e-mail and username.

use super::{client, create_table, get, obj, unique_name};
use ferrodyn_patterns::unique::locks::LocksOptions;
use ferrodyn_patterns::unique::{
    self, Constraint, MarkerLayout, MarkerStatus, UniqueError, UniqueSpec,
};
use serde_json::{json, Map, Value};

fn accounts(api: &ferrodyn_client::Client) -> Constraint {
    accounts_in(api, MarkerLayout::PerValue)
}

fn accounts_in(api: &ferrodyn_client::Client, layout: MarkerLayout) -> Constraint {
    let table = unique_name("accounts");
    create_table(api, &table, "PK", Some("SK"));
    load(api, table, layout)
}

fn load(api: &ferrodyn_client::Client, table: String, layout: MarkerLayout) -> Constraint {
    Constraint::load(
        api,
        UniqueSpec {
            table,
            entity: "account".into(),
            attributes: vec!["email".into(), "username".into()],
            layout,
        },
    )
    .unwrap()
}

fn account(id: &str, email: &str, username: &str) -> Map<String, Value> {
    obj(json!({
        "PK": {"S": format!("ACCT#{id}")},
        "SK": {"S": "PROFILE"},
        "email": {"S": email},
        "username": {"S": username}
    }))
}

fn key(id: &str) -> Map<String, Value> {
    obj(json!({"PK": {"S": format!("ACCT#{id}")}, "SK": {"S": "PROFILE"}}))
}

fn marker(c: &Constraint, attr: &str, value: &str) -> Option<Map<String, Value>> {
    get(
        client_ref(),
        &c.spec.table,
        Value::Object(c.marker_key(attr, &json!({"S": value})).unwrap()),
    )
}

fn client_ref() -> &'static ferrodyn_client::Client {
    static C: std::sync::OnceLock<ferrodyn_client::Client> = std::sync::OnceLock::new();
    C.get_or_init(client)
}

#[test]
fn sign_up_writes_the_account_and_both_markers_and_a_taken_email_fails_at_its_position() {
    let api = client_ref();
    let c = accounts(api);
    unique::create(api, &c, account("a1f9c3", "ada@lovelace.io", "ada")).unwrap();
    assert!(get(api, &c.spec.table, Value::Object(key("a1f9c3"))).is_some());
    let m = marker(&c, "email", "ada@lovelace.io").expect("email marker");
    assert_eq!(m["uniq_owner"], json!({"M": key("a1f9c3")}));
    assert!(marker(&c, "username", "ada").is_some());

    // Same e-mail, new username: the e-mail marker (action 2) refuses.
    let err = unique::create(api, &c, account("b2", "ada@lovelace.io", "countess")).unwrap_err();
    let UniqueError::Rejected { failures, taken } = &err else {
        panic!("{err}")
    };
    assert_eq!(taken, &vec!["email".to_string()]);
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].position, 1);
    assert_eq!(
        failures[0].to_string(),
        "action 2 (email marker UNIQ#EMAIL#ada@lovelace.io): ConditionalCheckFailed — email \"ada@lovelace.io\" is already taken"
    );
    // Nothing of the failed sign-up was written.
    assert!(get(api, &c.spec.table, Value::Object(key("b2"))).is_none());
    assert!(marker(&c, "username", "countess").is_none());

    // Same username only: action 3.
    let err = unique::create(api, &c, account("b3", "other@x.io", "ada")).unwrap_err();
    let UniqueError::Rejected { failures, taken } = &err else {
        panic!("{err}")
    };
    assert_eq!(taken, &vec!["username".to_string()]);
    assert_eq!(failures[0].position, 2);
}

#[test]
fn changing_an_email_moves_its_marker_and_deleting_the_account_frees_both_values() {
    let api = client_ref();
    let c = accounts(api);
    unique::create(api, &c, account("1", "ada@lovelace.io", "ada")).unwrap();
    unique::create(api, &c, account("2", "bob@example.com", "bob")).unwrap();

    let set = obj(json!({"email": {"S": "ada@analytical.engine"}}));
    unique::change(api, &c, key("1"), set, &[]).unwrap();
    assert!(
        marker(&c, "email", "ada@lovelace.io").is_none(),
        "old marker removed"
    );
    assert!(
        marker(&c, "email", "ada@analytical.engine").is_some(),
        "new marker put"
    );

    // Bob may not take Ada's new address; nothing changes.
    let set = obj(json!({"email": {"S": "ada@analytical.engine"}}));
    let err = unique::change(api, &c, key("2"), set, &[]).unwrap_err();
    let UniqueError::Rejected { taken, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(taken, &vec!["email".to_string()]);
    let bob = get(api, &c.spec.table, Value::Object(key("2"))).unwrap();
    assert_eq!(bob["email"], json!({"S": "bob@example.com"}));
    // ...but he may take the address Ada gave up.
    unique::change(
        api,
        &c,
        key("2"),
        obj(json!({"email": {"S": "ada@lovelace.io"}})),
        &[],
    )
    .unwrap();

    unique::delete(api, &c, key("1")).unwrap();
    assert!(get(api, &c.spec.table, Value::Object(key("1"))).is_none());
    assert!(marker(&c, "email", "ada@analytical.engine").is_none());
    assert!(marker(&c, "username", "ada").is_none());
    // The freed username can be claimed again.
    unique::create(api, &c, account("3", "new@x.io", "ada")).unwrap();

    let report = unique::locks(api, &c, &LocksOptions::default()).unwrap();
    assert!(report.is_healthy(), "{report}");
    assert_eq!(report.markers.len(), 4);
}

#[test]
fn locks_finds_an_orphan_left_by_a_direct_delete_and_repair_removes_it() {
    for layout in [MarkerLayout::PerValue, MarkerLayout::Grouped] {
        orphans_are_found_and_repaired(&accounts_in(client_ref(), layout));
    }
}

fn orphans_are_found_and_repaired(c: &Constraint) {
    let api = client_ref();
    unique::create(api, c, account("1", "ada@lovelace.io", "ada")).unwrap();
    unique::create(api, c, account("2", "bob@example.com", "bob")).unwrap();
    // A careless script deletes the account without its markers...
    api.call(
        "DeleteItem",
        &json!({"TableName": c.spec.table, "Key": key("1")}),
    )
    .unwrap();
    // ...and another puts Bob's profile without a username marker.
    let mut bob = account("2", "bob@example.com", "bobby");
    bob.insert("note".into(), json!({"S": "edited by hand"}));
    api.call("PutItem", &json!({"TableName": c.spec.table, "Item": bob}))
        .unwrap();

    let report = unique::locks(api, c, &LocksOptions::default()).unwrap();
    let text = report.to_string();
    let orphans: Vec<&str> = report
        .problems()
        .filter(|m| m.status == MarkerStatus::Orphan)
        .map(|m| m.name.as_str())
        .collect();
    let name = |attr: &str, value: &str| c.marker_name(attr, &json!({"S": value})).unwrap();
    assert_eq!(
        orphans,
        vec![name("email", "ada@lovelace.io"), name("username", "ada")],
        "{text}"
    );
    let stale: Vec<&str> = report
        .problems()
        .filter(|m| matches!(m.status, MarkerStatus::Stale { .. }))
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(stale, vec![name("username", "bob")]);
    assert_eq!(report.missing.len(), 1, "{text}");
    assert_eq!(report.missing[0].attribute, "username");

    // Without the owners listed, no marker can be proved unused: only the
    // missing marker is added.
    let repaired = unique::repair(api, c, &report).unwrap();
    assert_eq!(repaired.fixed.len(), 1, "{repaired}");
    assert_eq!(repaired.skipped.len(), 3, "{repaired}");
    assert!(
        marker(c, "email", "ada@lovelace.io").is_some(),
        "kept without proof"
    );
    let scanned = LocksOptions {
        scan_owners: Some("ACCT#".into()),
        ..LocksOptions::default()
    };
    let report = unique::locks(api, c, &scanned).unwrap();
    let repaired = unique::repair(api, c, &report).unwrap();
    assert_eq!(repaired.fixed.len(), 3, "{repaired}");
    let after = unique::locks(api, c, &LocksOptions::default()).unwrap();
    assert!(after.is_healthy(), "{after}");
    assert!(marker(c, "username", "bobby").is_some());
    // The freed e-mail can be used again.
    unique::create(api, c, account("4", "ada@lovelace.io", "ada")).unwrap();
}

#[test]
fn an_owner_without_any_marker_is_found_only_by_the_owner_scan() {
    let api = client_ref();
    let c = accounts(api);
    unique::create(api, &c, account("1", "ada@lovelace.io", "ada")).unwrap();
    api.call(
        "PutItem",
        &json!({"TableName": c.spec.table, "Item": account("9", "eve@x.io", "eve")}),
    )
    .unwrap();
    let report = unique::locks(api, &c, &LocksOptions::default()).unwrap();
    assert!(report.is_healthy(), "Query alone cannot see it: {report}");
    let options = LocksOptions {
        scan_owners: Some("ACCT#".into()),
        ..LocksOptions::default()
    };
    let report = unique::locks(api, &c, &options).unwrap();
    assert_eq!(report.missing.len(), 2, "{report}");
    unique::repair(api, &c, &report).unwrap();
    assert!(unique::locks(api, &c, &options).unwrap().is_healthy());
}

#[test]
fn per_value_markers_are_the_seeds_items_and_are_listed_by_scan_without_an_index() {
    let api = client_ref();
    let c = accounts(api);
    unique::create(api, &c, account("1", "ada@lovelace.io", "ada")).unwrap();
    let m = get(
        api,
        &c.spec.table,
        json!({"PK": {"S": "UNIQ#EMAIL#ada@lovelace.io"}, "SK": {"S": "LOCK"}}),
    )
    .expect("the seed's marker item");
    assert_eq!(m["uniq_attr"], json!({"S": "EMAIL"}));
    let report = unique::locks(api, &c, &LocksOptions::default()).unwrap();
    assert!(report.is_healthy(), "{report}");
    assert_eq!(report.markers.len(), 2);
    assert!(
        report.to_string().contains("markers read by Scan of table"),
        "{report}"
    );
}

#[test]
fn a_sparse_index_on_uniq_attr_lists_per_value_markers_by_query() {
    let api = client_ref();
    let table = unique_name("indexed");
    api.call(
        "CreateTable",
        &json!({
            "TableName": table,
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [
                {"AttributeName": "PK", "AttributeType": "S"},
                {"AttributeName": "SK", "AttributeType": "S"},
                {"AttributeName": "uniq_attr", "AttributeType": "S"}
            ],
            "KeySchema": [
                {"AttributeName": "PK", "KeyType": "HASH"},
                {"AttributeName": "SK", "KeyType": "RANGE"}
            ],
            "GlobalSecondaryIndexes": [{
                "IndexName": "markers",
                "KeySchema": [{"AttributeName": "uniq_attr", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}
            }]
        }),
    )
    .unwrap();
    let c = load(api, table, MarkerLayout::PerValue);
    assert_eq!(c.marker_index.as_deref(), Some("markers"));
    unique::create(api, &c, account("1", "ada@lovelace.io", "ada")).unwrap();
    unique::create(api, &c, account("2", "bob@example.com", "bob")).unwrap();
    let options = LocksOptions {
        value_prefix: Some("ada".into()),
        ..LocksOptions::default()
    };
    let report = unique::locks(api, &c, &options).unwrap();
    assert!(report.is_healthy(), "{report}");
    let names: Vec<&str> = report.markers.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["UNIQ#EMAIL#ada@lovelace.io", "UNIQ#USERNAME#ada"]
    );
    assert!(report.to_string().contains("Query of sparse index markers"));
}

#[test]
fn per_value_markers_need_no_sort_key() {
    let api = client_ref();
    let table = unique_name("hashonly");
    create_table(api, &table, "PK", None);
    let c = load(api, table, MarkerLayout::PerValue);
    let item = obj(json!({"PK": {"S": "ACCT#1"}, "email": {"S": "a@b.c"}, "username": {"S": "a"}}));
    unique::create(api, &c, item).unwrap();
    let item = obj(json!({"PK": {"S": "ACCT#2"}, "email": {"S": "a@b.c"}, "username": {"S": "b"}}));
    assert!(unique::create(api, &c, item).is_err());
    assert!(get(api, &c.spec.table, json!({"PK": {"S": "UNIQ#EMAIL#a@b.c"}})).is_some());
}

/// A marker written by other code (its owner in `owner`, not `uniq_owner`)
/// beside the owner that holds the value: reported as unreadable and left
/// alone by every repair, its attributes untouched.
#[test]
fn a_marker_repair_cannot_read_is_reported_and_never_deleted() {
    let api = client_ref();
    let c = accounts(api);
    let owner = account("1", "o1@example.com", "o1");
    api.call(
        "PutItem",
        &json!({"TableName": c.spec.table, "Item": owner}),
    )
    .unwrap();
    let theirs = json!({
        "PK": {"S": "UNIQ#EMAIL#o1@example.com"}, "SK": {"S": "LOCK"},
        "uniq_attr": {"S": "EMAIL"}, "uniq_value": {"S": "o1@example.com"},
        "owner": {"M": key("1")},
    });
    api.call(
        "PutItem",
        &json!({"TableName": c.spec.table, "Item": theirs}),
    )
    .unwrap();
    for scan_owners in [None, Some("ACCT#".to_string())] {
        let options = LocksOptions {
            scan_owners,
            ..LocksOptions::default()
        };
        let report = unique::locks(api, &c, &options).unwrap();
        let found = report
            .markers
            .iter()
            .find(|m| m.attribute == "email")
            .unwrap();
        assert!(
            matches!(&found.status, MarkerStatus::Unreadable { why } if why.contains("uniq_owner")),
            "{report}"
        );
        assert!(report.to_string().contains("UNREADABLE"), "{report}");
        let repaired = unique::repair(api, &c, &report).unwrap();
        assert!(
            repaired.skipped.iter().any(|s| s.contains("left alone")),
            "{repaired}"
        );
        let kept = marker(&c, "email", "o1@example.com").expect("the marker stays");
        assert_eq!(
            kept["owner"],
            json!({"M": key("1")}),
            "its attributes are kept"
        );
    }
}

/// An orphaned marker whose value another account now holds (without a
/// marker of its own) is handed to that account in one transaction, in
/// place: the value is never unprotected and the marker keeps its other
/// attributes.
#[test]
fn a_marker_whose_value_another_owner_holds_is_handed_over_in_place() {
    let api = client_ref();
    let c = accounts(api);
    unique::create(api, &c, account("1", "shared@example.com", "one")).unwrap();
    let name = c
        .marker_name("email", &json!({"S": "shared@example.com"}))
        .unwrap();
    api.call(
        "UpdateItem",
        &json!({"TableName": c.spec.table,
                "Key": c.marker_key("email", &json!({"S": "shared@example.com"})).unwrap(),
                "UpdateExpression": "SET note = :n",
                "ExpressionAttributeValues": {":n": {"S": "written by the sign-up service"}}}),
    )
    .unwrap();
    // A script deletes account 1 and writes account 2 with the same e-mail,
    // bypassing the constraint.
    api.call(
        "DeleteItem",
        &json!({"TableName": c.spec.table, "Key": key("1")}),
    )
    .unwrap();
    let two = account("2", "shared@example.com", "two");
    api.call("PutItem", &json!({"TableName": c.spec.table, "Item": two}))
        .unwrap();
    let options = LocksOptions {
        scan_owners: Some("ACCT#".into()),
        ..LocksOptions::default()
    };
    let report = unique::locks(api, &c, &options).unwrap();
    let email = report.markers.iter().find(|m| m.name == name).unwrap();
    assert_eq!(email.status, MarkerStatus::Orphan, "{report}");
    assert_eq!(email.claimant.as_ref(), Some(&key("2")), "{report}");
    let repaired = unique::repair(api, &c, &report).unwrap();
    let handed: Vec<&String> = repaired
        .fixed
        .iter()
        .filter(|f| f.starts_with("hand email"))
        .collect();
    assert_eq!(handed.len(), 1, "{repaired}");
    assert!(
        !repaired
            .fixed
            .iter()
            .any(|f| f.contains("remove email") || f.contains("add email")),
        "no delete and re-add: {repaired}"
    );
    let kept = marker(&c, "email", "shared@example.com").unwrap();
    assert_eq!(kept["uniq_owner"], json!({"M": key("2")}));
    assert_eq!(kept["note"], json!({"S": "written by the sign-up service"}));
    assert!(unique::locks(api, &c, &options).unwrap().is_healthy());
}
