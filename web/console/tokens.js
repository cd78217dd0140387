// The Upload tokens screen: the active tokens, "Create token" (its URL
// shown once), revoke.

import { get, post, del } from './api.js';
import { h, clear, table, when, dialog, formDialog, confirmAction, secretBox, toast, failed, screenHead } from './ui.js';

export async function render(main) {
  const list = h('div');
  const reload = async () => {
    const r = await get('/v1/upload-tokens');
    clear(list, table('Upload tokens', ['ID', 'Folder', 'Uploads left', 'Expires', 'Created', h('span', { class: 'sr-only' }, 'Actions')],
      r.tokens.map((t) => h('tr', {},
        h('td', { class: 'mono' }, t.id), h('td', {}, t.policy?.folder || '(any)'),
        h('td', { class: 'num' }, `${t.uploads_left} of ${t.max_uploads}`),
        h('td', {}, when(t.expires_at)), h('td', {}, when(t.created_at)),
        h('td', { class: 'act' }, h('button', { type: 'button', class: 'danger-outline', 'aria-label': `Revoke ${t.id}`, onclick: () => revoke(t) }, 'Revoke')))),
      { empty: 'No active upload tokens.' }));
  };
  const revoke = async (t) => {
    if (!(await confirmAction(`Revoke ${t.id}?`, 'Uploads with it are refused from now on. Files already uploaded stay.', 'Revoke'))) return;
    try {
      await del(`/v1/upload-tokens/${encodeURIComponent(t.id)}`);
      toast(`Revoked ${t.id}`);
      await reload();
    } catch (e) { failed(e); }
  };
  const create = async () => {
    const made = await formDialog('Create token', [
      { name: 'folder', label: 'Folder', hint: 'Where its files go (empty: the root).' },
      { name: 'max_uploads', label: 'Uploads', type: 'number', value: '1' },
      { name: 'expires_in', label: 'Expires in', options: [['600', '10 minutes'], ['3600', '1 hour'], ['86400', '1 day']], value: '3600' },
      { name: 'private', label: 'Private files', type: 'checkbox' },
    ], 'Create token', {
      onSubmit: (v) => {
        const body = { max_uploads: Number(v.max_uploads) || 1, expires_in: Number(v.expires_in), private: v.private };
        if (v.folder.trim()) body.folder = v.folder.trim();
        return post('/v1/upload-tokens', body);
      },
    });
    if (!made) return;
    await reload();
    await dialog('New upload token', () => [
      h('p', {}, 'Hand this URL to the page that uploads; it is not shown again.'),
      secretBox('URL', made.url),
    ]);
  };
  clear(main, screenHead('Upload tokens', h('button', { type: 'button', class: 'primary', onclick: create }, 'Create token')), list);
  document.title = 'Upload tokens · filestore console';
  await reload();
}
