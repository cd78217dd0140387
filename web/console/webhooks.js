// The Webhooks screen: subscriptions, "Create webhook" (its signing secret
// shown once), delete, and each one's recent deliveries.

import { get, post, del } from './api.js';
import { h, clear, table, when, dialog, formDialog, confirmAction, secretBox, toast, failed, screenHead } from './ui.js';

async function deliveries(w, box, button) {
  if (!box.hidden) { box.hidden = true; button.setAttribute('aria-expanded', 'false'); return; }
  try {
    const r = await get(`/v1/webhooks/${encodeURIComponent(w.id)}/deliveries`);
    clear(box, table(`Recent deliveries of ${w.url}`, ['Event', 'Type', 'Status', 'HTTP status', 'Attempts', 'At'],
      r.deliveries.map((d) => h('tr', {},
        h('td', { class: 'mono' }, d.event_id), h('td', {}, d.type),
        h('td', {}, h('span', { class: `status ${d.status}` }, d.status)),
        h('td', { class: 'num' }, d.http_status ?? '—'), h('td', { class: 'num' }, d.attempts),
        h('td', {}, when(d.at)))),
      { empty: 'No deliveries yet.' }));
    box.hidden = false;
    button.setAttribute('aria-expanded', 'true');
  } catch (e) { failed(e); }
}

export async function render(main) {
  const list = h('div', { class: 'cards' });
  const reload = async () => {
    const r = await get('/v1/webhooks');
    if (!r.webhooks.length) { clear(list, h('p', { class: 'muted empty' }, 'No webhooks.')); return; }
    clear(list, r.webhooks.map((w) => {
      const box = h('div', { hidden: true });
      const show = h('button', { type: 'button', 'aria-expanded': 'false', onclick: () => deliveries(w, box, show) }, 'Recent deliveries');
      return h('article', { class: 'card', 'aria-label': w.url },
        h('div', { class: 'card-head' },
          h('div', {}, h('h2', { class: 'mono' }, w.url),
            h('p', { class: 'muted' }, `${w.id} · ${(w.events || []).join(', ') || 'all events'} · created ${when(w.created_at)}`)),
          h('div', { class: 'actions' }, show,
            h('button', { type: 'button', class: 'danger-outline', 'aria-label': `Delete ${w.url}`, onclick: () => remove(w) }, 'Delete'))),
        box);
    }));
  };
  const remove = async (w) => {
    if (!(await confirmAction(`Delete the webhook to ${w.url}?`, 'No more events are sent to it.', 'Delete'))) return;
    try {
      await del(`/v1/webhooks/${encodeURIComponent(w.id)}`);
      toast('Webhook deleted');
      await reload();
    } catch (e) { failed(e); }
  };
  const create = async () => {
    const made = await formDialog('Create webhook', [
      { name: 'url', label: 'URL', type: 'url', required: true, placeholder: 'https://example.com/hooks/filestore' },
    ], 'Create webhook', { onSubmit: (v) => post('/v1/webhooks', { url: v.url.trim() }) });
    if (!made) return;
    await reload();
    if (made.secret) {
      await dialog('New webhook', () => [
        h('p', {}, 'Its signing secret, to check deliveries: it is not shown again.'),
        secretBox('Secret', made.secret),
      ]);
    }
  };
  clear(main, screenHead('Webhooks', h('button', { type: 'button', class: 'primary', onclick: create }, 'Create webhook')), list);
  document.title = 'Webhooks · filestore console';
  await reload();
}
