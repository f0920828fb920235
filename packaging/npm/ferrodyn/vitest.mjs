// Vitest global setup: `globalSetup: ['ferrodyn/vitest']` starts one server
// for the run and points the AWS SDK at it through the environment; tests
// call `isolate()` (from 'ferrodyn') in beforeEach for tables of their own.
import ferrodyn from './index.js';

export default async function setup(project) {
  const server = await ferrodyn.startFerrodyn();
  const env = server.namespace('ferrodyn').env();
  Object.assign(process.env, env, { FERRODYN_ENDPOINT: server.endpoint, FERRODYN_REGION: server.region });
  project?.provide?.('ferrodynEndpoint', server.endpoint);
  return async () => server.stop();
}
