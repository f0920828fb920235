// The jest setup as a user meets it: one server for the run, started by the
// global setup; each test isolates itself in a namespace.
const { isolate } = require('ferrodyn');
const { CreateTableCommand, DynamoDBClient, ListTablesCommand } = require('@aws-sdk/client-dynamodb');

let ns;
beforeEach(() => {
  ns = isolate();
});

test.each([1, 2])('test %i starts empty and owns its tables', async () => {
  const db = new DynamoDBClient({}); // from the environment isolate() set
  expect((await db.send(new ListTablesCommand({}))).TableNames).toEqual([]);
  await db.send(
    new CreateTableCommand({
      TableName: 'orders',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
    }),
  );
  expect((await db.send(new ListTablesCommand({}))).TableNames).toEqual(['orders']);
  expect(process.env.AWS_ACCESS_KEY_ID).toBe(ns.accessKey);
});
