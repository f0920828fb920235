-- wrk script for Ferrodyn's benchmark: one DynamoDB data-plane operation per run.
--
--   BENCH_OP=put wrk -t1 -c16 -d8s -s bench/ops.lua http://127.0.0.1:8000
--
-- Environment (bench/run.py sets all of these):
--   BENCH_OP        put | get | query | txn | bwrite | bget | pselect | pinsert | hot (default put)
--   BENCH_TABLE     table name                                      (default fdbench)
--   BENCH_KEYS      number of user#N items loaded                   (default 10000)
--   BENCH_GROUPS    number of grp#N partitions of 20 items loaded   (default 100)
--   BENCH_AMZ_DATE  X-Amz-Date to send, yyyymmddThhmmssZ            (default: now, UTC)
--
-- Requests carry a well-formed SigV4 Authorization header with a dummy signature:
-- the servers measured here do not verify signatures.
-- At the end one line "BENCH_RESULT k=v ..." is printed for run.py to parse
-- (latencies in microseconds).

local op     = os.getenv("BENCH_OP") or "put"
local tbl    = os.getenv("BENCH_TABLE") or "fdbench"
local nkeys  = tonumber(os.getenv("BENCH_KEYS") or "10000")
local ngroup = tonumber(os.getenv("BENCH_GROUPS") or "100")
local amz    = os.getenv("BENCH_AMZ_DATE") or os.date("!%Y%m%dT%H%M%SZ")

local targets = { put = "PutItem", get = "GetItem", query = "Query", txn = "TransactWriteItems",
                  bwrite = "BatchWriteItem", bget = "BatchGetItem",
                  pselect = "ExecuteStatement", pinsert = "ExecuteStatement", hot = "TransactWriteItems" }
if not targets[op] then
  error("BENCH_OP must be one of put get query txn bwrite bget pselect pinsert hot, not " .. op)
end

wrk.method = "POST"
wrk.path = "/"
wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
wrk.headers["X-Amz-Target"] = "DynamoDB_20120810." .. targets[op]
wrk.headers["X-Amz-Date"] = amz
wrk.headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=AKIAFERRODYNBENCH000/" .. amz:sub(1, 8) ..
  "/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" ..
  string.rep("5f", 32)

-- Every thread gets its own seed, so threads (and the warm-up vs the measured run)
-- do not replay the same key sequence.
local counter = 0
local created = 0
function setup(thread)
  created = created + 1
  thread:set("tid", created)
end

function init(args)
  local t = tid or 0
  math.randomseed(os.time() * 1000003 + t * 7919 + math.floor((os.clock() * 1e6) % 1e6))
  for _ = 1, 10 do math.random() end
end

local function s(v) return '{"S":"' .. v .. '"}' end

-- The ~100-byte profile item (DynamoDB item size), the same shape run.py loads.
local function user_item(k, n)
  return '{"PK":' .. s("user#" .. k) .. ',"SK":' .. s("profile") ..
    ',"name":' .. s("Ada Lovelace") .. ',"email":' .. s("ada" .. k .. "@example.com") ..
    ',"n":{"N":"' .. n .. '"},"tags":{"SS":["a","b","c"]},"bio":' .. s("Analyst and metaphysician") .. '}'
end

local function user_key(k) return '{"PK":' .. s("user#" .. k) .. ',"SK":' .. s("profile") .. '}' end

local body = {}

body.put = function()
  counter = counter + 1
  return '{"TableName":"' .. tbl .. '","Item":' .. user_item(math.random(1, nkeys), counter) .. '}'
end

body.get = function()
  return '{"TableName":"' .. tbl .. '","Key":' .. user_key(math.random(1, nkeys)) .. '}'
end

body.query = function()
  return '{"TableName":"' .. tbl .. '","KeyConditionExpression":"PK = :p AND begins_with(SK, :s)",' ..
    '"ExpressionAttributeValues":{":p":' .. s("grp#" .. math.random(1, ngroup)) .. ',":s":' .. s("item#") .. '}}'
end

