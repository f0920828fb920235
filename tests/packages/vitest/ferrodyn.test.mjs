// The npm package as a user meets it: the global setup starts the binary the
// platform package installed; each test isolates itself in a namespace.
import { beforeEach, expect, test } from 'vitest';
import { connect, isolate, startFerrodyn } from 'ferrodyn';
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  ScanCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';

let ns;
beforeEach(() => {
  ns = isolate();
});

const createOrders = (db) =>
  db.send(
    new CreateTableCommand({
      TableName: 'orders',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
    }),
  );

test.each([1, 2])('test %i starts empty and owns its tables', async (run) => {
  const db = new DynamoDBClient(ns.clientConfig());
  expect((await db.send(new ListTablesCommand({}))).TableNames).toEqual([]);
  await createOrders(db);
  await db.send(new PutItemCommand({ TableName: 'orders', Item: { id: { S: `o${run}` } } }));
  const got = await db.send(new GetItemCommand({ TableName: 'orders', Key: { id: { S: `o${run}` } } }));
  expect(got.Item.id.S).toBe(`o${run}`);
});

test('a client built from the environment lands in the namespace', async () => {
  await createOrders(new DynamoDBClient(ns.clientConfig()));
  const fromEnv = new DynamoDBClient({}); // AWS_ENDPOINT_URL_DYNAMODB, the key, the region
  expect((await fromEnv.send(new ListTablesCommand({}))).TableNames).toEqual(['orders']);
});

test('snapshots restore, reset empties', async () => {
  const db = new DynamoDBClient(ns.clientConfig());
  await createOrders(db);
  for (let i = 0; i < 20; i++) {
    await db.send(new PutItemCommand({ TableName: 'orders', Item: { id: { S: `o${i}` } } }));
  }
  expect((await ns.snapshot('seeded')).tables).toBe(1);
  await db.send(new PutItemCommand({ TableName: 'orders', Item: { id: { S: 'extra' } } }));
  await ns.restore('seeded');
  expect((await db.send(new ScanCommand({ TableName: 'orders' }))).Count).toBe(20);
  expect(await ns.reset()).toBe(1);
  expect((await db.send(new ListTablesCommand({}))).TableNames).toEqual([]);
});

test('the clock expires items and faults come and go', async () => {
  const db = new DynamoDBClient(ns.clientConfig());
  const server = connect();
  await createOrders(db);
  await db.send(
    new UpdateTimeToLiveCommand({
      TableName: 'orders',
      TimeToLiveSpecification: { Enabled: true, AttributeName: 'exp' },
    }),
  );
  const now = await server.now();
  const exp = String(Math.floor(now.getTime() / 1000) + 3600);
  await db.send(new PutItemCommand({ TableName: 'orders', Item: { id: { S: 's' }, exp: { N: exp } } }));
  expect(await server.advance('2h')).toBe(1);
  expect((await db.send(new GetItemCommand({ TableName: 'orders', Key: { id: { S: 's' } } }))).Item).toBeUndefined();

  await ns.faults(['BatchWriteItem=unprocessed@1.0']);
  const batch = () =>
    db.send(new BatchWriteItemCommand({ RequestItems: { orders: [{ PutRequest: { Item: { id: { S: 'b' } } } }] } }));
  expect((await batch()).UnprocessedItems.orders).toHaveLength(1);
  await ns.clearFaults();
  expect((await batch()).UnprocessedItems).toEqual({});
});

test('startFerrodyn runs a server of its own', async () => {
  const server = await startFerrodyn({ clock: 'wall', namespaces: false });
  try {
    const db = new DynamoDBClient(server.namespace('any').clientConfig());
    expect((await db.send(new ListTablesCommand({}))).TableNames).toEqual([]);
  } finally {
    await server.stop();
  }
  expect(server.child.exitCode).toBe(0);
});
