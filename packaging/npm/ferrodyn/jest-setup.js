// Jest global setup: `globalSetup: 'ferrodyn/jest-setup'` (with
// `globalTeardown: 'ferrodyn/jest-teardown'`) starts one server for the run
// and points the AWS SDK at it through the environment, which the test
// workers inherit; tests call `isolate()` in beforeEach for tables of their own.
'use strict';

const { startFerrodyn } = require('./index.js');

module.exports = async function setup() {
  const server = await startFerrodyn();
  Object.assign(process.env, server.namespace('ferrodyn').env(), {
    FERRODYN_ENDPOINT: server.endpoint,
    FERRODYN_REGION: server.region,
  });
  globalThis.__FERRODYN_SERVER__ = server;
};
