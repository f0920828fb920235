// A table's Partitions tab: Contributor Insights, a card for the table and
// one for each global index (on/off, the most accessed and most throttled
// keys of the last minutes), then its
// partitions as Ferrodyn keeps them (ranges
// of the key hash, each serving 3,000 read and 1,000 write units a second
// and splitting past its size), their sizes and, with --partition-limits
// on, their heat and throttles; the global indexes' partitions; the
// stream's shards per partition. Ferrodyn only (GET /ferrodyn/partitions):
// AWS does not show its partitions.

import { api } from './api.js';
import { el, fill, button, errorBox, formatBytes } from './ui.js';

/** The tab's body for `table`; `described` is its DescribeTable answer
 * (its key schema and global indexes: one Insights card each). */
export function partitionsView(table, described = {}) {
  const sorted = (keys) => (keys || []).some((k) => k.KeyType === 'RANGE');
  const resources = [{ index: null, sorted: sorted(described.KeySchema) },
    ...(described.GlobalSecondaryIndexes || []).map((i) => ({ index: i.IndexName, sorted: sorted(i.KeySchema) }))];
  const insights = resources.map((resource) => {
    const label = resource.index ? `Contributor insights of index ${resource.index}` : 'Contributor insights';
    const box = el('section.card.insights', { 'aria-label': label }, el('p.hint', 'Reading Contributor Insights…'));
    loadInsights(box, table, resource, 5);
    return box;
  });
  const out = el('div.partitionsview', el('p.hint', 'Reading the partitions…'));
  const load = async () => {
    try {
      const r = await api('partitions', { table });
      fill(out, header(r, load), partitionTable(r.partitions, r.partitionLimits, 'Table partitions'),
        indexSections(r.indexes || {}, r.partitionLimits), shardNote(r.shards || []));
    } catch (e) {
      fill(out, errorBox(e));
    }
  };
  load();
  return el('div', ...insights, out);
}

const RULES = {
  PKC: 'Most accessed partition keys (units)', SKC: 'Most accessed items (units)',
  PKT: 'Most throttled partition keys (requests)', SKT: 'Most throttled items (requests)',
};

/** Contributor Insights of `table` or of its global index
 * `resource.index`: status, a switch, the top ten keys of each rule over
 * the last `minutes` (the sort-key rules only when it has a sort key). */
async function loadInsights(box, table, resource, minutes) {
  const { index } = resource;
  const reload = (m = minutes) => loadInsights(box, table, resource, m);
  try {
    const r = await api('insights', index ? { table, index, minutes } : { table, minutes });
    const on = r.status === 'ENABLED' || r.status === 'ENABLING';
    const toggle = button(on ? 'Disable' : 'Enable', async () => {
      const request = { TableName: table, ContributorInsightsAction: on ? 'DISABLE' : 'ENABLE' };
      if (index) request.IndexName = index;
      try {
        await api('call/UpdateContributorInsights', request);
      } catch (e) {
        fill(box, errorBox(e));
        return;
      }
      setTimeout(reload, 1200);
      reload();
    }, on ? 'small' : 'small primary');
    const span = select(['5', '60'].map((m) => [m, `last ${m} min`]), String(minutes), (m) => reload(Number(m)));
    const rules = r.rules.filter((rule) => resource.sorted || rule.rule.startsWith('P'));
    const lists = rules.filter((rule) => rule.top.length || on).map((rule) => el('div.rule',
      el('h4', RULES[rule.rule] || rule.rule),
      rule.top.length ? el('ol.topkeys', { 'aria-label': rule.rule }, rule.top.map((t) => el('li', el('code', t.key.join(' / ')), el('span.num', units(t.value)))))
        : el('p.hint', 'Nothing yet.')));
    const title = index ? ['Contributor insights · index ', el('code', index)] : 'Contributor insights';
    fill(box,
      el('div.row', el('h3', title), el('span', { class: `pill s-${r.status.toLowerCase()}` }, r.status), r.mode ? el('span.hint', r.mode) : null,
        el('span.spacer'), span, button('Refresh', () => reload(), 'small'), toggle),
      on ? el('div.rules', lists) : el('p.hint', index
        ? `Off: no key of ${index} is counted. Enable it to see which of the index's keys take the most capacity (the table's writes landing on it) and which are throttled.`
        : 'Off: no key is counted. Enable it to see which keys take the most capacity and which are throttled (UpdateContributorInsights).'));
  } catch (e) {
    fill(box, errorBox(e));
  }
}

/** A <select> of [value, label] options calling `onchange(value)`. */
function select(options, current, onchange) {
  return el('select', { 'aria-label': 'Period', onchange: (e) => onchange(e.target.value) },
    options.map(([value, label]) => el('option', { value, selected: value === current }, label)));
}

function header(r, load) {
  const count = r.partitions.length;
  const items = r.partitions.reduce((n, p) => n + (p.items || 0), 0);
  return el('div.row',
    el('p.hint', `${count} partition${count === 1 ? '' : 's'} · ${items} item(s) · each serves 3,000 read and 1,000 write units a second · `,
      r.partitionLimits ? 'per-partition limits on' : 'per-partition limits off (--partition-limits on throttles hot keys)'),
    el('span.spacer'), button('Refresh', load, 'small'));
}

/** Partitions as rows: id, hash range, parent, size bar, heat. */
function partitionTable(partitions, limits, label) {
  const most = Math.max(1, ...partitions.map((p) => p.bytes || 0));
  const heatCells = (p) => limits
    ? [el('td.num', units(p.heat?.writeUnitsLastSecond)), el('td.num', units(p.heat?.readUnitsLastSecond)),
      el('td.num', { class: p.heat?.throttlesLastMinute ? 'hot' : '' }, String(p.heat?.throttlesLastMinute ?? 0))]
    : [];
  return el('table.plain.partitions', { 'aria-label': label },
    el('thead', el('tr', el('th', 'id'), el('th', 'hash range'), el('th', 'from'), el('th', 'items'), el('th', 'size'),
      limits ? [el('th', 'writes/s'), el('th', 'reads/s'), el('th', 'throttles/min')] : [])),
    el('tbody', partitions.map((p) => el('tr',
      el('td', String(p.id)),
      el('td', el('code', `${p.lo}–${p.hi}`)),
      el('td.hint', p.parent === undefined ? 'created' : `split of ${p.parent}`),
      el('td.num', p.items === undefined ? '' : String(p.items)),
      el('td', p.bytes === undefined ? '' : sizeBar(p.bytes, most)),
      heatCells(p)))));
}

/** A bar as long as `bytes` is against the largest partition (its width
 * set through the CSSOM: the console's policy forbids style attributes). */
function sizeBar(bytes, most) {
  const fill = el('span.fill');
  fill.style.width = `${Math.round((100 * bytes) / most)}%`;
  return el('span.sizebar', { title: `${bytes} bytes` }, fill, el('span.label', formatBytes(bytes)));
}

function units(value) {
  return value === undefined ? '0' : (Math.round(value * 10) / 10).toString();
}

function indexSections(indexes, limits) {
  const names = Object.keys(indexes);
  if (!names.length) return null;
  return names.map((name) => el('details.index-partitions',
    el('summary', `Global index ${name}: ${indexes[name].length} partition(s)`),
    partitionTable(indexes[name], limits, `Partitions of ${name}`)));
}

function shardNote(shards) {
  if (!shards.length) return el('p.hint', 'No stream: a stream would have one open shard per partition.');
  const open = shards.filter((s) => s.open).length;
  return el('p.hint', `Stream: ${shards.length} shard(s), ${open} open (one per partition); the Streams tab draws their tree.`);
}
