//! Every operation of DynamoDB's service model answers: none but an
//! explicit pending list gets UnknownOperationException, and every pending
//! one still does, so the list only shrinks (a newly built operation fails
//! this test until it leaves the list). The names are botocore 1.44.8's
//! `dynamodb/2012-08-10/service-2.json` (62 operations) and
//! `dynamodbstreams/2012-08-10/service-2.json` (4), as installed by
//! scripts/smoke.sh; infrastructure tools call the Describe ones on every plan.

use crate::util::raw;

const DYNAMODB: [&str; 62] = [
    "BatchExecuteStatement",
    "BatchGetItem",
    "BatchWriteItem",
    "CancelBulkOperation",
    "CreateBackup",
    "CreateGlobalTable",
    "CreateTable",
    "DeleteBackup",
    "DeleteItem",
    "DeleteResourcePolicy",
    "DeleteTable",
    "DescribeBackup",
    "DescribeBulkOperation",
    "DescribeContinuousBackups",
    "DescribeContributorInsights",
    "DescribeEndpoints",
    "DescribeExport",
    "DescribeGlobalTable",
    "DescribeGlobalTableSettings",
    "DescribeImport",
    "DescribeKinesisStreamingDestination",
    "DescribeLimits",
    "DescribeTable",
    "DescribeTableReplicaAutoScaling",
    "DescribeTimeToLive",
    "DisableKinesisStreamingDestination",
    "EnableKinesisStreamingDestination",
    "ExecuteStatement",
    "ExecuteTransaction",
    "ExportTableToPointInTime",
    "GetItem",
    "GetResourcePolicy",
    "ImportTable",
    "ListBackups",
    "ListBulkOperations",
    "ListContributorInsights",
    "ListExports",
    "ListGlobalTables",
    "ListImports",
    "ListTables",
    "ListTagsOfResource",
    "PutItem",
    "PutResourcePolicy",
    "Query",
    "RestoreTableFromBackup",
    "RestoreTableToPointInTime",
    "Scan",
    "SearchVectors",
    "StartBulkPutItems",
    "TagResource",
    "TransactGetItems",
    "TransactWriteItems",
    "UntagResource",
    "UpdateContinuousBackups",
    "UpdateContributorInsights",
    "UpdateGlobalTable",
    "UpdateGlobalTableSettings",
    "UpdateItem",
    "UpdateKinesisStreamingDestination",
    "UpdateTable",
    "UpdateTableReplicaAutoScaling",
    "UpdateTimeToLive",
];

const STREAMS: [&str; 4] = [
    "DescribeStream",
    "GetRecords",
    "GetShardIterator",
    "ListStreams",
];

/// Not built yet, and the issue that builds each.
const PENDING: [(&str, &str); 0] = [];

#[tokio::test]
async fn every_operation_of_the_service_model_answers_except_the_pending_ones() {
    let mut wrong = Vec::new();
    for op in DYNAMODB {
        let answer = raw::call_json(op, serde_json::json!({})).await;
        let unknown =
            answer.status == 400 && answer.error_name().ends_with("UnknownOperationException");
        let pending = PENDING.iter().any(|(name, _)| *name == op);
        if unknown != pending {
            wrong.push(format!(
                "{op}: {} {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            ));
        }
    }
    for op in STREAMS {
        let target = format!("DynamoDBStreams_20120810.{op}");
        let headers = [
            ("content-type", raw::CONTENT_TYPE),
            ("x-amz-target", target.as_str()),
            ("x-amz-date", "20261130T000000Z"),
            ("authorization", raw::AUTHORIZATION),
        ];
        let answer = raw::send("POST", "/", &headers, b"{}".to_vec())
            .await
            .unwrap();
        if answer.status == 400 && answer.error_name().ends_with("UnknownOperationException") {
            wrong.push(format!("{op}: unknown"));
        }
    }
    assert!(
        wrong.is_empty(),
        "operations answering other than expected (build them, or take them off PENDING):\n{}",
        wrong.join("\n")
    );
}
