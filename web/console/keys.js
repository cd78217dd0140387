// The Keys screen: the account's keys (never a secret), "Create key" (the
// new key shown once, with its S3 credential), "Revoke" (asks first).

import { get, post, del, session } from './api.js';
import { h, clear, table, when, dialog, formDialog, confirmAction, secretBox, toast, failed, screenHead } from './ui.js';

export async function render(main, params, state) {
  const list = h('div');
  const reload = async () => {
    const r = await get('/v1/keys');
    clear(list, table('Keys', ['ID', 'Kind', 'Name', 'Origins', 'Created', h('span', { class: 'sr-only' }, 'Actions')],
      r.keys.filter((k) => !k.revoked && !k.revoked_at).map((k) => h('tr', {},
        h('td', { class: 'mono' }, k.id, k.id === state.who?.key?.id ? h('span', { class: 'badge' }, 'this session') : null),
        h('td', {}, k.kind), h('td', {}, k.name || ''),
        h('td', { class: 'mono' }, (k.origins || []).join(', ')),
        h('td', {}, when(k.created_at || k.created)),
        h('td', { class: 'act' }, h('button', { type: 'button', class: 'danger-outline', 'aria-label': `Revoke ${k.id}`, onclick: () => revoke(k) }, 'Revoke')))),
      { empty: 'No keys.' }));
  };
  const revoke = async (k) => {
    const own = k.id === state.who?.key?.id;
    const warn = own ? 'This is the key this session signed in with: revoking it signs you out.' : 'Anything using it stops working at once.';
    if (!(await confirmAction(`Revoke ${k.name || k.id}?`, warn, 'Revoke'))) return;
    try {
      await del(`/v1/keys/${encodeURIComponent(k.id)}`);
      toast(`Revoked ${k.id}`);
      if (own) { await session(); location.reload(); return; }
      await reload();
    } catch (e) { failed(e); }
  };
  const create = async () => {
    const made = await formDialog('Create key', [
      { name: 'kind', label: 'Kind', options: [['secret', 'Secret'], ['public', 'Public']], value: 'secret' },
      { name: 'name', label: 'Name' },
      { name: 'origins', label: 'Origins', type: 'textarea', hint: 'A public key\'s pages, one a line (https://app.example.com).' },
    ], 'Create key', {
      onSubmit: (v) => {
        const body = { kind: v.kind };
        if (v.name.trim()) body.name = v.name.trim();
        const origins = v.origins.split(/[\s,]+/).filter(Boolean);
        if (origins.length) body.origins = origins;
        return post('/v1/keys', body);
      },
    });
    if (!made) return;
    await reload();
    await dialog('New key', () => [
      h('p', {}, 'Store it now: it is not shown again.'),
      secretBox('Key', made.key),
      made.s3_access_key_id ? [secretBox('S3 access key id', made.s3_access_key_id), secretBox('S3 secret access key', made.s3_secret_access_key)] : null,
    ]);
  };
  clear(main, screenHead('Keys', h('button', { type: 'button', class: 'primary', onclick: create }, 'Create key')), list);
  document.title = 'Keys · filestore console';
  await reload();
}
