// Small helpers of the page: elements, dialogs, the toast, formats.

// h('button', {class: 'x', onclick: f}, 'text', child...)
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

let uid = 0;
export const nextId = (p = 'x') => `${p}-${++uid}`;

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A modal dialog (role dialog, named by its heading). `build(close)` gives
// its body; close(value) ends it. Resolves with the value (undefined on Escape).
export function dialog(title, build, { wide = false } = {}) {
  return new Promise((resolve) => {
    const titleId = nextId('dlg');
    const d = h('dialog', { class: wide ? 'dialog wide' : 'dialog', 'aria-labelledby': titleId });
    let value;
    const close = (v) => { value = v; d.close(); };
    d.addEventListener('close', () => { d.remove(); resolve(value); });
    const head = h('div', { class: 'dialog-head' },
      h('h2', { id: titleId, text: title }),
      h('button', { type: 'button', class: 'icon', 'aria-label': 'Close', onclick: () => close(undefined) }, '×'));
    d.append(head, h('div', { class: 'dialog-body' }, build(close)));
    document.body.append(d);
    d.showModal();
    const first = d.querySelector('[autofocus]') || d.querySelector('.dialog-body input, .dialog-body select, .dialog-body button');
    if (first) first.focus();
  });
}

// Asks before `action` (its button's label): true when confirmed.
export function confirmAction(title, message, action) {
  return dialog(title, (close) => [
    h('p', {}, message),
    h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => close(false) }, 'Cancel'),
      h('button', { type: 'button', class: 'danger', onclick: () => close(true) }, action)),
  ]).then(Boolean);
}

// A form in a dialog: fields [{name, label, type, value, options, required}];
// resolves with {name: value} or undefined when cancelled.
export function formDialog(title, fields, submit, { onSubmit } = {}) {
  return dialog(title, (close) => {
    const error = h('p', { class: 'error', role: 'alert' });
    const inputs = {};
    const rows = fields.map((f) => {
      const id = nextId('f');
      let input;
      if (f.options) {
        input = h('select', { id, name: f.name },
          f.options.map(([v, l]) => h('option', { value: v, selected: v === f.value }, l)));
      } else if (f.type === 'textarea') {
        input = h('textarea', { id, name: f.name, rows: 3 });
        input.value = f.value || '';
      } else if (f.type === 'checkbox') {
        input = h('input', { id, name: f.name, type: 'checkbox', checked: !!f.value });
        inputs[f.name] = input;
        return h('div', { class: 'field check' }, input, h('label', { for: id }, f.label));
      } else {
        input = h('input', { id, name: f.name, type: f.type || 'text', required: f.required, autocomplete: 'off' });
        input.value = f.value ?? '';
        if (f.placeholder) input.placeholder = f.placeholder;
      }
      inputs[f.name] = input;
      return h('div', { class: 'field' }, h('label', { for: id }, f.label), input,
        f.hint ? h('small', { class: 'muted' }, f.hint) : null);
    });
    const form = h('form', {
      onsubmit: async (ev) => {
        ev.preventDefault();
        const values = {};
        for (const [k, el] of Object.entries(inputs)) values[k] = el.type === 'checkbox' ? el.checked : el.value;
        if (!onSubmit) { close(values); return; }
        try {
          error.textContent = '';
          close(await onSubmit(values));
        } catch (e) {
          error.textContent = e.message;
        }
      },
    }, rows, error, h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => close(undefined) }, 'Cancel'),
      h('button', { type: 'submit', class: 'primary' }, submit)));
    return form;
  });
}

let toastTimer;
export function toast(message, { error = false } = {}) {
  const t = document.getElementById('toast');
  t.textContent = message;
  t.classList.toggle('bad', error);
  t.classList.add('show');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove('show'), 4000);
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = h('textarea', { class: 'offscreen', 'aria-hidden': 'true' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand('copy');
    ta.remove();
  }
  toast('Copied');
}

// A read-only value with a copy button, shown once (a new key or secret).
export function secretBox(label, value) {
  const id = nextId('s');
  const input = h('input', { id, type: 'text', readonly: true, class: 'mono' });
  input.value = value;
  return h('div', { class: 'field' }, h('label', { for: id }, label),
    h('div', { class: 'row' }, input,
      h('button', { type: 'button', onclick: () => copyText(value) }, `Copy ${label.toLowerCase()}`)));
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
export function humanSize(n) {
  if (n === null || n === undefined) return '';
  let i = 0;
  let v = Number(n);
  while (v >= 1000 && i < UNITS.length - 1) { v /= 1000; i += 1; }
  return i === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${UNITS[i]}`;
}

export function when(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

// A table of records; on a narrow screen each row stacks, its cells
// labelled by their column (data-label).
export function table(caption, headers, rows, { empty = 'Nothing here yet.' } = {}) {
  if (!rows.length) return h('p', { class: 'muted empty' }, empty);
  for (const row of rows) {
    [...row.children].forEach((cell, i) => {
      if (typeof headers[i] === 'string') cell.dataset.label = headers[i];
    });
  }
  return h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption }, h('table', { class: 'stack' },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows)));
}

export function screenHead(title, ...actions) {
  return h('div', { class: 'screen-head' }, h('h1', { text: title }), h('div', { class: 'actions' }, actions));
}

export function failed(e) {
  toast(e.message || String(e), { error: true });
}
