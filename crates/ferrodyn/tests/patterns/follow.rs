//! Staged edits bring uniqueness markers along (`unique::follow`): an edit
//! of a unique value moves its marker in the same stage, a removed value or
//! deleted owner frees it, a taken value refuses the edit, and a marker that
//! does not name the edited item is reported and left alone; and the
//! constraint read off the markers (`unique::discover`).

use super::{client, create_table, get, obj, unique_name};
use ferrodyn_client::Client;
use ferrodyn_patterns::stage::{self, Op, StageFile};
use ferrodyn_patterns::unique::{self, follow, Constraint, MarkerLayout, UniqueError, UniqueSpec};
use serde_json::{json, Map, Value};

fn accounts(api: &Client, layout: MarkerLayout) -> Constraint {
    let table = unique_name("follow");
    create_table(api, &table, "PK", Some("SK"));
    let spec = UniqueSpec {
        table,
        entity: "account".into(),
        attributes: vec!["email".into()],
        layout,
    };
    let c = Constraint::load(api, spec).unwrap();
    for (id, email) in [("1", "ada@x.io"), ("2", "grace@x.io")] {
        let item = obj(
            json!({"PK":{"S":format!("ACCT#{id}")},"SK":{"S":"PROFILE"},"email":{"S":email},"name":{"S":id}}),
        );
        unique::create(api, &c, item).unwrap();
    }
    c
}

fn key(id: &str) -> Map<String, Value> {
    obj(json!({"PK":{"S":format!("ACCT#{id}")},"SK":{"S":"PROFILE"}}))
}

fn marker(api: &Client, c: &Constraint, email: &str) -> Option<Map<String, Value>> {
    get(
        api,
        &c.spec.table,
        Value::Object(c.marker_key("email", &json!({"S": email})).unwrap()),
    )
}

fn set_email(
    api: &Client,
    c: &Constraint,
    s: &mut StageFile,
    email: &str,
    entities: &[String],
) -> Result<follow::Followed, UniqueError> {
    let set = obj(json!({"email":{"S":email}}));
    let n = stage::stage_update(api, s, &c.spec.table, key("1"), set, &[]).unwrap();
    follow::follow_changes(api, s, &[n], entities)
}

