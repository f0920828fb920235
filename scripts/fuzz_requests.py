#!/usr/bin/env python3
"""Throws random, mostly invalid DynamoDB requests at a running server and reports any 5xx answer or
missing answer (a crash or hang). Every operation, random fields, odd values, broken expressions.

usage: scripts/fuzz_requests.py URL SEED COUNT    e.g. scripts/fuzz_requests.py http://127.0.0.1:8000/ 1 3000
Last run (2026-11-30): seeds 1-4 x 3,000 requests against a debug build: no 5xx, no crash."""
import json, random, sys, urllib.request

URL = sys.argv[1]
OPS = ["CreateTable","DescribeTable","ListTables","DeleteTable","UpdateTable","PutItem","GetItem","UpdateItem","DeleteItem","Query","Scan","BatchGetItem","BatchWriteItem","TransactGetItems","TransactWriteItems","TagResource","UntagResource","ListTagsOfResource","UpdateTimeToLive","DescribeTimeToLive"]
def call(op, body):
    req = urllib.request.Request(URL, data=body, method="POST", headers={"Content-Type":"application/x-amz-json-1.0","X-Amz-Target":"DynamoDB_20120810."+op,"Authorization":"AWS4-HMAC-SHA256 Credential=a/20261130/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"})
    try:
        with urllib.request.urlopen(req, timeout=20) as r: return r.status, r.read()
    except urllib.error.HTTPError as e: return e.code, e.read()
call("CreateTable", json.dumps({"TableName":"fz","BillingMode":"PAY_PER_REQUEST","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],"AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"N"},{"AttributeName":"g","AttributeType":"S"}],"GlobalSecondaryIndexes":[{"IndexName":"gi","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}).encode())
rnd = random.Random(int(sys.argv[2]))
def rval(d=0):
    k = rnd.choice(["S","N","B","BOOL","NULL","L","M","SS","NS","BS","X",None,"num","str"])
    if k is None: return None
    if k=="num": return rnd.choice([0,-1,1e308,2**70])
    if k=="str": return rnd.choice(["", "x"*rnd.randint(0,3000), "\u0000", "😀"])
    if k=="S": return {"S": rnd.choice(["", "a", "x"*rnd.randint(0,5000)])}
    if k=="N": return {"N": rnd.choice(["1","-0","1e126","1e-131","abc","", "9"*40, "0.5", "-1e-130"])}
    if k=="B": return {"B": rnd.choice(["AA==","!!","", "AAAA"])}
    if k=="BOOL": return {"BOOL": rnd.choice([True, 1, "x"])}
    if k=="NULL": return {"NULL": rnd.choice([True, False])}
    if k=="L": return {"L": [rval(d+1) for _ in range(rnd.randint(0,3))] if d<6 else []}
    if k=="M": return {"M": {rnd.choice(["a","b","","#x"]): rval(d+1) for _ in range(rnd.randint(0,3))} if d<6 else {}}
    if k=="SS": return {"SS": rnd.choice([[],["a","a"],["a","b"]])}
    if k=="NS": return {"NS": rnd.choice([[],["1","1.0"],["1","2"],["x"]])}
    if k=="BS": return {"BS": rnd.choice([[],["AA=="],["!!"]])}
    return {"X": 1}
def ritem():
    it = {k: rval() for k in rnd.sample(["p","c","g","a","b",""], rnd.randint(0,5))}
    return it
EXPRS = ["a = :v","SET a = :v","REMOVE a[0]","ADD a :v","DELETE a :v","#n = :v","a.b[1].c","size(a) > :v","a IN (:v)","begins_with(a, :v)","p = :v AND c BETWEEN :v AND :v","","(((","a = :v AND","SET a = a + :v, b = list_append(a, :v)","attribute_type(a, :v)","contains(a, a)","p = :v","c > :v","NOT NOT NOT a"]
def rbody(op):
    b = {}
    for f in rnd.sample(["TableName","Item","Key","KeyConditionExpression","FilterExpression","UpdateExpression","ConditionExpression","ProjectionExpression","ExpressionAttributeValues","ExpressionAttributeNames","Limit","ExclusiveStartKey","Segment","TotalSegments","IndexName","Select","ReturnValues","RequestItems","TransactItems","ReturnConsumedCapacity","ScanIndexForward","ConsistentRead","Expected","AttributeUpdates","KeyConditions","ClientRequestToken","ResourceArn","Tags","TimeToLiveSpecification"], rnd.randint(0,8)):
        if f=="TableName": b[f]=rnd.choice(["fz","fz","nope","",5,None])
        elif f in ("Item","Key","ExclusiveStartKey"): b[f]=ritem()
        elif f.endswith("Expression"): b[f]=rnd.choice(EXPRS)
        elif f=="ExpressionAttributeValues": b[f]={":v": rval()}
        elif f=="ExpressionAttributeNames": b[f]={"#n": rnd.choice(["a","", "p"])}
        elif f in ("Limit","Segment","TotalSegments"): b[f]=rnd.choice([0,1,-1,10**12,"x",3])
        elif f=="IndexName": b[f]=rnd.choice(["gi","nope",""])
        elif f=="Select": b[f]=rnd.choice(["COUNT","ALL_PROJECTED_ATTRIBUTES","SPECIFIC_ATTRIBUTES","x"])
        elif f=="ReturnValues": b[f]=rnd.choice(["ALL_OLD","UPDATED_NEW","x"])
        elif f=="RequestItems": b[f]={"fz": rnd.choice([[{"PutRequest":{"Item":ritem()}}],[{"DeleteRequest":{"Key":ritem()}}],{"Keys":[ritem()]},[],None,[{}]])}
        elif f=="TransactItems": b[f]=[rnd.choice([{"Put":{"TableName":"fz","Item":ritem()}},{"Update":{"TableName":"fz","Key":ritem(),"UpdateExpression":rnd.choice(EXPRS)}},{"ConditionCheck":{"TableName":"fz","Key":ritem(),"ConditionExpression":rnd.choice(EXPRS)}},{"Get":{"TableName":"fz","Key":ritem()}},{}]) for _ in range(rnd.randint(0,3))]
        elif f in ("Expected","AttributeUpdates","KeyConditions"): b[f]={"a": rnd.choice([{"Value":rval()},{"Exists":False},{"ComparisonOperator":"EQ","AttributeValueList":[rval()]},{"Action":"ADD","Value":rval()},None])}
        else: b[f]=rnd.choice([True,"x",None,{"Enabled":True,"AttributeName":"t"},[{"Key":"k","Value":"v"}]])
    return b
bad = 0
for i in range(int(sys.argv[3])):
    op = rnd.choice(OPS)
    body = json.dumps(rbody(op)).encode()
    try:
        status, text = call(op, body)
    except Exception as e:
        print("NO ANSWER", op, body[:300], e); bad += 1; break
    if status >= 500:
        print("5xx", op, body[:400], text[:300]); bad += 1
print("done", bad)
