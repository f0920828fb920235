// The vector search form of the item explorer (tables with vector indexes):
// a vector pasted as a JSON array or as numbers separated by spaces, commas
// or newlines, the index, TopK and a value for each search-schema attribute
// (the HASH one required, INLINE_FILTER ones optional). The request is
// SearchVectors itself; its results go to the explorer's grid, each item with
// its score as `_score`, most similar first.

import { el, fill, select } from './ui.js';
import { parseTyped } from './values.js';

/** The score column the grid shows beside each result. */
export const SCORE = '_score';

/** The form's controls; `onChange` runs when the index changes. */
export function vectorForm(indexes, types, onChange) {
  const f = {};
  f.index = select(indexes.map((i) => [i.IndexName, `${i.IndexName} · ${i.Dimensions}-d ${i.DistanceFunction}`]),
    indexes[0]?.IndexName, { 'aria-label': 'Vector index' });
  f.vector = el('textarea.mono', { 'aria-label': 'Search vector', rows: 2, spellcheck: 'false',
    placeholder: '[0.12, -0.5, 0.33, …] or numbers separated by spaces' });
  f.topK = el('input', { type: 'number', min: 1, max: 100, value: 10, 'aria-label': 'TopK', class: 'narrow' });
  f.filters = el('div.row');
  f.root = el('div.vector-only', { hidden: true },
    el('div.row',
      el('div.field', el('label', { for: (f.index.id = 'vector-index') }, 'Vector index'), f.index),
      el('div.field', el('label', { for: (f.topK.id = 'vector-topk') }, 'TopK'), f.topK)),
    el('div.field.grow', el('label', { for: (f.vector.id = 'vector-input') }, 'Search vector'), f.vector),
    f.filters);
  f.sync = () => {
    const index = indexes.find((i) => i.IndexName === f.index.value);
    f.inputs = (index?.SearchSchema || []).map((e) => {
      const hash = e.SearchSchemaElementType === 'HASH';
      const input = el('input', { 'aria-label': `${e.AttributeName} equals`, autocomplete: 'off',
        placeholder: hash ? 'required' : 'any', 'data-attribute': e.AttributeName });
      const label = `${e.AttributeName} = · ${hash ? 'HASH' : 'filter'} (${types[e.AttributeName] || 'S'})`;
      return { name: e.AttributeName, input, node: el('div.field', el('label', label), input) };
    });
    fill(f.filters, f.inputs.map((i) => i.node));
  };
  f.index.addEventListener('change', () => { f.sync(); onChange(); });
  f.sync();
  return f;
}

/** The vector's numbers (kept as text: the server reads them as f32). */
export function parseVector(text) {
  const trimmed = text.trim();
  let parts;
  if (trimmed.startsWith('[')) {
    let list;
    try { list = JSON.parse(trimmed); } catch (e) { throw invalid(`the vector is not a JSON array: ${e.message}`); }
    parts = list.map((x) => String(x));
  } else {
    parts = trimmed.split(/[\s,]+/).filter(Boolean);
  }
  if (!parts.length) throw invalid('paste a search vector');
  const bad = parts.find((p) => !Number.isFinite(Number(p)));
  if (bad !== undefined) throw invalid(`${bad} is not a number`);
  return parts;
}

function invalid(message) {
  return Object.assign(new Error(message), { code: 'ValidationException' });
}

/** The SearchVectors request of the form. */
export function searchRequest(f, table, types) {
  const request = {
    TableName: table,
    IndexName: f.index.value,
    TopK: Number(f.topK.value) || 10,
    SearchVector: parseVector(f.vector.value).map((n) => ({ N: n })),
    ReturnConsumedCapacity: 'TOTAL',
  };
  const used = f.inputs.filter((i) => i.input.value !== '');
  if (used.length) {
    request.SearchConditionExpression = used.map((_, n) => `#v${n} = :v${n}`).join(' AND ');
    request.ExpressionAttributeNames = Object.fromEntries(used.map((i, n) => [`#v${n}`, i.name]));
    request.ExpressionAttributeValues = Object.fromEntries(used.map((i, n) => {
      const type = types[i.name] || 'S';
      return [`:v${n}`, type === 'N' ? parseTyped('N', i.input.value) : { [type]: i.input.value }];
    }));
  }
  return request;
}

/** The grid's items: each result with its score. */
export function resultItems(answer) {
  return (answer.SearchResults || []).map((r) => ({ ...r.Item, [SCORE]: { N: String(r.Score) } }));
}

/** The commands that run the same search. */
export function searchCommands(request) {
  const vector = `[${request.SearchVector.map((v) => v.N).join(', ')}]`;
  const quote = (s) => `'${s.replaceAll("'", "'\\''")}'`;
  let ferrodyn = `ferrodyn search-vectors ${quote(request.TableName)} ${quote(request.IndexName)} --vector ${quote(vector)} --top-k ${request.TopK}`;
  if (request.SearchConditionExpression) {
    ferrodyn += ` --where ${quote(request.SearchConditionExpression)} --names ${quote(JSON.stringify(request.ExpressionAttributeNames))}`
      + ` --values ${quote(JSON.stringify(request.ExpressionAttributeValues))} --raw`;
  }
  return {
    aws: `aws dynamodb search-vectors --cli-input-json ${quote(JSON.stringify(request))}`,
    ferrodyn,
  };
}
