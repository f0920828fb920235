//! The console's JSON API, `/console/api/<path>`: one dispatch over the
//! paths, each a thin call into `ferrodyn-client` or `ferrodyn-patterns`.
//! Every failure answers `{"code": .., "message": ..}`: DynamoDB's own code
//! and message when the endpoint refused a call (with its full body, so the
//! page can show cancellation reasons), `EndpointUnreachable` when it did not
//! answer, or the console's own code for a malformed console request.
//!
//! | path | does |
//! |---|---|
//! | `GET info` | endpoint, region, where the credentials came from |
//! | `POST call/<Operation>` | one DynamoDB call, request and answer as DynamoDB JSON |
//! | `POST read` | one Query/Scan page from the query form, with the request and CLI commands |
//! | `POST convert` | plain JSON ⇄ DynamoDB JSON, lossless (numbers stay text) |
//! | `POST stage/add`, `stage/diff`, `stage/restage`, `stage/commit` | staged edits (`ferrodyn stage`), markers following them |
//! | `POST bulk`, `GET bulk`, `GET bulk/<id>`, `POST bulk/<id>/cancel` | bulk writes (and imports) with progress, listed |
//! | `POST bulk/preview` | how many items a bulk change on a query/scan would touch |
//! | `POST locks`, `locks/repair`, `locks/discover` | UNIQ# markers (`ferrodyn unique locks`), one finding's repair, the constraints the markers show |
//! | `POST expr` | expression builder with SDK snippets |
//! | `POST commands` | any request as an `aws dynamodb` command and SDK snippets |
//! | `POST cost`, `GET usage` | the calculator and the measured usage, priced |
//! | `POST partitions` `{table}` | the table's partitions, sizes, heat and shards (GET /ferrodyn/partitions) |
//! | `POST insights` `{table, index?, minutes?}` | Contributor Insights' status and top keys (GET /ferrodyn/insights) |
//! | `POST replication` `{table}` | a global table's replication per target region: status, latency, pending age, fill, last error (GET /ferrodyn/replication) |
//! | `POST import`, `POST export` | files in and out |
//! | `POST streams` | a table's stream records, newest first |

use crate::{bulk, locks, read, snippets, stage, streams, transfer, Console};
use axum::body::Body;
use axum::http::{header, HeaderValue, Method, Response, StatusCode};
use ferrodyn_client::convert::{self, Plain};
use ferrodyn_client::ClientError;
use ferrodyn_patterns::cost::{self, Prices, Workload};
use ferrodyn_patterns::expr::{Builder, Kind};
use ferrodyn_patterns::ApiError;
use serde_json::{json, Map, Value};

/// A failed console request, as the page shows it: code and message.
#[derive(Debug, Clone)]
pub struct ApiFailure {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    /// The endpoint's whole error body (cancellation reasons, items).
    pub body: Option<Value>,
}

pub type ApiResult = Result<Value, ApiFailure>;

impl ApiFailure {
    /// A console request that makes no sense (missing field, bad JSON).
    pub fn invalid(message: impl Into<String>) -> ApiFailure {
        ApiFailure {
            status: StatusCode::BAD_REQUEST,
            code: "ValidationException".into(),
            message: message.into(),
            body: None,
        }
    }

    pub fn console(code: &str, message: &str) -> ApiFailure {
        ApiFailure {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: code.into(),
            message: message.into(),
            body: None,
        }
    }

    pub fn forbidden(message: &str) -> ApiFailure {
        ApiFailure {
            status: StatusCode::FORBIDDEN,
            code: "Forbidden".into(),
            message: message.into(),
            body: None,
        }
    }

    pub fn response(&self) -> Response<Body> {
        let mut body = json!({ "code": self.code, "message": self.message });
        if let Some(detail) = &self.body {
            body["body"] = detail.clone();
        }
        json(self.status, &body)
    }
}

impl From<ClientError> for ApiFailure {
    fn from(e: ClientError) -> ApiFailure {
        match e {
            ClientError::Api {
                code,
                message,
                status,
                body,
            } => ApiFailure {
                status: StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
                code,
                message,
                body: Some(body),
            },
            ClientError::Transport(message) => ApiFailure {
                status: StatusCode::BAD_GATEWAY,
                code: "EndpointUnreachable".into(),
                message,
                body: None,
            },
            ClientError::Config(message) => ApiFailure::invalid(message),
        }
    }
}

