// A table's Replicas tab: its global-table state. DescribeTable gives the
// version, MultiRegionConsistency, the replicas (other regions) and the
// witnesses; Ferrodyn's GET /ferrodyn/replication (console API
// `replication`) gives, per replica region, the replication latency (last,
// p50, p99), the age of the oldest change not yet applied there, changes
// sent, the fill of a new replica and the last error. Replicas are added
// and removed with UpdateTable's ReplicaUpdates, the request shown before
// it is sent. While a replica is CREATING, UPDATING or DELETING, or one
// just added or removed has not settled, the tab reads again every second;
// the toast of an addition or removal then says how it ended (ACTIVE,
// removed, or the status it stopped at), not what was true when it began.

import { api, call } from './api.js';
import { el, fill, button, dialog, field, errorBox, toast } from './ui.js';
import { requestPreview } from './tables.js';

const SETTLING = ['CREATING', 'UPDATING', 'DELETING'];

/** The tab's body for `table`. */
export function replicasView(table) {
  const out = el('div.replicasview', el('p.hint', 'Reading the replicas…'));
  let timer = null;
  // Region → the toast of a replica added or removed from this tab.
  const watched = new Map();
  const load = async () => {
    clearTimeout(timer);
    if (!out.isConnected && out.dataset.loaded) return; // the tab was left
    const [described, report] = await Promise.allSettled([
      call('DescribeTable', { TableName: table }), api('replication', { table })]);
    if (described.status === 'rejected') {
      fill(out, errorBox(described.reason));
      return;
    }
    const t = described.value.Table;
    fill(out, header(t, report, load), t.GlobalTableVersion ? globalState(t, report, load) : notGlobal(t));
    out.dataset.loaded = 'true';
    settle(watched, t);
    if (watched.size || (t.Replicas || []).some((r) => SETTLING.includes(r.ReplicaStatus))) timer = setTimeout(load, 1000);
  };
  load.watched = watched; // the dialogs add to it
  load();
  return out;
}

/** Tells the toasts of `watched` replicas that got where they were going
 * (ACTIVE, or gone when removed), or stopped at another status, and
 * stops watching them. */
function settle(watched, t) {
  for (const [region, { note, removing }] of watched) {
    const status = (t.Replicas || []).find((r) => r.RegionName === region)?.ReplicaStatus;
    if (removing ? !status : status === 'ACTIVE') {
      note.update(removing ? `Replica in ${region} removed` : `Replica in ${region} is ACTIVE`, 'ok');
    } else if (status && status !== 'ACTIVE' && !SETTLING.includes(status)) {
      note.update(`Replica in ${region} is ${status}`, 'error');
    } else {
      continue;
    }
    watched.delete(region);
  }
}

function header(t, report, load) {
  const region = report.value?.RegionName;
  const replicas = 1 + (t.Replicas || []).length;
  const witnesses = (t.GlobalTableWitnesses || []).length;
  const size = `${replicas} replicas${witnesses ? ` + ${witnesses} witness` : ''}`;
  // An MRSC group is formed, and changed, as a whole (strong.rs).
  const strong = t.MultiRegionConsistency === 'STRONG';
  return el('div.row.replicas-head',
    el('h3', 'Global table'),
    el(`span.pill${t.GlobalTableVersion ? '.s-active' : ''}`, t.GlobalTableVersion ? size : 'one region'),
    region ? el('span.hint', `this replica: ${region}`) : null,
    el('span.spacer'),
    button('Refresh', load, 'small'),
    strong ? null : button('Add replica…', () => addReplicaDialog(t, load), 'small primary'));
}

function notGlobal(t) {
  return el('div.card.replicas-none',
    el('p', `${t.TableName} is not a global table: it lives in this region only.`),
    el('p.hint', 'Add a replica to make it one. The region may be one this server holds (any region name), or one another Ferrodyn server holds: ',
      el('code', 'ferrodyn serve --peer REGION=URL'), '. The replica is filled from the existing items while writes go on, then ACTIVE; changes replicate asynchronously, the last writer by write time winning (MultiRegionConsistency EVENTUAL).'),
    el('p.hint', 'Strong consistency (MRSC) takes three regions formed at once: ',
      el('code', `ferrodyn replicas ${t.TableName} --add R1 --add R2 --strong`), '.'));
}

/** Version, consistency, witnesses, and the replicas with their figures. */
function globalState(t, report, load) {
  const targets = report.value?.Targets || [];
  const strong = t.MultiRegionConsistency === 'STRONG';
  const witnesses = t.GlobalTableWitnesses || [];
  return el('div',
    el('dl.kv.replicas-summary',
      el('dt', 'Global table version'), el('dd', t.GlobalTableVersion),
      el('dt', 'Multi-Region consistency'), el('dd', t.MultiRegionConsistency || 'EVENTUAL',
        el('span.hint', strong ? ' — a write is acknowledged once two regions hold it' : ' — asynchronous; last writer wins by write time')),
      el('dt', 'Witnesses'), el('dd', witnesses.length
        ? witnesses.map((w) => el('span.witness', w.RegionName, ' ', el(`span.pill.s-${(w.WitnessStatus || '').toLowerCase()}`, w.WitnessStatus)))
        : 'none'),
      strong ? null : el('dt', 'Tombstones reclaimed'),
      strong ? null : el('dd.tombstones', (report.value?.TombstonesReclaimed ?? '—').toLocaleString(),
        el('span.hint', ' — deleted items\' versions, dropped once a day old and once every other region has delivered what it made before them'))),
    replicaTable(t, targets, load),
    report.status === 'rejected' ? errorBox(report.reason) : null);
}

