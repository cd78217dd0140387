// The Files screen: breadcrumbs ("Folder path", from "All files"), the
// folder's subfolders then its files (a page at a time, by the API's
// cursors), thumbnails, the filter, selection actions, upload and drop.

import { get, post, del, query } from './api.js';
import { h, clear, nextId, humanSize, when, toast, failed, confirmAction, screenHead } from './ui.js';
import { openFile, fileActions, hasVariants, link, zip } from './preview.js';
import { uploadAll, droppedFiles } from './upload.js';

const PAGE = 50;
const THUMB = { w: 80, h: 80, fit: 'cover', format: 'auto' };

const folderHash = (f) => (f ? `#/files?folder=${encodeURIComponent(f)}` : '#/files');

function crumbs(folder) {
  const parts = folder ? folder.split('/') : [];
  const items = [h('li', {}, h('a', { href: '#/files', 'aria-current': parts.length ? null : 'page' }, 'All files'))];
  parts.forEach((name, i) => {
    const path = parts.slice(0, i + 1).join('/');
    const last = i === parts.length - 1;
    items.push(h('li', {}, h('a', { href: folderHash(path), 'aria-current': last ? 'page' : null }, name)));
  });
  return h('nav', { 'aria-label': 'Folder path', class: 'crumbs' }, h('ol', {}, items));
}

// A row's "More actions" menu (role menu; arrows, Escape).
function menu(button, actions) {
  const items = actions.map(([label, run]) => h('button', {
    type: 'button', role: 'menuitem', tabindex: -1,
    onclick: () => { close(); run(); },
  }, label));
  const m = h('div', { class: 'menu', role: 'menu', 'aria-label': button.getAttribute('aria-label') }, items);
  const close = () => {
    m.remove();
    button.setAttribute('aria-expanded', 'false');
    document.removeEventListener('pointerdown', outside, true);
  };
  const outside = (e) => { if (!m.contains(e.target) && e.target !== button) close(); };
  m.addEventListener('keydown', (e) => {
    const i = items.indexOf(document.activeElement);
    if (e.key === 'Escape') { e.preventDefault(); close(); button.focus(); }
    if (e.key === 'ArrowDown') { e.preventDefault(); items[(i + 1) % items.length].focus(); }
    if (e.key === 'ArrowUp') { e.preventDefault(); items[(i - 1 + items.length) % items.length].focus(); }
    if (e.key === 'Tab') close();
  });
  button.setAttribute('aria-expanded', 'true');
  button.after(m);
  document.addEventListener('pointerdown', outside, true);
  items[0].focus();
}

function thumb(file, observer) {
  if (!hasVariants(file)) return h('span', { class: 'ficon', 'aria-hidden': 'true' }, (file.type || '?').split('/')[0].slice(0, 3));
  const img = h('img', { class: 'thumb', alt: '', width: 40, height: 40, loading: 'lazy' });
  img.dataset.fileId = file.id;
  if (!file.private) img.src = new URL(file.url).toString() + `?${new URLSearchParams(THUMB)}`;
  else observer.observe(img);
  return img;
}

