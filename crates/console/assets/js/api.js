// The console API client: every request goes to /console/api/... on this
// origin (the server holds the credentials and does the DynamoDB work).
// Failures become ApiError(code, message, body) as DynamoDB names them.
// When the server stops answering, a banner says so (and the connection dot
// turns red) and the page polls until it is back, then tells its listeners
// to refresh. An idle page notices too: a heartbeat asks every 15 s while
// the page is visible.

import { banner, toast } from './ui.js';

export class ApiError extends Error {
  constructor(code, message, body = null, status = 0) {
    super(message);
    this.code = code;
    this.body = body;
    this.status = status;
  }
}

let away = false;
const reconnectListeners = [];

export function onReconnect(listener) {
  reconnectListeners.push(listener);
}

/** Whether the connection is down: the banner and the dot agree. */
function setAway(value) {
  away = value;
  if (value) document.body.dataset.connection = 'lost';
  else delete document.body.dataset.connection;
}

function lost(reason) {
  if (away) return;
  setAway(true);
  banner(reason);
  const poll = async () => {
    try {
      const response = await fetch('/console/api/info', { cache: 'no-store' });
      const data = await response.json();
      if (response.ok && data.endpoint) {
        // The console answers; is the endpoint behind it back too?
        const probe = await fetch('/console/api/call/ListTables', {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"Limit":1}',
        });
        if (probe.status !== 502) {
          setAway(false);
          banner(null);
          toast('Connection restored', 'ok');
          reconnectListeners.forEach((l) => l());
          return;
        }
      }
    } catch { /* still away */ }
    setTimeout(poll, 1500);
  };
  setTimeout(poll, 1000);
}

/** Starts the idle heartbeat: the console server and its endpoint are
 * asked (the cheapest call, ListTables with Limit 1) every `seconds` while
 * the page is visible and nothing is known to be wrong. */
export function startHeartbeat(seconds = 15) {
  setInterval(() => {
    if (away || document.hidden) return;
    api('call/ListTables', { Limit: 1 }).catch(() => { /* lost() has said so */ });
  }, seconds * 1000);
}

/** POSTs `body` (or GETs when body is undefined) to /console/api/<path>. */
export async function api(path, body) {
  let response;
  try {
    response = await fetch(`/console/api/${path}`, body === undefined
      ? { cache: 'no-store' }
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (e) {
    lost('The console server is not answering — retrying…');
    throw new ApiError('ServerUnreachable', 'The console server did not answer; the request may not have been sent.');
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    throw new ApiError('BadResponse', `HTTP ${response.status} without a JSON body`, null, response.status);
  }
  if (!response.ok) {
    if (response.status === 502 && data?.code === 'EndpointUnreachable') {
      lost('The DynamoDB endpoint is not answering — retrying…');
    }
    throw new ApiError(data?.code || `HTTP${response.status}`, data?.message || '', data?.body ?? null, response.status);
  }
  return data;
}

/** One DynamoDB operation through the console (DynamoDB JSON both ways). */
export const call = (operation, request = {}) => api(`call/${operation}`, request);