function replicaTable(t, targets, load) {
  const replicas = t.Replicas || [];
  if (!replicas.length) return el('p.hint', 'No other region holds a replica.');
  return el('table.plain.replicas', { 'aria-label': 'Replicas' },
    el('thead', el('tr', ['Region', 'Status', 'Latency last / p50 / p99', 'Pending age', 'Changes sent', 'Fill', 'Last error', '']
      .map((h) => el('th', h)))),
    el('tbody', replicas.map((r) => {
      const target = targets.find((x) => x.RegionName === r.RegionName) || {};
      return el('tr', { dataset: { region: r.RegionName } },
        el('td', el('strong', r.RegionName)),
        el('td', el(`span.pill.s-${(r.ReplicaStatus || '').toLowerCase()}`, r.ReplicaStatus),
          target.Failing ? el('span.pill.failing', { title: 'Sends to this region fail; they are retried, and nothing is lost meanwhile' }, 'retrying') : null),
        el('td.num.latency', latency(target.ReplicationLatencyMs)),
        el('td.num.pending', target.PendingAgeMs === undefined ? '—' : ms(target.PendingAgeMs)),
        el('td.num', target.ChangesSent === undefined ? '—' : target.ChangesSent.toLocaleString()),
        el('td', fillText(target, r.ReplicaStatus)),
        // The data link's error, or else why settings wait (a link with no
        // data to send has not failed yet).
        el('td.lasterror', target.LastError ? el('span', { class: target.Failing ? 'bad' : 'hint' }, target.LastError)
          : target.SettingsError ? el('span.hint', target.SettingsError) : '',
          target.SettingsWaiting ? el('span.pill.waiting', { title: target.SettingsError || 'Delivered in order once the region can take them' },
            `${target.SettingsWaiting} setting change${target.SettingsWaiting === 1 ? '' : 's'} waiting`) : null),
        el('td', r.ReplicaStatus === 'ACTIVE' && t.MultiRegionConsistency !== 'STRONG'
          ? button('Remove…', () => removeReplicaDialog(t.TableName, r.RegionName, load), 'small') : null));
    })));
}

function latency(figures) {
  if (!figures || !figures.Samples) return el('span.hint', 'no changes yet');
  return el('span', { title: `${figures.Samples} change(s) measured` }, `${ms(figures.Last)} / ${ms(figures.P50)} / ${ms(figures.P99)}`);
}

function ms(value) {
  return value === null || value === undefined ? '—' : `${value.toLocaleString()} ms`;
}

function fillText(target, status) {
  if (target.FillItemsSent !== null && target.FillItemsSent !== undefined) return `${target.FillItemsSent.toLocaleString()} items sent`;
  return status === 'ACTIVE' && target.RegionName ? 'done' : '';
}

/** A dialog showing `request` (UpdateTable) as JSON and an aws command;
 * `body` above it; `action` labels the button that sends it. */
function updateDialog(title, body, request, action, cls, done) {
  return dialog(title, (close) => {
    const preview = el('div.preview');
    const status = el('div');
    const show = requestPreview(preview, 'UpdateTable', request);
    const form = el('form.form', { 'aria-label': title, oninput: show, onsubmit: async (e) => {
      e.preventDefault();
      try {
        await call('UpdateTable', request());
        close(true);
        done();
      } catch (err) {
        fill(status, errorBox(err));
      }
    } },
    body, el('h3', 'Request'), preview, status,
    el('footer', button('Cancel', () => close(), 'ghost'), el(`button.btn.${cls}`, { type: 'submit' }, action)));
    show();
    return form;
  }, { wide: true });
}

function addReplicaDialog(t, load) {
  const region = el('input', { name: 'replica-region', required: true, autofocus: true, autocomplete: 'off', placeholder: 'us-west-2', 'aria-label': 'Region' });
  const request = () => {
    const name = region.value.trim();
    return { TableName: t.TableName, ReplicaUpdates: [{ Create: { RegionName: name || 'REGION' } }] };
  };
  const body = el('div',
    field('Region', region, 'A region of this server, or one a --peer server holds.'),
    el('p.hint', 'The replica is CREATING while it is filled from the existing items (writes go on meanwhile), then ACTIVE.'));
  return updateDialog(`Add a replica of ${t.TableName}`, body, request, 'Create replica', 'primary', () => {
    const name = region.value.trim();
    load.watched.set(name, { note: toast(`Replica in ${name} is being created`, 'ok') });
    load();
  });
}

function removeReplicaDialog(table, region, load) {
  const request = () => ({ TableName: table, ReplicaUpdates: [{ Delete: { RegionName: region } }] });
  const body = el('p.warn', `This deletes the table in ${region} and every item it holds there. The table in this region stays, with its items; the other replicas stay too.`);
  return updateDialog(`Remove the replica in ${region}`, body, request, 'Remove replica', 'danger', () => {
    load.watched.set(region, { note: toast(`Replica in ${region} is being removed`, 'ok'), removing: true });
    load();
  });
}
