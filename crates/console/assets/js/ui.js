// Small DOM helpers shared by every screen: element building, dialogs with
// focus handling and Escape, toasts, the connection banner, copy buttons.

/** el('div.card#x', {onclick, title, ...}, children...) builds an element. */
export function el(spec, attrs = {}, ...children) {
  const [, tag = 'div', rest = ''] = spec.match(/^([a-z0-9]*)(.*)$/i);
  const node = document.createElement(tag || 'div');
  for (const part of rest.match(/[.#][^.#]+/g) || []) {
    if (part[0] === '.') node.classList.add(part.slice(1));
    else node.id = part.slice(1);
  }
  if (attrs === null || typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs)) {
    children.unshift(attrs);
    attrs = {};
  }
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'class') node.className += ' ' + value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'value') node.value = value;
    else if (key === 'checked') node.checked = !!value;
    else node.setAttribute(key, value === true ? '' : value);
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `node`. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

export const $ = (selector, root = document) => root.querySelector(selector);

/** A labelled form field; `control` gets an id so the label points at it. */
let fieldId = 0;
export function field(label, control, hint) {
  control.id ||= `f${++fieldId}`;
  return el('div.field', el('label', { for: control.id }, label), control, hint && el('small.hint', hint));
}

export function button(text, onclick, cls = '', attrs = {}) {
  return el(`button.btn${cls ? '.' + cls.split(' ').join('.') : ''}`, { type: 'button', onclick, ...attrs }, text);
}

export function select(options, value, attrs = {}) {
  return el('select', attrs, options.map((o) => {
    const [v, label] = Array.isArray(o) ? o : [o, o];
    return el('option', { value: v, selected: v === value }, label);
  }));
}

/** An error as DynamoDB says it: code and message. */
export function errorBox(error) {
  return el('div.error', { role: 'alert' },
    el('strong.code', error.code || 'Error'), ' ', el('span', error.message || String(error)));
}

// ---- dialogs ---------------------------------------------------------------

const openDialogs = [];

/** A modal dialog; resolves when closed. `build(close)` returns its body. */
export function dialog(title, build, { wide = false } = {}) {
  return new Promise((resolve) => {
    const previous = document.activeElement;
    const backdrop = el('div.backdrop');
    const close = (value) => {
      backdrop.remove();
      openDialogs.splice(openDialogs.indexOf(close), 1);
      previous?.focus?.();
      resolve(value);
    };
    const box = el(`div.dialog${wide ? '.wide' : ''}`, { role: 'dialog', 'aria-modal': 'true', 'aria-label': title },
      el('header', el('h2', title), button('✕', () => close(undefined), 'ghost icon', { 'aria-label': 'Close' })),
      el('div.body', build(close)));
    backdrop.append(box);
    backdrop.addEventListener('mousedown', (e) => { if (e.target === backdrop) close(undefined); });
    document.body.append(backdrop);
    openDialogs.push(close);
    (box.querySelector('[autofocus]') || box.querySelector('input,select,textarea,button:not(.icon)'))?.focus();
  });
}

/** Closes the topmost dialog (Escape); true if there was one. */
export function closeTopDialog() {
  const close = openDialogs[openDialogs.length - 1];
  if (!close) return false;
  close(undefined);
  return true;
}

// ---- toasts, banner ---------------------------------------------------------

/** Shows `message` for about four seconds. The handle's `update(message,
 * kind)` replaces it when what it says is no longer true (shown again for
 * four seconds, even if it had gone); `close()` takes it away now. */
export function toast(message, kind = 'info') {
  const region = $('#toasts');
  const node = el('div');
  let timers = [];
  const show = (text, type) => {
    timers.forEach(clearTimeout);
    node.className = `toast ${type}`;
    node.setAttribute('role', type === 'error' ? 'alert' : 'status');
    fill(node, text);
    if (!node.isConnected) region.append(node);
    timers = [setTimeout(() => node.classList.add('gone'), 3800), setTimeout(() => node.remove(), 4300)];
  };
  show(message, kind);
  return {
    update: (text, type = kind) => show(text, type),
    close: () => {
      timers.forEach(clearTimeout);
      node.remove();
    },
  };
}

export function banner(text) {
  const node = $('#banner');
  if (!text) {
    node.hidden = true;
    return;
  }
  fill(node, el('span.pulse'), text);
  node.hidden = false;
}

/** A <pre> with a copy button beside it; `wrap` breaks long lines (a
 * one-line command) instead of scrolling them. */
export function codeBlock(text, label = 'code', { wrap = false } = {}) {
  const pre = el(`pre.code${wrap ? '.wrap' : ''}`, { 'aria-label': label, tabindex: '0' }, text);
  const copy = button('Copy', async () => {
    try {
      await navigator.clipboard.writeText(text);
      toast('Copied');
    } catch {
      const range = document.createRange();
      range.selectNodeContents(pre);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
    }
  }, 'small ghost copy', { 'aria-label': `Copy ${label}` });
  return el('div.codewrap', pre, copy);
}

/** Tabs: [{label, render}] → element; renders the chosen one lazily. */
export function tabs(list, name = 'view', initial = 0) {
  const strip = el('div.tabs', { role: 'tablist', 'aria-label': name });
  const panel = el('div.tabpanel', { role: 'tabpanel' });
  const show = (index) => {
    [...strip.children].forEach((b, i) => {
      b.setAttribute('aria-selected', String(i === index));
      b.tabIndex = i === index ? 0 : -1;
    });
    fill(panel, list[index].render());
  };
  list.forEach((t, i) => strip.append(el('button.tab', { role: 'tab', type: 'button', onclick: () => show(i) }, t.label)));
  show(initial);
  return el('div', strip, panel);
}

export function formatBytes(n) {
  if (n === undefined || n === null) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

export function download(name, text, type = 'text/plain') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