impl From<ApiError> for ApiFailure {
    fn from(e: ApiError) -> ApiFailure {
        match e {
            ApiError::Api {
                code,
                message,
                body,
            } => ApiFailure {
                status: StatusCode::BAD_REQUEST,
                code,
                message,
                body: Some(body),
            },
            ApiError::Transport(message) => ApiFailure {
                status: StatusCode::BAD_GATEWAY,
                code: "EndpointUnreachable".into(),
                message,
                body: None,
            },
        }
    }
}

/// A JSON response with no CORS headers (same-origin only).
pub fn json(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(Body::from(
        serde_json::to_vec(value).expect("plain data always serialises"),
    ));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Routes one API request (runs on a blocking thread: the client blocks).
pub(crate) fn dispatch(console: &Console, method: &Method, path: &str, body: &[u8]) -> ApiResult {
    let get = *method == Method::GET;
    let request = || -> Result<Value, ApiFailure> {
        if body.is_empty() {
            return Ok(json!({}));
        }
        serde_json::from_slice(body)
            .map_err(|e| ApiFailure::invalid(format!("the request is not JSON: {e}")))
    };
    let client = &console.client;
    match (get, path.split('/').collect::<Vec<_>>().as_slice()) {
        (true, ["info"]) => Ok(info(console)),
        (false, ["call", operation]) => call(console, operation, &request()?),
        (false, ["read"]) => read::page(client, &request()?),
        (false, ["convert"]) => convert_item(&request()?),
        (false, ["stage", action]) => stage::handle(client, action, &request()?),
        (false, ["bulk"]) => console.jobs.start(client.clone(), &request()?),
        (false, ["bulk", "preview"]) => bulk::preview(client, &request()?),
        (true, ["bulk"]) => console.jobs.list(),
        (true, ["bulk", id]) => console.jobs.progress(id),
        (false, ["bulk", id, "cancel"]) => console.jobs.cancel(id),
        (false, ["locks"]) => locks::inspect(client, &request()?),
        (false, ["locks", "repair"]) => locks::repair(client, &request()?),
        (false, ["locks", "discover"]) => locks::discover(client, &request()?),
        (false, ["expr"]) => expressions(&request()?),
        (false, ["commands"]) => commands(&request()?),
        (false, ["cost"]) => estimate(&request()?),
        (true, ["usage"]) => usage(console),
        (false, ["streams"]) => streams::records(client, &console.streams_client, &request()?),
        (false, ["partitions"]) => partitions(client, &request()?),
        (false, ["insights"]) => insights(client, &request()?),
        (false, ["replication"]) => replication(client, &request()?),
        (false, ["import"]) => transfer::import(client, &console.jobs, &request()?),
        (false, ["export"]) => transfer::export(client, &request()?),
        _ => Err(ApiFailure {
            status: StatusCode::NOT_FOUND,
            code: "UnknownConsoleRequest".into(),
            message: format!("no console API {} /console/api/{path}", method.as_str()),
            body: None,
        }),
    }
}

fn info(console: &Console) -> Value {
    let client = &console.client;
    json!({
        "endpoint": client.endpoint(),
        "region": client.region(),
        "credentials": client.credentials_source(),
        "local": ferrodyn_client::config::is_local(client.endpoint()),
        "version": env!("CARGO_PKG_VERSION"),
        "assetsBytes": crate::assets::total_bytes(),
    })
}

/// One DynamoDB call; an operation name is letters only.
fn call(console: &Console, operation: &str, request: &Value) -> ApiResult {
    if operation.is_empty() || !operation.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(ApiFailure::invalid(format!(
            "'{operation}' is not an operation name"
        )));
    }
    Ok(console.client.call(operation, request)?)
}

/// The string field `name` of a request, if present.
pub(crate) fn text<'a>(request: &'a Value, name: &str) -> Option<&'a str> {
    request
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The string field `name`, required.
pub(crate) fn required<'a>(request: &'a Value, name: &str) -> Result<&'a str, ApiFailure> {
    text(request, name).ok_or_else(|| ApiFailure::invalid(format!("`{name}` is required")))
}

/// `{"to": "ddb", "text": "<plain JSON>"}` → `{"item": {..}}`;
/// `{"to": "plain", "item": {..}}` → `{"text": "<plain JSON, tagged>"}`.
/// Plain JSON travels as text so 38-digit numbers stay exact in the browser.
fn convert_item(request: &Value) -> ApiResult {
    let warnings =
        |w: Vec<convert::Warning>| -> Vec<String> { w.iter().map(ToString::to_string).collect() };
    match required(request, "to")? {
        "ddb" => {
            let plain = Plain::parse(required(request, "text")?)
                .map_err(|e| ApiFailure::invalid(format!("not plain JSON: {e}")))?;
            let (item, w) =
                convert::item_to_ddb(&plain).map_err(|e| ApiFailure::invalid(e.to_string()))?;
            Ok(json!({ "item": item, "warnings": warnings(w) }))
        }
        "plain" => {
            let item = request.get("item").cloned().unwrap_or(json!({}));
            let (plain, w) = convert::item_from_ddb(&item, true)
                .map_err(|e| ApiFailure::invalid(e.to_string()))?;
            Ok(json!({ "text": plain.to_json_pretty(), "warnings": warnings(w) }))
        }
        other => Err(ApiFailure::invalid(format!(
            "`to` is ddb or plain, not {other}"
        ))),
    }
}

