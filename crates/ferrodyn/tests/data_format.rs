//! The data directory's format: a directory written by an earlier release
//! still opens and answers, and one written by a newer Ferrodyn is refused
//! with a clear error instead of being misread.
//!
//! `fixtures/data-format-1.tgz` is a data directory written by the release
//! before format versions were recorded (commit 0b8c7e7), through the AWS
//! CLI: table `accounts` (pk/sk, GSI `by_email`, a NEW_AND_OLD_IMAGES
//! stream) holding three `USER#n`/`PROFILE` items with a 20-digit number, a
//! string set and binary, plus one `UNIQ#EMAIL#u1@example.com`/`LOCK`
//! marker; table `simple` (numeric key, provisioned 5/5, TTL on `exp`) with
//! item 7. Never regenerate it: it stands for data users already have.

use crate::util::{self, s, ServerProcess};
use aws_sdk_dynamodb::types::{AttributeValue, StreamViewType, TimeToLiveStatus};
use std::path::Path;
use std::process::{Command, Stdio};

/// Unpacks the fixture into a fresh directory and returns it with the
/// path of its data directory.
fn unpack_fixture() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/data-format-1.tgz");
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(tmp.path())
        .status()
        .expect("tar can be run");
    assert!(status.success(), "unpacking {}", archive.display());
    let data = tmp.path().join("data");
    (tmp, data)
}

#[tokio::test]
async fn a_data_directory_of_the_first_format_opens_and_answers() {
    util::needs_own_server();
    let (_tmp, data) = unpack_fixture();
    let server = ServerProcess::with_data_dir(&data);
    let client = util::client_for(server.endpoint());

    let tables = client.list_tables().send().await.unwrap();
    assert_eq!(tables.table_names(), ["accounts", "simple"]);

    let got = client
        .get_item()
        .table_name("accounts")
        .key("pk", s("USER#2"))
        .key("sk", s("PROFILE"))
        .send()
        .await
        .unwrap();
    let item = got.item().expect("USER#2 is there");
    assert_eq!(
        item["n"],
        AttributeValue::N("12345678901234567890.5".into())
    );
    assert_eq!(item["email"], s("u2@example.com"));
    // The AWS CLI (v1) sent the blob argument `AQI=` as those four bytes.
    assert_eq!(item["bin"], AttributeValue::B(b"AQI=".to_vec().into()));
    let mut tags = item["tags"].as_ss().unwrap().clone();
    tags.sort();
    assert_eq!(tags, ["a", "b"]);

    let by_email = client
        .query()
        .table_name("accounts")
        .index_name("by_email")
        .key_condition_expression("email = :e")
        .expression_attribute_values(":e", s("u3@example.com"))
        .send()
        .await
        .unwrap();
    assert_eq!(by_email.count(), 1);
    assert_eq!(by_email.items()[0]["pk"], s("USER#3"));

    let described = client
        .describe_table()
        .table_name("accounts")
        .send()
        .await
        .unwrap();
    let table = described.table().unwrap();
    assert_eq!(table.item_count(), Some(4));
    let stream = table.stream_specification().unwrap();
    assert_eq!(
        stream.stream_view_type(),
        Some(&StreamViewType::NewAndOldImages)
    );

    let ttl = client
        .describe_time_to_live()
        .table_name("simple")
        .send()
        .await
        .unwrap();
    let ttl = ttl.time_to_live_description().unwrap();
    assert_eq!(ttl.time_to_live_status(), Some(&TimeToLiveStatus::Enabled));
    assert_eq!(ttl.attribute_name(), Some("exp"));

    // It still takes writes, and they survive a restart.
    client
        .put_item()
        .table_name("simple")
        .item("id", AttributeValue::N("8".into()))
        .send()
        .await
        .unwrap();
    assert!(server.terminate().success());
    let marker = std::fs::read_to_string(data.join("FERRODYN_FORMAT")).unwrap();
    assert_eq!(marker, "ferrodyn-data-format 1\n");

    let server = ServerProcess::with_data_dir(&data);
    let client = util::client_for(server.endpoint());
    let scan = client.scan().table_name("simple").send().await.unwrap();
    assert_eq!(scan.count(), 2);
}

/// Runs `ferrodyn serve` on `data` and returns its exit success and stderr.
fn serve_and_fail(data: &Path) -> (bool, String) {
    let out = Command::new(util::server_binary())
        .args(["serve", "--port", "0", "--data-dir"])
        .arg(data)
        .stdin(Stdio::null())
        .output()
        .expect("ferrodyn can be run");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_directory_written_by_a_newer_ferrodyn_is_refused() {
    util::needs_own_server();
    let (_tmp, data) = unpack_fixture();
    std::fs::write(data.join("FERRODYN_FORMAT"), "ferrodyn-data-format 2\n").unwrap();
    let (ok, stderr) = serve_and_fail(&data);
    assert!(!ok, "a newer format must not be opened");
    assert!(
        stderr.contains("was written by a newer Ferrodyn (data format 2)"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_non_empty_directory_that_is_not_ferrodyns_is_refused() {
    util::needs_own_server();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("thesis.tex"), "precious").unwrap();
    let (ok, stderr) = serve_and_fail(tmp.path());
    assert!(!ok);
    assert!(stderr.contains("not a Ferrodyn data directory"), "{stderr}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

/// A second server on a directory in use is refused with the holder's PID
/// and the way out, and leaves the first one serving.
#[tokio::test]
async fn a_directory_in_use_names_the_process_holding_it() {
    util::needs_own_server();
    let tmp = tempfile::tempdir().unwrap();
    let first = ServerProcess::with_data_dir(tmp.path());
    let (ok, stderr) = serve_and_fail(tmp.path());
    assert!(!ok, "a second server must not open a held directory");
    let expected = format!(
        "is in use by another Ferrodyn process (PID {}): only one process may open a data \
         directory at a time. Stop that process, or choose another directory with --data-dir \
         DIR (or run with --in-memory)",
        first.pid()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(!stderr.contains("FjallError"), "{stderr}");
    let client = util::client_for(first.endpoint());
    client
        .list_tables()
        .send()
        .await
        .expect("the first still serves");
}