-- Sign-up with uniqueness: the account and two lock items, all-or-nothing, each put
-- guarded so that an existing account, e-mail or handle cancels the transaction.
body.txn = function()
  counter = counter + 1
  local id = tostring(math.random(1, 2000000000)) .. "-" .. (tid or 0) .. "-" .. counter
  local guard = '"ConditionExpression":"attribute_not_exists(PK)"'
  return '{"TransactItems":[' ..
    '{"Put":{"TableName":"' .. tbl .. '","Item":{"PK":' .. s("ACCT#" .. id) .. ',"SK":' .. s("PROFILE") ..
      ',"email":' .. s("u" .. id .. "@example.com") .. ',"handle":' .. s("h" .. id) .. '},' .. guard .. '}},' ..
    '{"Put":{"TableName":"' .. tbl .. '","Item":{"PK":' .. s("UNIQ#EMAIL#u" .. id .. "@example.com") ..
      ',"SK":' .. s("LOCK") .. ',"owner":' .. s("ACCT#" .. id) .. '},' .. guard .. '}},' ..
    '{"Put":{"TableName":"' .. tbl .. '","Item":{"PK":' .. s("UNIQ#HANDLE#h" .. id) ..
      ',"SK":' .. s("LOCK") .. ',"owner":' .. s("ACCT#" .. id) .. '},' .. guard .. '}}]}'
end

-- Contention: every request increments one hot counter item and writes a
-- ledger item of its own, as one transaction. Concurrent ones conflict
-- (TransactionCanceledException with TransactionConflict, counted as non-2xx).
body.hot = function()
  counter = counter + 1
  local id = tostring(math.random(1, 2000000000)) .. "-" .. (tid or 0) .. "-" .. counter
  return '{"TransactItems":[' ..
    '{"Update":{"TableName":"' .. tbl .. '","Key":{"PK":' .. s("hot") .. ',"SK":' .. s("counter") .. '},' ..
      '"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}},' ..
    '{"Put":{"TableName":"' .. tbl .. '","Item":{"PK":' .. s("LEDGER#" .. id) .. ',"SK":' .. s("ENTRY") .. '},' ..
      '"ConditionExpression":"attribute_not_exists(PK)"}}]}'
end

-- 25 puts of distinct keys (a batch may not name one key twice).
body.bwrite = function()
  counter = counter + 1
  local p = "bw#" .. math.random(1, 2000000000) .. "-" .. (tid or 0) .. "-" .. counter
  local parts = {}
  for i = 1, 25 do
    parts[i] = '{"PutRequest":{"Item":{"PK":' .. s(p) .. ',"SK":' .. s(string.format("%02d", i)) ..
      ',"v":' .. s("batch payload of about sixty bytes, the same in every item") .. '}}}'
  end
  return '{"RequestItems":{"' .. tbl .. '":[' .. table.concat(parts, ",") .. ']}}'
end

-- 100 distinct keys out of the loaded ones.
body.bget = function()
  local seen, keys = {}, {}
  while #keys < 100 do
    local k = math.random(1, nkeys)
    if not seen[k] then seen[k] = true; keys[#keys + 1] = user_key(k) end
  end
  return '{"RequestItems":{"' .. tbl .. '":{"Keys":[' .. table.concat(keys, ",") .. ']}}}'
end

-- PartiQL: the get above as a SELECT by full key, with ? parameters.
body.pselect = function()
  return '{"Statement":"SELECT * FROM \\"' .. tbl .. '\\" WHERE PK = ? AND SK = ?","Parameters":[' ..
    s("user#" .. math.random(1, nkeys)) .. ',' .. s("profile") .. ']}'
end

-- PartiQL: the put above as an INSERT of the same ~100-byte item under a new
-- key each time (an INSERT of an existing key is a DuplicateItemException).
body.pinsert = function()
  counter = counter + 1
  local k = "ins#" .. math.random(1, 2000000000) .. "-" .. (tid or 0) .. "-" .. counter
  return '{"Statement":"INSERT INTO \\"' .. tbl .. '\\" VALUE {\'PK\': ?, \'SK\': \'profile\', ' ..
    '\'name\': \'Ada Lovelace\', \'email\': ?, \'n\': ?, \'tags\': <<\'a\', \'b\', \'c\'>>, ' ..
    '\'bio\': \'Analyst and metaphysician\'}","Parameters":[' .. s(k) .. ',' .. s("ada" .. counter .. "@example.com") ..
    ',{"N":"' .. counter .. '"}]}'
end

local make = body[op]
request = function()
  return wrk.format(nil, nil, nil, make())
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH_RESULT op=%s requests=%d duration_us=%d status=%d connect=%d read=%d write=%d timeout=%d " ..
    "p50_us=%d p90_us=%d p99_us=%d p999_us=%d max_us=%d mean_us=%.1f\n",
    op, summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
    latency.max, latency.mean))
end