export async function render(main, params) {
  const folder = (params.get('folder') || '').replace(/^\/+|\/+$/g, '');
  const st = { pages: [null], page: 0, files: [], folders: [], foldersMore: null, selected: new Set(), filter: '' };
  const byId = new Map();

  // Private images get a signed variant when they come into view.
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      observer.unobserve(e.target);
      const f = byId.get(e.target.dataset.fileId);
      if (f) link(f, THUMB).then((u) => { e.target.src = u; }, () => {});
    }
  });

  const panel = h('section', { class: 'upload-panel', 'aria-labelledby': 'uploads-title', hidden: true },
    h('div', { class: 'upload-head' }, h('h2', { id: 'uploads-title' }, 'Uploads'),
      h('button', { type: 'button', onclick: () => { panel.querySelector('ul')?.remove(); panel.hidden = true; } }, 'Clear')));
  const input = h('input', { type: 'file', multiple: true, id: nextId('up'), class: 'sr-only', tabindex: -1, 'aria-label': 'Upload files' });
  const uploadButton = h('button', { type: 'button', class: 'primary', onclick: () => input.click() }, 'Upload');
  const upload = async (items) => {
    if (!items.length) return;
    const failures = await uploadAll(items, panel);
    toast(failures ? `${failures} of ${items.length} uploads failed` : `Uploaded ${items.length} file${items.length > 1 ? 's' : ''}`, { error: failures > 0 });
    await load(true);
  };
  input.addEventListener('change', () => {
    const items = [...input.files].map((file) => ({ file, folder }));
    input.value = '';
    upload(items);
  });

  const filterId = nextId('filter');
  const filter = h('input', { id: filterId, type: 'search', autocomplete: 'off' });
  filter.addEventListener('input', () => { st.filter = filter.value.trim().toLowerCase(); rows(); });

  const count = h('span', { class: 'muted', 'aria-live': 'polite' });
  const delSel = h('button', { type: 'button', disabled: true, onclick: () => deleteSelected() }, 'Delete');
  const zipSel = h('button', { type: 'button', disabled: true, onclick: () => zipSelected() }, 'Download zip');
  const selectAll = h('input', { type: 'checkbox', 'aria-label': 'Select all files on this page' });
  selectAll.addEventListener('change', () => {
    for (const f of visibleFiles()) {
      if (selectAll.checked) st.selected.add(f.id); else st.selected.delete(f.id);
    }
    rows();
  });

  const tbody = h('tbody');
  const tableWrap = h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Folder contents' },
    h('table', { class: 'files' },
      h('caption', { class: 'sr-only' }, folder ? `Folder ${folder}` : 'All files'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col', class: 'sel' }, selectAll),
        h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col', class: 'num' }, 'Size'),
        h('th', { scope: 'col', class: 'opt' }, 'Type'), h('th', { scope: 'col', class: 'opt' }, 'Created'),
        h('th', { scope: 'col', class: 'act' }, h('span', { class: 'sr-only' }, 'Actions')))),
      tbody));
  const empty = h('p', { class: 'muted empty', hidden: true });
  const prev = h('button', { type: 'button', onclick: () => { st.page -= 1; load(); } }, 'Previous page');
  const next = h('button', { type: 'button', onclick: () => { st.page += 1; load(); } }, 'Next page');
  const pageNo = h('span', { class: 'muted' });
  const moreFolders = h('button', { type: 'button', hidden: true, onclick: () => loadFolders(true) }, 'More folders');

  const visibleFiles = () => st.files.filter((f) => !st.filter || f.name.toLowerCase().includes(st.filter));

  function selection() {
    const n = st.selected.size;
    count.textContent = n ? `${n} selected` : '';
    delSel.disabled = zipSel.disabled = n === 0;
    const vis = visibleFiles();
    selectAll.checked = vis.length > 0 && vis.every((f) => st.selected.has(f.id));
  }

  function rows() {
    const folders = st.folders.filter((f) => !st.filter || f.name.toLowerCase().includes(st.filter));
    const files = visibleFiles();
    clear(tbody,
      folders.map((f) => h('tr', { class: 'folder' },
        h('td', { class: 'sel' }),
        h('td', { class: 'name' }, h('div', { class: 'name-cell' }, h('span', { class: 'ficon folder', 'aria-hidden': 'true' }), h('a', { href: folderHash(f.path) }, f.name))),
        h('td', { class: 'num' }, '—'), h('td', { class: 'opt' }, 'Folder'), h('td', { class: 'opt' }), h('td', { class: 'act' }))),
      files.map((f) => {
        byId.set(f.id, f);
        const box = h('input', { type: 'checkbox', 'aria-label': `Select ${f.name}`, checked: st.selected.has(f.id) });
        box.addEventListener('change', () => { if (box.checked) st.selected.add(f.id); else st.selected.delete(f.id); selection(); });
        const more = h('button', { type: 'button', class: 'icon', 'aria-haspopup': 'menu', 'aria-expanded': 'false', 'aria-label': `More actions for ${f.name}` }, '⋯');
        more.addEventListener('click', () => menu(more, fileActions(f, () => load())));
        return h('tr', {},
          h('td', { class: 'sel' }, box),
          h('td', { class: 'name' }, h('div', { class: 'name-cell' }, thumb(f, observer), h('div', { class: 'nm' },
            h('button', { type: 'button', class: 'link', onclick: () => openFile(f, () => load()) }, f.name),
            f.private ? h('span', { class: 'badge' }, 'private') : null))),
          h('td', { class: 'num' }, humanSize(f.size)),
          h('td', { class: 'opt' }, f.type),
          h('td', { class: 'opt' }, h('time', { datetime: f.created_at }, when(f.created_at))),
          h('td', { class: 'act' }, h('div', { class: 'menu-anchor' }, more)));
      }));
    const nothing = !folders.length && !files.length;
    empty.hidden = !nothing;
    tableWrap.hidden = nothing;
    empty.textContent = st.filter ? 'No name on this page matches the filter.' : 'This folder is empty: drop files here, or use Upload.';
    selection();
  }

  async function loadFolders(more) {
    const r = await get(`/v1/folders${query({ parent: folder, limit: 100, cursor: more ? st.foldersMore : null })}`);
    st.folders = more ? st.folders.concat(r.folders) : r.folders;
    st.foldersMore = r.has_more ? r.cursor : null;
    moreFolders.hidden = !st.foldersMore;
    if (more) rows();
  }

  async function load(fresh) {
    if (fresh) { st.pages = [null]; st.page = 0; }
    try {
      const cursor = st.pages[st.page];
      const [r] = await Promise.all([
        get(`/v1/files${query({ folder: folder || '/', limit: PAGE, cursor })}`),
        st.page === 0 ? loadFolders(false) : Promise.resolve(),
      ]);
      if (st.page > 0) { st.folders = []; moreFolders.hidden = true; }
      st.files = r.files;
      st.pages[st.page + 1] = r.has_more ? r.cursor : undefined;
      st.pages.length = st.page + 2;
      prev.disabled = st.page === 0;
      next.disabled = !r.has_more;
      pageNo.textContent = `Page ${st.page + 1}`;
      st.selected = new Set([...st.selected].filter((id) => st.files.some((f) => f.id === id)));
      rows();
    } catch (e) {
      if (e.status !== 401) failed(e);
    }
  }

  async function deleteSelected() {
    const ids = [...st.selected];
    if (!(await confirmAction(`Delete ${ids.length} file${ids.length > 1 ? 's' : ''}?`, 'They and their links stop working at once. This cannot be undone.', 'Delete'))) return;
    try {
      const r = await post('/v1/files/delete', { ids });
      toast(`Deleted ${r.deleted.length} file${r.deleted.length === 1 ? '' : 's'}`);
      st.selected.clear();
      await load();
    } catch (e) { failed(e); }
  }

  async function zipSelected() {
    try {
      await zip([...st.selected]);
    } catch (e) { failed(e); }
  }

  async function deleteFolder() {
    if (!(await confirmAction(`Delete folder ${folder}?`, `Every file in ${folder} and its subfolders is deleted at once. This cannot be undone.`, 'Delete folder'))) return;
    try {
      const r = await del(`/v1/folders${query({ folder })}`);
      toast(`Deleted ${r.deleted} file${r.deleted === 1 ? '' : 's'}`);
      location.hash = folderHash(folder.split('/').slice(0, -1).join('/'));
    } catch (e) { failed(e); }
  }

  const drop = h('div', { class: 'drop-hint', 'aria-hidden': 'true' }, 'Drop files or folders to upload them here');
  const area = h('div', { class: 'files-area' },
    screenHead('Files', folder ? h('button', { type: 'button', class: 'danger-outline', onclick: deleteFolder }, 'Delete folder') : null, uploadButton, input),
    crumbs(folder),
    h('div', { class: 'toolbar' },
      h('div', { class: 'field inline' }, h('label', { for: filterId }, 'Filter by name'), filter),
      h('div', { class: 'actions', role: 'group', 'aria-label': 'Selected files' }, count, delSel, zipSel)),
    panel, tableWrap, empty, moreFolders,
    h('div', { class: 'pager' }, prev, pageNo, next), drop);
  area.addEventListener('dragover', (e) => { e.preventDefault(); area.classList.add('dragging'); });
  area.addEventListener('dragleave', (e) => { if (!area.contains(e.relatedTarget)) area.classList.remove('dragging'); });
  area.addEventListener('drop', async (e) => {
    e.preventDefault();
    area.classList.remove('dragging');
    const found = await droppedFiles(e.dataTransfer);
    upload(found.map(({ file, dir }) => ({ file, folder: [folder, dir].filter(Boolean).join('/') })));
  });
  clear(main, area);
  document.title = `${folder || 'All files'} · filestore console`;
  await load(true);
}
