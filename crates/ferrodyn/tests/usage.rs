//! Ferrodyn's own usage report (`GET /ferrodyn/usage`): the capacity each
//! operation consumed per table since the server started, which
//! `ferrodyn usage` prices. A dedicated server keeps the figures exact.

use crate::util::{self, own_server, raw, s};

#[tokio::test]
async fn usage_report_files_consumed_units_under_table_and_operation() {
    let (server, client) = own_server(&[]);
    let table = util::table_s(&client).await;
    // A 1.5 KB item: a put costs 2 write units, a strong read 1, an eventual read 0.5.
    let big = "x".repeat(1500);
    client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("data", s(&big))
        .send()
        .await
        .unwrap();
    client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .send()
        .await
        .unwrap();

    let report = raw::send_to(server.endpoint(), "GET", "/ferrodyn/usage", &[], Vec::new())
        .await
        .unwrap();
    assert_eq!(report.status, 200);
    let report = report.json();
    let consumed = report["Consumed"].as_array().unwrap();
    let row = |operation: &str| {
        consumed
            .iter()
            .find(|r| r["TableName"] == table.as_str() && r["Operation"] == operation)
            .unwrap_or_else(|| panic!("no {operation} row in {report}"))
            .clone()
    };
    assert_eq!(row("PutItem")["WriteCapacityUnits"], 2.0);
    assert_eq!(row("GetItem")["ReadCapacityUnits"], 1.5);
    assert_eq!(report["Requests"]["GetItem"], 2);
    assert_eq!(report["Requests"]["PutItem"], 1);
}
