// A file: its dialog (preview and record), its actions (copy link, signed
// link, download, rename, move, delete) and its links (signed for a
// private file, image variants for thumbnails).

import { post, patch, del, api } from './api.js';
import { h, dialog, confirmAction, formDialog, copyText, toast, humanSize, when, nextId, failed } from './ui.js';

const VARIANT_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif'];
export const hasVariants = (f) => VARIANT_TYPES.includes(f.type);

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-yaml|yaml|toml|x-sh|csv))/;
const TEXT_MAX = 512 * 1024;

export const EXPIRIES = [['3600', '1 hour'], ['86400', '1 day'], ['604800', '7 days'], ['300', '5 minutes']];

export async function signed(file, expiresIn, transform) {
  const body = { expires_in: Number(expiresIn) };
  if (transform) body.transform = transform;
  return (await post(`/v1/files/${encodeURIComponent(file.id)}/signed-url`, body)).url;
}

function withParams(url, params) {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

// A link to the file's bytes (or to a variant with `transform`): its own
// url when public, else a signed one (kept for a while, per file and transform).
const signedCache = new Map();
export async function link(file, transform) {
  if (!file.private && file.url) return transform ? withParams(file.url, transform) : file.url;
  const key = `${file.id}:${JSON.stringify(transform || {})}`;
  const hit = signedCache.get(key);
  if (hit && hit.until > Date.now()) return hit.url;
  const url = await signed(file, 3600, transform);
  signedCache.set(key, { url, until: Date.now() + 3000 * 1000 });
  return url;
}

async function download(file) {
  const url = await link(file);
  // A new tab, should the browser show the file instead of saving it.
  const a = h('a', { href: url, download: file.name, target: '_blank', rel: 'noopener' });
  document.body.append(a);
  a.click();
  a.remove();
}

function signedLinkDialog(file) {
  return dialog(`Signed link: ${file.name}`, () => {
    const id = nextId('exp');
    const out = h('div', { class: 'signed-out' });
    const select = h('select', { id }, EXPIRIES.map(([v, l]) => h('option', { value: v }, l)));
    const make = async () => {
      try {
        const url = await signed(file, select.value);
        const field = nextId('url');
        const input = h('input', { id: field, type: 'text', readonly: true, class: 'mono' });
        input.value = url;
        out.replaceChildren(h('label', { for: field }, 'Signed link'),
          h('div', { class: 'row' }, input, h('button', { type: 'button', onclick: () => copyText(url) }, 'Copy')));
        input.select();
      } catch (e) { failed(e); }
    };
    return [h('div', { class: 'field' }, h('label', { for: id }, 'Expires in'), select),
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', onclick: make }, 'Create signed link')), out];
  });
}

// What can be done with `file`; `changed()` after a change.
export function fileActions(file, changed) {
  const path = `/v1/files/${encodeURIComponent(file.id)}`;
  return [
    ['Copy link', async () => {
      if (file.private || !file.url) {
        toast('A private file has no public link: use Signed link.', { error: true });
        return;
      }
      await copyText(file.url);
    }],
    ['Signed link', () => signedLinkDialog(file)],
    ['Download', () => download(file).catch(failed)],
    ['Rename', async () => {
      const done = await formDialog(`Rename ${file.name}`, [{ name: 'name', label: 'Name', value: file.name, required: true }], 'Rename',
        { onSubmit: (v) => patch(path, { name: v.name.trim() }) });
      if (done) { toast(`Renamed to ${done.name}`); changed(); }
    }],
    ['Move', async () => {
      const done = await formDialog(`Move ${file.name}`, [{ name: 'folder', label: 'Folder', value: file.folder || '', hint: 'Empty: the root (All files).' }], 'Move',
        { onSubmit: (v) => patch(path, { folder: v.folder.trim() || null }) });
      if (done) { toast(`Moved to ${done.folder || 'All files'}`); changed(); }
    }],
    ['Delete', async () => {
      if (!(await confirmAction(`Delete ${file.name}?`, 'The file and its links stop working at once. This cannot be undone.', 'Delete'))) return;
      try {
        await del(path);
        toast(`Deleted ${file.name}`);
        changed();
      } catch (e) { failed(e); }
    }],
  ];
}

async function previewOf(file) {
  const t = file.type || '';
  const label = `Preview of ${file.name}`;
  if (t.startsWith('image/')) {
    const src = await link(file, hasVariants(file) ? { w: 1200, fit: 'inside', format: 'auto' } : undefined);
    return h('img', { src, alt: label, class: 'preview-img' });
  }
  if (t.startsWith('video/')) return h('video', { src: await link(file), controls: true, class: 'preview-media', 'aria-label': label });
  if (t.startsWith('audio/')) return h('audio', { src: await link(file), controls: true, 'aria-label': label });
  if (t === 'application/pdf') return h('iframe', { src: await link(file), title: label, class: 'preview-frame' });
  if (TEXT_TYPES.test(t) && file.size <= TEXT_MAX) {
    const r = await fetch(await link(file));
    const text = await r.text();
    return h('pre', { class: 'preview-text', tabindex: 0, 'aria-label': label }, text);
  }
  return h('p', { class: 'muted' }, `No preview for ${t || 'this type'}.`);
}

function record(file) {
  const rows = [
    ['id', file.id], ['sha256', file.sha256], ['size', `${humanSize(file.size)} (${file.size} bytes)`],
    ['type', file.type], ['folder', file.folder || '(root)'], ['private', file.private ? 'yes' : 'no'],
    ['created', when(file.created_at)], ['expires', file.expires_at ? when(file.expires_at) : 'never'],
    ['metadata', JSON.stringify(file.metadata || {})],
  ];
  return h('dl', { class: 'record' },
    rows.map(([k, v]) => [h('dt', {}, k), h('dd', { class: 'mono' }, v)]),
    h('dt', {}, 'url'),
    h('dd', { class: 'mono' }, file.url ? h('a', { href: file.url, target: '_blank', rel: 'noopener' }, file.url) : '(private: use a signed link)'));
}

// The file's dialog, named after it: preview, record, actions.
export function openFile(file, changed) {
  return dialog(file.name, (close) => {
    const box = h('div', { class: 'preview' }, h('p', { class: 'muted' }, 'Loading preview…'));
    previewOf(file).then((el) => box.replaceChildren(el), (e) => box.replaceChildren(h('p', { class: 'error' }, e.message)));
    const actions = fileActions(file, () => { close(); changed(); })
      .map(([label, run]) => h('button', { type: 'button', onclick: run }, label));
    return [box, h('div', { class: 'actions wrap' }, actions), record(file)];
  }, { wide: true });
}

export async function zip(ids) {
  const r = await api('POST', '/v1/files/zip', { json: { ids }, raw: true });
  const blob = await r.blob();
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: 'files.zip' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
