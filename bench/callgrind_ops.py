"""Instruction counts per op under callgrind (noise-free regression check): one valgrind
run of `ferrodyn serve --in-memory` per op, N sequential requests from one client.

usage: bench/callgrind_ops.py BINARY PORT TAG N OPS [--durable]   (OPS: none,put,get,txn,bwrite,update)
Prints "TAG OP TOTAL_INSTRUCTIONS"; subtract the "none" run (start-up and CreateTable).
--durable serves from a fresh data directory (the default durability) instead of --in-memory; its
background threads (journal syncer, fjall's workers) run on a clock, so its counts vary more."""
import os, shutil, signal, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench

T = "cgbench"
OPS = {
    "none": None,
    "put": lambda i: ("PutItem", {"TableName": T, "Item": bench.user_item(i % 1000, i)}),
    "get": lambda i: ("GetItem", {"TableName": T, "Key": {"PK": {"S": f"user#{i % 1000}"}, "SK": {"S": "profile"}}}),
    "txn": lambda i: ("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": T, "Item": {"PK": {"S": f"ACCT#{i}-{k}"}, "SK": {"S": "P"}},
                 "ConditionExpression": "attribute_not_exists(PK)"}} for k in range(3)]}),
    "bwrite": lambda i: ("BatchWriteItem", {"RequestItems": {T: [{"PutRequest": {"Item": {
        "PK": {"S": f"bw#{i}"}, "SK": {"S": f"{j:02d}"}, "v": {"S": "batch payload of about sixty bytes"}}}}
        for j in range(25)]}}),
    "update": lambda i: ("UpdateItem", {"TableName": T, "Key": {"PK": {"S": "hot"}, "SK": {"S": "c"}},
        "UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}),
}

def run(binary, port, op, n, out, durable):
    data = tempfile.mkdtemp(prefix="cgbench-") if durable else None
    storage = ["--data-dir", data] if durable else ["--in-memory"]
    server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                               binary, "serve", *storage, "--console", "off", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = bench.Client(f"http://127.0.0.1:{port}", timeout=120)
    for _ in range(300):
        try:
            c.call("ListTables", {}); break
        except Exception:
            time.sleep(0.5)
    c.call("CreateTable", {"TableName": T, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}]})
    if OPS[op]:
        for i in range(n):
            name, body = OPS[op](i)
            st, r = c.call(name, body)
            assert st == 200, (name, st, r)
    server.send_signal(signal.SIGINT); server.wait()
    if data:
        shutil.rmtree(data, ignore_errors=True)
    for line in open(out):
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])

binary, port, tag, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
durable = "--durable" in sys.argv[6:]
for op in sys.argv[5].split(","):
    total = run(binary, port, op, n, os.path.join(tempfile.gettempdir(), f"callgrind.{tag}.{op}"), durable)
    print(f"{tag} {op} {total}", flush=True)
