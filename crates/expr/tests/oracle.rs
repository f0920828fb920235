//! Replays expressions whose outcome was recorded from DynamoDB (Local) and
//! checks that Ferrodyn gives the same result or the same error message.
//!
//! `data/oracle_cases.json` holds one fixture item and, per case, the
//! expression kind (c = ConditionExpression, u = UpdateExpression, p =
//! ProjectionExpression), placeholders, and the expected boolean, resulting
//! item, or exact error message.

use ferrodyn_expr::{parse_condition, parse_projection, parse_update, ExpressionContext};
use ferrodyn_types::{AttributeValue, DynamoError, Item};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
struct Case {
    kind: String,
    expr: String,
    names: Option<HashMap<String, String>>,
    values: Option<HashMap<String, AttributeValue>>,
    result: Option<bool>,
    item: Option<Item>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Data {
    item: Item,
    cases: Vec<Case>,
}

enum Outcome {
    Bool(bool),
    Item(Item),
}

fn run(case: &Case, item: &Item) -> Result<Outcome, DynamoError> {
    let mut ctx = ExpressionContext::new(case.names.as_ref(), case.values.as_ref())?;
    let out = match case.kind.as_str() {
        "c" => {
            let cond = parse_condition(&case.expr, &mut ctx)?;
            ctx.check_all_used()?;
            Outcome::Bool(cond.evaluate(Some(item))?)
        }
        "u" => {
            let update = parse_update(&case.expr, &mut ctx)?;
            ctx.check_all_used()?;
            let mut new = item.clone();
            update.apply(&mut new)?;
            Outcome::Item(new)
        }
        _ => {
            let projection = parse_projection(&case.expr, &mut ctx)?;
            ctx.check_all_used()?;
            Outcome::Item(projection.apply(item))
        }
    };
    Ok(out)
}

fn same_item(a: &Item, b: &Item) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| v.dynamo_eq(w)))
}

#[test]
fn matches_recorded_dynamodb_behaviour() {
    let data: Data =
        serde_json::from_str(include_str!("data/oracle_cases.json")).expect("valid case file");
    let mut failures = Vec::new();
    for case in &data.cases {
        let got = run(case, &data.item);
        let ok = match (&got, &case.error, case.result, &case.item) {
            (Err(e), Some(msg), _, _) => &e.message == msg,
            (Ok(Outcome::Bool(b)), None, Some(want), _) => *b == want,
            (Ok(Outcome::Item(it)), None, _, Some(want)) => same_item(it, want),
            _ => false,
        };
        if !ok {
            let got = match got {
                Err(e) => format!("error {:?}", e.message),
                Ok(Outcome::Bool(b)) => format!("{b}"),
                Ok(Outcome::Item(it)) => serde_json::to_string(&it).unwrap_or_default(),
            };
            failures.push(format!(
                "{} {:?}: expected {:?}/{:?}/{:?}, got {got}",
                case.kind, case.expr, case.error, case.result, case.item
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        data.cases.len(),
        failures.join("\n")
    );
}