/// The expression builder: readable condition/filter/update/key-condition
/// text in, request fields, CLI options and SDK snippets out.
/// `{operation, request}` → the same call as an `aws dynamodb` command and
/// as SDK snippets, for dialogs that show what they are about to send.
fn commands(request: &Value) -> ApiResult {
    let operation = required(request, "operation")?;
    let call = request
        .get("request")
        .filter(|r| r.is_object())
        .ok_or_else(|| ApiFailure::invalid("`request` must be an object"))?;
    Ok(json!({
        "aws": read::aws_command(operation, call),
        "snippets": snippets::all(operation, call),
    }))
}

fn expressions(request: &Value) -> ApiResult {
    let mut builder = Builder::new();
    let bad = |e: ferrodyn_patterns::expr::ExprError| ApiFailure::invalid(e.to_string());
    if let Some(src) = text(request, "keyCondition") {
        builder.add(Kind::KeyCondition, src).map_err(bad)?;
    }
    if let Some(src) = text(request, "update") {
        builder.add(Kind::Update, src).map_err(bad)?;
    }
    let filter = text(request, "filter");
    if let Some(src) = text(request, "condition").or(filter) {
        builder.add(Kind::Condition, src).map_err(bad)?;
    }
    let built = builder.build().map_err(bad)?;
    let mut fields = built.request_fields();
    if text(request, "condition").is_none() && filter.is_some() {
        if let Some(expression) = fields.remove("ConditionExpression") {
            fields.insert("FilterExpression".into(), expression);
        }
    }
    let operation = text(request, "operation").unwrap_or("UpdateItem");
    let mut call = Map::new();
    call.insert(
        "TableName".into(),
        json!(text(request, "table").unwrap_or("my-table")),
    );
    if let Some(key) = builder_key(operation, text(request, "key"))? {
        call.insert("Key".into(), key.clone());
        fields.insert("Key".into(), key);
    }
    call.extend(fields.clone());
    let cli = built.cli_args().replace(
        "--condition-expression",
        if filter.is_some() && text(request, "condition").is_none() {
            "--filter-expression"
        } else {
            "--condition-expression"
        },
    );
    Ok(json!({
        "fields": fields,
        "cli": cli,
        "snippets": snippets::all(operation, &Value::Object(call)),
    }))
}

/// The expression builder's Key, given as plain JSON (`{"pk": "ACCT#1"}`),
/// in DynamoDB JSON: required by the operations that address one item, so a
/// snippet is never a call that cannot work.
fn builder_key(operation: &str, key: Option<&str>) -> Result<Option<Value>, ApiFailure> {
    let needs_key = matches!(operation, "UpdateItem" | "DeleteItem" | "GetItem");
    let Some(text) = key else {
        return match needs_key {
            true => Err(ApiFailure::invalid(format!(
                "{operation} needs a Key: give the item's key as plain JSON, e.g. {{\"pk\": \"ACCT#1\"}}"
            ))),
            false => Ok(None),
        };
    };
    if !needs_key {
        return Ok(None);
    }
    let plain = Plain::parse(text).map_err(|e| ApiFailure::invalid(format!("Key: {e}")))?;
    let (key, _) =
        convert::item_to_ddb(&plain).map_err(|e| ApiFailure::invalid(format!("Key: {e}")))?;
    Ok(Some(Value::Object(key)))
}