fn ops(s: &StageFile) -> Vec<(Op, String)> {
    s.changes
        .iter()
        .map(|c| {
            (
                c.op,
                c.key
                    .values()
                    .map(|v| v["S"].as_str().unwrap_or("").to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
            )
        })
        .collect()
}

#[test]
fn an_edited_unique_value_moves_its_marker_in_the_same_commit() {
    let api = client();
    let c = accounts(&api, MarkerLayout::PerValue);
    let mut s = StageFile::default();
    let followed = set_email(&api, &c, &mut s, "ada@new.io", &[]).unwrap();
    assert_eq!(followed.moved.len(), 1, "{followed:?}");
    assert!(followed.warnings.is_empty(), "{followed:?}");
    assert_eq!(
        ops(&s),
        vec![
            (Op::Update, "ACCT#1/PROFILE".into()),
            (Op::Delete, "UNIQ#EMAIL#ada@x.io/LOCK".into()),
            (Op::Put, "UNIQ#EMAIL#ada@new.io/LOCK".into()),
        ]
    );
    // Editing again replaces the marker changes of the first edit.
    set_email(&api, &c, &mut s, "ada@third.io", &[]).unwrap();
    assert_eq!(
        ops(&s)[1..],
        [
            (Op::Delete, "UNIQ#EMAIL#ada@x.io/LOCK".into()),
            (Op::Put, "UNIQ#EMAIL#ada@third.io/LOCK".into())
        ]
    );
    let report = stage::commit(&api, &s, false).unwrap();
    assert_eq!(report.transactions, 1);
    assert!(marker(&api, &c, "ada@x.io").is_none());
    let moved = marker(&api, &c, "ada@third.io").expect("the new marker");
    assert_eq!(moved["uniq_owner"], json!({"M": key("1")}));
    assert_eq!(moved["uniq_value"], json!({"S": "ada@third.io"}));
    assert_eq!(moved["uniq_attr"], json!({"S": "EMAIL"}));
    let locks = unique::locks(&api, &c, &Default::default()).unwrap();
    assert!(locks.is_healthy(), "{locks:?}");
}

#[test]
fn an_edit_back_to_the_old_value_stages_no_marker_change() {
    let api = client();
    let c = accounts(&api, MarkerLayout::PerValue);
    let mut s = StageFile::default();
    set_email(&api, &c, &mut s, "ada@new.io", &[]).unwrap();
    set_email(&api, &c, &mut s, "ada@x.io", &[]).unwrap();
    assert_eq!(ops(&s), vec![(Op::Update, "ACCT#1/PROFILE".into())]);
}

#[test]
fn a_taken_value_refuses_the_edit_and_a_committed_race_cancels_it() {
    let api = client();
    let c = accounts(&api, MarkerLayout::PerValue);
    let mut s = StageFile::default();
    let err = set_email(&api, &c, &mut s, "grace@x.io", &[]).unwrap_err();
    assert!(
        err.to_string().contains("is taken") && err.to_string().contains("ACCT#2"),
        "{err}"
    );
    // Someone takes the new value between staging and commit.
    let mut s = StageFile::default();
    set_email(&api, &c, &mut s, "free@x.io", &[]).unwrap();
    let rival = obj(json!({"PK":{"S":"ACCT#3"},"SK":{"S":"PROFILE"},"email":{"S":"free@x.io"}}));
    unique::create(&api, &c, rival).unwrap();
    let err = stage::commit(&api, &s, false).unwrap_err();
    assert!(matches!(err, stage::StageError::Cancelled { .. }), "{err}");
    assert_eq!(
        get(&api, &c.spec.table, Value::Object(key("1"))).unwrap()["email"],
        json!({"S":"ada@x.io"})
    );
    assert!(
        marker(&api, &c, "ada@x.io").is_some(),
        "nothing of the edit was written"
    );
}

#[test]
fn removing_the_value_or_deleting_the_owner_frees_the_marker() {
    let api = client();
    let c = accounts(&api, MarkerLayout::PerValue);
    let mut s = StageFile::default();
    let n = stage::stage_update(
        &api,
        &mut s,
        &c.spec.table,
        key("1"),
        Map::new(),
        &["email".into()],
    )
    .unwrap();
    follow::follow_changes(&api, &mut s, &[n], &[]).unwrap();
    let numbers = stage::stage_deletes(&api, &mut s, &c.spec.table, vec![key("2")]).unwrap();
    follow::follow_changes(&api, &mut s, &numbers, &[]).unwrap();
    assert_eq!(
        ops(&s),
        vec![
            (Op::Update, "ACCT#1/PROFILE".into()),
            (Op::Delete, "UNIQ#EMAIL#ada@x.io/LOCK".into()),
            (Op::Delete, "ACCT#2/PROFILE".into()),
            (Op::Delete, "UNIQ#EMAIL#grace@x.io/LOCK".into()),
        ]
    );
    stage::commit(&api, &s, false).unwrap();
    assert!(marker(&api, &c, "ada@x.io").is_none() && marker(&api, &c, "grace@x.io").is_none());
}

#[test]
fn a_marker_naming_its_owner_otherwise_is_reported_and_left_alone() {
    let api = client();
    let table = unique_name("follow");
    create_table(&api, &table, "PK", Some("SK"));
    let owner = json!({"PK":{"S":"USER#1"},"SK":{"S":"PROFILE"},"email":{"S":"o1@example.com"}});
    api.call("PutItem", &json!({"TableName": table, "Item": owner}))
        .unwrap();
    let lock =
        json!({"PK":{"S":"UNIQ#EMAIL#o1@example.com"},"SK":{"S":"LOCK"},"owner":{"S":"USER#1"}});
    api.call("PutItem", &json!({"TableName": table, "Item": lock}))
        .unwrap();
    let mut s = StageFile::default();
    let user = obj(json!({"PK":{"S":"USER#1"},"SK":{"S":"PROFILE"}}));
    let n = stage::stage_update(
        &api,
        &mut s,
        &table,
        user,
        obj(json!({"email":{"S":"o2@example.com"}})),
        &[],
    )
    .unwrap();
    let followed = follow::follow_changes(&api, &mut s, &[n], &[]).unwrap();
    assert!(followed.moved.is_empty());
    assert_eq!(followed.warnings.len(), 1, "{followed:?}");
    assert!(
        followed.warnings[0].contains("does not name this item as its owner"),
        "{followed:?}"
    );
    assert_eq!(s.changes.len(), 1);
}

#[test]
fn grouped_markers_follow_for_the_named_entity() {
    let api = client();
    let c = accounts(&api, MarkerLayout::Grouped);
    let mut s = StageFile::default();
    let followed = set_email(&api, &c, &mut s, "ada@new.io", &[]).unwrap();
    assert!(
        followed.moved.is_empty(),
        "without the entity the grouped marker is not found"
    );
    let followed = set_email(&api, &c, &mut s, "ada@new.io", &["account".into()]).unwrap();
    assert_eq!(followed.moved.len(), 1, "{followed:?}");
    stage::commit(&api, &s, false).unwrap();
    assert!(marker(&api, &c, "ada@x.io").is_none());
    assert!(marker(&api, &c, "ada@new.io").is_some());
    let locks = unique::locks(&api, &c, &Default::default()).unwrap();
    assert!(locks.is_healthy(), "{locks:?}");
}

#[test]
fn discovery_reads_the_constraint_off_the_markers() {
    let api = client();
    let c = accounts(&api, MarkerLayout::PerValue);
    let found = unique::discover::discover(&api, &c.spec.table).unwrap();
    assert_eq!(found.layout, MarkerLayout::PerValue);
    assert_eq!(found.attributes, vec!["email".to_string()]);
    assert_eq!(found.owner_prefix.as_deref(), Some("ACCT#"));
    assert_eq!((found.markers, found.complete), (2, true));
    let g = accounts(&api, MarkerLayout::Grouped);
    let found = unique::discover::discover(&api, &g.spec.table).unwrap();
    assert_eq!(found.layout, MarkerLayout::Grouped);
    assert_eq!(found.entity.as_deref(), Some("account"));
    assert_eq!(found.attributes, vec!["email".to_string()]);
    let empty = unique_name("nomarkers");
    create_table(&api, &empty, "pk", None);
    let found = unique::discover::discover(&api, &empty).unwrap();
    assert_eq!((found.markers, found.attributes.len()), (0, 0));
}
