// Rendering DynamoDB attribute values. Values stay DynamoDB JSON in the
// page: numbers are strings ({"N": "1234567890123456789012345678901234567.8"}),
// so they are shown exactly and never pass through a JS number.

import { el } from './ui.js';

export const TYPES = ['S', 'N', 'BOOL', 'NULL', 'B', 'SS', 'NS', 'BS', 'L', 'M'];

export function typeOf(value) {
  return value && typeof value === 'object' ? Object.keys(value)[0] : undefined;
}

function short(text, max = 80) {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/** Compact one-line text of a value (for lists and maps inside cells). */
export function summary(value) {
  const type = typeOf(value);
  const inner = value?.[type];
  switch (type) {
    case 'S': return JSON.stringify(inner);
    case 'N': return inner;
    case 'BOOL': return String(inner);
    case 'NULL': return 'null';
    case 'B': return `<${inner.length * 3 / 4 | 0} bytes>`;
    case 'SS': return `{${inner.map((s) => JSON.stringify(s)).join(', ')}}`;
    case 'NS': return `{${inner.join(', ')}}`;
    case 'BS': return `{${inner.length} binaries}`;
    case 'L': return `[${inner.map(summary).join(', ')}]`;
    case 'M': return `{${Object.entries(inner).map(([k, v]) => `${k}: ${summary(v)}`).join(', ')}}`;
    default: return JSON.stringify(value);
  }
}

/** A grid cell's content for one value: type badge + typed rendering. */
export function renderValue(value) {
  const type = typeOf(value);
  if (type === undefined) return el('span.absent', '');
  const inner = value[type];
  const badge = el(`span.t.t-${type}`, { title: typeTitle(type) }, type);
  let body;
  switch (type) {
    case 'S': body = el('span.v-s', inner.length > 120 ? { title: inner } : {}, short(inner, 120)); break;
    case 'N': body = el('span.v-n', inner); break;
    case 'BOOL': body = el(`span.v-bool.${inner}`, String(inner)); break;
    case 'NULL': body = el('span.v-null', 'null'); break;
    case 'B': body = el('span.v-b', { title: inner }, short(inner, 24)); break;
    case 'SS': case 'NS': case 'BS':
      // Members are cut to fit a cell; each keeps its whole text in its
      // title, and "+N" lists the members not shown.
      body = el('span.chips', inner.slice(0, 6).map((x) => el('span.chip', { title: String(x) }, short(String(x), 24))),
        inner.length > 6 ? el('span.more', { title: inner.slice(6).join('\n') }, `+${inner.length - 6}`) : null);
      break;
    default: body = el('span.v-doc', short(summary(value), 120));
  }
  return el('span.val', badge, body);
}

function typeTitle(type) {
  return {
    S: 'String', N: 'Number (exact, up to 38 digits)', BOOL: 'Boolean', NULL: 'Null', B: 'Binary (base64)',
    SS: 'String set', NS: 'Number set', BS: 'Binary set', L: 'List', M: 'Map',
  }[type];
}

/** Text a person edits for a value of `type`. */
export function editText(value) {
  const type = typeOf(value);
  const inner = value?.[type];
  switch (type) {
    case 'S': case 'N': case 'B': return inner;
    case 'BOOL': return String(inner);
    case 'NULL': return '';
    case 'SS': case 'NS': case 'BS': return inner.join('\n');
    case 'L': case 'M': return JSON.stringify(inner, null, 2);
    default: return '';
  }
}

/** The typed value from edited text, or throws with a readable message. */
export function parseTyped(type, text) {
  switch (type) {
    case 'S': return { S: text };
    case 'N': {
      const n = text.trim();
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(n)) throw new Error(`"${n}" is not a number`);
      return { N: n };
    }
    case 'B': return { B: text.trim() };
    case 'BOOL':
      if (!['true', 'false'].includes(text.trim())) throw new Error('a boolean is true or false');
      return { BOOL: text.trim() === 'true' };
    case 'NULL': return { NULL: true };
    case 'SS': case 'NS': case 'BS': {
      const items = text.split('\n').map((s) => (type === 'SS' ? s : s.trim())).filter((s) => s !== '');
      if (!items.length) throw new Error('a set has at least one element');
      return { [type]: items };
    }
    case 'L': case 'M': {
      const inner = JSON.parse(text);
      if (type === 'L' && !Array.isArray(inner)) throw new Error('a list is a JSON array of typed values');
      if (type === 'M' && (typeof inner !== 'object' || Array.isArray(inner))) throw new Error('a map is a JSON object of typed values');
      return { [type]: inner };
    }
    default: throw new Error(`unknown type ${type}`);
  }
}

/** Canonical text of a key (stable whatever the attribute order). */
export function keyId(table, key) {
  const names = Object.keys(key).sort();
  return table + '\u0000' + JSON.stringify(names.map((n) => [n, key[n]]));
}

/** The key of `item` under `keys` ([partition, sort?]). */
export function keyOf(item, keys) {
  const key = {};
  for (const name of keys) if (item[name] !== undefined) key[name] = item[name];
  return key;
}

/** Orders values of one attribute for the grid's column sort. */
export function compareValues(a, b) {
  const ta = typeOf(a), tb = typeOf(b);
  if (ta === undefined) return tb === undefined ? 0 : 1;
  if (tb === undefined) return -1;
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (ta === 'N') return compareNumbers(a.N, b.N);
  const sa = summary(a), sb = summary(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** Exact comparison of decimal strings (no floating point). */
export function compareNumbers(x, y) {
  const parse = (text) => {
    const [mantissa, exp = '0'] = text.toLowerCase().split('e');
    const neg = mantissa.startsWith('-');
    const [int, frac = ''] = mantissa.replace(/^[-+]/, '').split('.');
    const all = int + frac;
    const zeros = all.length - all.replace(/^0+/, '').length;
    const digits = all.slice(zeros).replace(/0+$/, '');
    // Position of the first significant digit relative to the decimal point.
    return { zero: digits === '', neg: neg && digits !== '', digits, mag: int.length + Number(exp) - zeros };
  };
  const a = parse(x), b = parse(y);
  const signOf = (n) => (n.zero ? 0 : n.neg ? -1 : 1);
  if (signOf(a) !== signOf(b)) return signOf(a) < signOf(b) ? -1 : 1;
  if (a.zero) return 0;
  const sign = signOf(a);
  if (a.mag !== b.mag) return sign * (a.mag < b.mag ? -1 : 1);
  const len = Math.max(a.digits.length, b.digits.length);
  const da = a.digits.padEnd(len, '0'), db = b.digits.padEnd(len, '0');
  return sign * (da < db ? -1 : da > db ? 1 : 0);
}