/// `ferrodyn cost` as a form.
fn estimate(request: &Value) -> ApiResult {
    let number = |name: &str| request.get(name).and_then(Value::as_f64).unwrap_or(0.0);
    let size = cost::parse_size(text(request, "itemSize").unwrap_or("1KB"))
        .map_err(ApiFailure::invalid)?;
    let workload = Workload {
        item_size: size,
        writes: number("writes"),
        transactional_writes: number("transactionalWrites"),
        strong_reads: number("reads"),
        eventual_reads: number("eventualReads"),
        transactional_reads: number("transactionalReads"),
    };
    let utilization = request
        .get("utilization")
        .and_then(Value::as_f64)
        .unwrap_or(0.7);
    if !(utilization > 0.0 && utilization <= 1.0) {
        return Err(ApiFailure::invalid(
            "utilization is a fraction between 0 and 1",
        ));
    }
    let prices = Prices::builtin();
    let e = cost::estimate(&[workload], number("storageGb"), utilization, &prices);
    let monthly = |m: &cost::Monthly| json!({ "writes": m.writes, "reads": m.reads, "storage": m.storage, "total": m.total() });
    Ok(json!({
        "itemBytes": size,
        "writeUnitsPerWrite": cost::write_units(size),
        "readUnitsPerRead": cost::read_units(size),
        "writeUnitsPerSecond": e.write_units_per_second,
        "readUnitsPerSecond": e.read_units_per_second,
        "provisionedWcu": e.provisioned_wcu,
        "provisionedRcu": e.provisioned_rcu,
        "onDemand": monthly(&e.on_demand),
        "provisioned": monthly(&e.provisioned),
        "currency": e.currency,
        "text": e.to_string(),
        "prices": format!("{} {}, {}", prices.region, prices.currency, prices.as_of),
    }))
}

/// `GET /ferrodyn/partitions?table=T` of the endpoint: the table's
/// partitions, sizes, heat and shards (Ferrodyn only).
fn partitions(client: &ferrodyn_client::Client, request: &Value) -> ApiResult {
    let table = plain_name(required(request, "table")?)?;
    ferrodyn_only(
        client,
        &format!("/ferrodyn/partitions?table={table}"),
        "partitions are shown by Ferrodyn only; AWS does not expose them",
    )
}

/// `GET /ferrodyn/insights?table=T[&index=I]&minutes=N` of the endpoint:
/// Contributor Insights' status and top keys (Ferrodyn only).
fn insights(client: &ferrodyn_client::Client, request: &Value) -> ApiResult {
    let table = plain_name(required(request, "table")?)?;
    let minutes = request["minutes"].as_u64().unwrap_or(60);
    let mut path = format!("/ferrodyn/insights?table={table}&minutes={minutes}");
    if let Some(index) = request["index"].as_str() {
        path.push_str(&format!("&index={}", plain_name(index)?));
    }
    ferrodyn_only(
        client,
        &path,
        "the key counts are served by Ferrodyn only; on AWS they are CloudWatch graphs",
    )
}

/// `GET /ferrodyn/replication?table=T` of the endpoint: a global table's
/// replication to each other region (status, ReplicationLatency, the age of
/// the oldest change not yet applied there, fill, last error).
fn replication(client: &ferrodyn_client::Client, request: &Value) -> ApiResult {
    let table = plain_name(required(request, "table")?)?;
    ferrodyn_only(
        client,
        &format!("/ferrodyn/replication?table={table}"),
        "replication figures are served by Ferrodyn only; on AWS ReplicationLatency is a CloudWatch metric",
    )
}

/// A table or index name that can go into a query string as it is.
fn plain_name(name: &str) -> Result<&str, ApiFailure> {
    if name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
    {
        Ok(name)
    } else {
        Err(ApiFailure::invalid(format!(
            "not a table or index name: {name}"
        )))
    }
}

/// A signed GET of one of Ferrodyn's own reports; a failure says that the
/// report is Ferrodyn's (`note`), since AWS answers such paths with an error.
fn ferrodyn_only(client: &ferrodyn_client::Client, path: &str, note: &str) -> ApiResult {
    client.harness("GET", path, None).map_err(|e| {
        let mut failure = ApiFailure::from(e);
        failure.message = format!("{} ({note})", failure.message);
        failure
    })
}

/// `GET /ferrodyn/usage` of the endpoint, each row priced on demand.
fn usage(console: &Console) -> ApiResult {
    let mut report = console.client.get_json("/ferrodyn/usage").map_err(|e| {
        let mut failure = ApiFailure::from(e);
        failure.message = format!(
            "{} (the usage report is served by Ferrodyn only; AWS reports usage in CloudWatch)",
            failure.message
        );
        failure
    })?;
    let prices = Prices::builtin();
    if let Some(rows) = report.get_mut("Consumed").and_then(Value::as_array_mut) {
        for row in rows {
            let read = row["ReadCapacityUnits"].as_f64().unwrap_or(0.0);
            let write = row["WriteCapacityUnits"].as_f64().unwrap_or(0.0);
            row["Price"] = json!(
                read / 1e6 * prices.on_demand.read_per_million
                    + write / 1e6 * prices.on_demand.write_per_million
            );
        }
    }
    report["Currency"] = json!(prices.currency);
    Ok(report)
}
