// Uploads into the folder shown: small files as one multipart POST
// /v1/upload, large ones with tus (POST /v1/uploads, then PATCHes of
// CHUNK bytes), each with its progress bar; dropped folders are walked
// (webkitGetAsEntry) and keep their structure below the folder shown.

import { PAGE_HEADER } from './api.js';
import { h, humanSize } from './ui.js';

export const TUS_OVER = 8 * 1024 * 1024;
const CHUNK = 8 * 1024 * 1024;
const AT_ONCE = 3;

function xhr(method, url, { headers = {}, body, onProgress } = {}) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open(method, url);
    for (const [k, v] of Object.entries({ ...PAGE_HEADER, ...headers })) x.setRequestHeader(k, v);
    if (onProgress) x.upload.onprogress = (e) => onProgress(e.loaded);
    x.onload = () => resolve(x);
    x.onerror = () => reject(new Error('the connection failed'));
    x.send(body);
  });
}

function failure(x) {
  try {
    const b = JSON.parse(x.responseText);
    if (b.error) return new Error(b.error.message);
  } catch { /* not JSON */ }
  return new Error(`${x.status} ${x.statusText}`);
}

const b64 = (s) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));

async function simple(file, folder, progress) {
  const form = new FormData();
  if (folder) form.append('folder', folder);
  form.append('file', file, file.name);
  const x = await xhr('POST', '/v1/upload', { body: form, onProgress: progress });
  if (x.status !== 201) throw failure(x);
  return JSON.parse(x.responseText);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function resumable(file, folder, progress) {
  const meta = [`filename ${b64(file.name)}`, `filetype ${b64(file.type || 'application/octet-stream')}`];
  if (folder) meta.push(`folder ${b64(folder)}`);
  const tus = { 'Tus-Resumable': '1.0.0' };
  const created = await xhr('POST', '/v1/uploads', {
    headers: { ...tus, 'Upload-Length': String(file.size), 'Upload-Metadata': meta.join(',') },
  });
  if (created.status !== 201) throw failure(created);
  // Same origin as the page, whatever address the server names.
  const at = new URL(created.getResponseHeader('Location'), location.href).pathname;
  let offset = 0;
  let fileId = created.getResponseHeader('X-File-Id');
  let tries = 0;
  while (offset < file.size) {
    const chunk = file.slice(offset, offset + CHUNK);
    const x = await xhr('PATCH', at, {
      headers: { ...tus, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
      body: chunk,
      onProgress: (n) => progress(offset + n),
    }).catch(() => null);
    if (x && x.status === 204) {
      offset = Number(x.getResponseHeader('Upload-Offset'));
      fileId = x.getResponseHeader('X-File-Id') || fileId;
      tries = 0;
      continue;
    }
    if (x && ![409, 423].includes(x.status) && x.status < 500) throw failure(x);
    tries += 1;
    if (tries > 5) throw x ? failure(x) : new Error('the connection failed');
    await sleep(500 * tries);
    const head = await xhr('HEAD', at, { headers: tus });
    if (head.status !== 200) throw failure(head);
    offset = Number(head.getResponseHeader('Upload-Offset'));
  }
  return { id: fileId, name: file.name };
}

// Uploads `items` ([{file, folder}]) showing each in `panel`; resolves when
// all ended, with how many failed.
export async function uploadAll(items, panel) {
  panel.hidden = false;
  const list = panel.querySelector('ul') || panel.appendChild(h('ul', { class: 'uploads' }));
  const jobs = items.map(({ file, folder }) => {
    const where = folder ? `${folder}/${file.name}` : file.name;
    const bar = h('progress', { max: file.size || 1, value: 0, 'aria-label': `Uploading ${where}` });
    const status = h('span', { class: 'muted' }, humanSize(file.size));
    list.append(h('li', {}, h('span', { class: 'up-name' }, where), bar, status));
    return { file, folder, bar, status };
  });
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      const progress = (n) => { job.bar.value = n; };
      try {
        const send = job.file.size > TUS_OVER ? resumable : simple;
        await send(job.file, job.folder, progress);
        job.bar.value = job.bar.max;
        job.status.textContent = 'Done';
      } catch (e) {
        failed += 1;
        job.status.textContent = `Failed: ${e.message}`;
        job.status.className = 'error';
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, jobs.length) }, worker));
  return failed;
}

function entryFiles(entry, dir, out) {
  if (entry.isFile) {
    return new Promise((resolve) => entry.file((f) => { out.push({ file: f, dir }); resolve(); }, () => resolve()));
  }
  if (!entry.isDirectory) return Promise.resolve();
  const reader = entry.createReader();
  const sub = dir ? `${dir}/${entry.name}` : entry.name;
  return new Promise((resolve) => {
    const batch = () => reader.readEntries(async (entries) => {
      if (!entries.length) { resolve(); return; }
      await Promise.all(entries.map((e) => entryFiles(e, sub, out)));
      batch();
    }, () => resolve());
    batch();
  });
}

// The files a drop brings (folders walked): [{file, dir}] with `dir` the
// folder path inside what was dropped ('' for a file dropped alone).
export async function droppedFiles(dataTransfer) {
  const out = [];
  const entries = [...dataTransfer.items]
    .filter((i) => i.kind === 'file')
    .map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
  if (entries.length && entries.every(Boolean)) {
    await Promise.all(entries.map((e) => entryFiles(e, '', out)));
    return out;
  }
  return [...dataTransfer.files].map((file) => ({ file, dir: '' }));
}
