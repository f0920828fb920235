// Ferrodyn from Node: find the binary the platform package installed, start
// an in-memory server (ready when the promise resolves: it binds before it
// prints its listening line, so nothing here sleeps), and drive its
// test-harness endpoints: namespaces, snapshots, the clock and faults.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const crypto = require('node:crypto');

const PLATFORMS = { 'linux-x64': '@ferrodyn/linux-x64' };

/** The ferrodyn executable: $FERRODYN_BIN, else this platform's package. */
function binaryPath() {
  if (process.env.FERRODYN_BIN) return process.env.FERRODYN_BIN;
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[platform];
  if (!pkg) {
    throw new Error(`ferrodyn has no binary for ${platform} (built: ${Object.keys(PLATFORMS).join(', ')}); set FERRODYN_BIN`);
  }
  try {
    return require.resolve(`${pkg}/bin/ferrodyn`);
  } catch {
    throw new Error(`${pkg} is not installed (npm skipped the optional dependency?); reinstall ferrodyn or set FERRODYN_BIN`);
  }
}

/**
 * Starts `ferrodyn serve --in-memory` on a free port.
 * Options: clock ('manual' | 'wall', default 'manual'), namespaces (default
 * true: each access key has its own tables), region, args (more flags).
 */
function startFerrodyn(options = {}) {
  const { clock = 'manual', namespaces = true, region = 'us-east-1', args = [] } = options;
  const flags = ['serve', '--in-memory', '--port', '0', '--exit-on-stdin-eof', '--clock', clock, '--region', region];
  if (namespaces) flags.push('--namespaces', 'access-key');
  flags.push(...args);
  const child = spawn(binaryPath(), flags, { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout });
    const failed = (why) => reject(new Error(`ferrodyn did not start: ${why}`));
    child.once('error', (error) => failed(error.message));
    child.once('exit', (code) => failed(`exited with ${code}`));
    lines.once('line', (line) => {
      const prefix = 'ferrodyn listening on ';
      if (!line.startsWith(prefix)) return failed(line);
      child.removeAllListeners('exit');
      lines.on('line', () => {}); // keep draining stdout
      child.unref();
      child.stdin.unref?.();
      child.stdout.unref?.();
      resolve(new Server(child, line.slice(prefix.length).split(' ')[0], region));
    });
  });
}

class Server {
  constructor(child, endpoint, region) {
    this.child = child;
    this.endpoint = endpoint;
    this.region = region;
  }

  /** Stops the server (it exits when its stdin closes). */
  async stop() {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.ref(); // wait for it even when nothing else keeps Node running
    this.child.stdin.end();
    await exited;
  }

  /** A namespace: an access key with tables of its own (fresh by default). */
  namespace(accessKey = `test${crypto.randomBytes(10).toString('hex')}`) {
    return new Namespace(this, accessKey);
  }

  /** One harness request as access key `key`; its JSON answer. */
  async request(method, urlPath, key = 'ferrodyn', body = undefined) {
    const response = await fetch(this.endpoint + urlPath, {
      method,
      headers: {
        authorization: `AWS4-HMAC-SHA256 Credential=${key}/20200101/${this.region}/dynamodb/aws4_request, SignedHeaders=host, Signature=0`,
        'content-type': 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${method} ${urlPath}: ${answer.message}`);
    return answer;
  }

  /** The server's clock, as a Date. */
  async now() {
    return new Date((await this.request('GET', '/ferrodyn/clock')).now);
  }

  /** Moves the manual clock ('25h', '1h 30m', or seconds); TTL deletes run at once. */
  async advance(duration) {
    return (await this.request('POST', '/ferrodyn/clock', undefined, { advance: duration })).expiredItems;
  }

  /** Sets the manual clock (a Date or an RFC 3339 string), never backwards. */
  async setTime(when) {
    const set = when instanceof Date ? when.toISOString() : when;
    return (await this.request('POST', '/ferrodyn/clock', undefined, { set })).expiredItems;
  }

  /** Replaces the fault rules (`--fault` text or objects) for requests
   * without a namespace of their own: on a server with namespaces, use
   * Namespace.faults. */
  async faults(rules, seed = undefined) {
    await this.request('PUT', '/ferrodyn/faults', undefined, { rules, seed });
  }

  async clearFaults() {
    await this.request('DELETE', '/ferrodyn/faults');
  }
}

class Namespace {
  constructor(server, accessKey) {
    this.server = server;
    this.accessKey = accessKey;
  }

  get endpoint() {
    return this.server.endpoint;
  }

  get region() {
    return this.server.region;
  }

  /** A client configuration for the AWS SDK for JavaScript v3. */
  clientConfig() {
    return {
      endpoint: this.endpoint,
      region: this.region,
      credentials: { accessKeyId: this.accessKey, secretAccessKey: 'ferrodyn' },
    };
  }

  /** Environment variables that point AWS SDKs at this namespace. */
  env() {
    return {
      AWS_ENDPOINT_URL_DYNAMODB: this.endpoint,
      AWS_REGION: this.region,
      AWS_DEFAULT_REGION: this.region,
      AWS_ACCESS_KEY_ID: this.accessKey,
      AWS_SECRET_ACCESS_KEY: 'ferrodyn',
    };
  }

  snapshot(name) {
    return this.server.request('POST', `/ferrodyn/snapshots/${name}`, this.accessKey);
  }

  restore(name) {
    return this.server.request('POST', `/ferrodyn/snapshots/${name}/restore`, this.accessKey);
  }

  async reset() {
    return (await this.server.request('DELETE', '/ferrodyn/data', this.accessKey)).tablesDeleted;
  }

  /** Injects failures (`--fault` text or objects) for this namespace only. */
  async faults(rules, seed = undefined) {
    await this.server.request('PUT', '/ferrodyn/faults', this.accessKey, { rules, seed });
  }

  async clearFaults() {
    await this.server.request('DELETE', '/ferrodyn/faults', this.accessKey);
  }
}

/** The server a global setup started (its endpoint in FERRODYN_ENDPOINT). */
function connect() {
  const endpoint = process.env.FERRODYN_ENDPOINT;
  if (!endpoint) throw new Error('no FERRODYN_ENDPOINT: add ferrodyn\'s global setup to your test configuration');
  return new Server(null, endpoint, process.env.FERRODYN_REGION || 'us-east-1');
}

/**
 * A fresh namespace on the global setup's server, put in process.env so SDK
 * clients created afterwards use it: call it in beforeEach.
 */
function isolate() {
  const namespace = connect().namespace();
  Object.assign(process.env, namespace.env());
  return namespace;
}

module.exports = { binaryPath, startFerrodyn, connect, isolate, Server, Namespace };
