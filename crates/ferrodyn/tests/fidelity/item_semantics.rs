//! Item results that are not what the documentation's reading suggests: a
//! REMOVE of a nested path on a missing item, and set members returned sorted.

use crate::util::{self, s};

#[tokio::test]
async fn removing_a_nested_path_of_a_missing_item_is_ignored() {
    // AWS (ScyllaDB's test_nested_attribute_remove_from_missing_item): on an
    // existing item without `x` the same REMOVE is an invalid path.
    let client = util::client();
    let table = util::table_s(&client).await;
    for expression in ["REMOVE x.y", "REMOVE x[0]"] {
        client
            .update_item()
            .table_name(&table)
            .key("p", s("missing"))
            .update_expression(expression)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{expression}: {e:?}"));
    }
    client
        .put_item()
        .table_name(&table)
        .item("p", s("present"))
        .send()
        .await
        .unwrap();
    let result = client
        .update_item()
        .table_name(&table)
        .key("p", s("present"))
        .update_expression("REMOVE x.y")
        .send()
        .await;
    util::assert_validation(
        result,
        "The document path provided in the update expression is invalid for update",
    );
}

#[tokio::test]
async fn sets_come_back_sorted_as_the_emulators_return_them() {
    // AWS documents sets as unordered; DynamoDB Local and Dynoxide return
    // them sorted, and library tests compare whole items against that order.
    let client = util::client();
    let table = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("ss", util::ss(&["b", "a", "B", "é", "c"]))
        .item("ns", util::ns(&["10", "9", "-1", "1e2"]))
        .item(
            "bs",
            aws_sdk_dynamodb::types::AttributeValue::Bs(vec![
                aws_sdk_dynamodb::primitives::Blob::new(vec![0x80]),
                aws_sdk_dynamodb::primitives::Blob::new(vec![0x00]),
                aws_sdk_dynamodb::primitives::Blob::new(vec![0x7f]),
            ]),
        )
        .send()
        .await
        .unwrap();
    let item = client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert_eq!(item["ss"], util::ss(&["B", "a", "b", "c", "é"]));
    assert_eq!(item["ns"], util::ns(&["-1", "9", "10", "100"]));
    let bytes: Vec<Vec<u8>> = item["bs"]
        .as_bs()
        .unwrap()
        .iter()
        .map(|b| b.as_ref().to_vec())
        .collect();
    assert_eq!(bytes, vec![vec![0x00], vec![0x7f], vec![0x80]]);
    // ADD merges into the same order.
    let out = client
        .update_item()
        .table_name(&table)
        .key("p", s("k"))
        .update_expression("ADD ss :s, ns :n")
        .expression_attribute_values(":s", util::ss(&["zz", "0"]))
        .expression_attribute_values(":n", util::ns(&["5"]))
        .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew)
        .send()
        .await
        .unwrap();
    let attributes = out.attributes.unwrap();
    assert_eq!(
        attributes["ss"],
        util::ss(&["0", "B", "a", "b", "c", "zz", "é"])
    );
    assert_eq!(attributes["ns"], util::ns(&["-1", "5", "9", "10", "100"]));
}
