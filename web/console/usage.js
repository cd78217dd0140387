// The Usage screen: this month's storage, bandwidth and uploads against the
// plan's limits, and the last 30 days as a chart (inline SVG).

import { get } from './api.js';
import { h, clear, humanSize, screenHead, failed } from './ui.js';

const SVG = 'http://www.w3.org/2000/svg';
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

// A plan without a limit says so with a huge one.
const limited = (l) => l > 0 && l < 1e18;

function bar(label, used, limit, fmt) {
  if (!limited(limit)) limit = 0;
  const pct = limit ? Math.min(100, (used / limit) * 100) : 0;
  const text = limit ? `${fmt(used)} of ${fmt(limit)} (${pct.toFixed(pct < 10 ? 1 : 0)}%)` : `${fmt(used)} (no limit)`;
  const fill = h('div', { class: `fill${pct >= 90 ? ' high' : ''}` });
  fill.style.width = `${pct}%`;
  return h('div', { class: 'usage-bar' },
    h('div', { class: 'usage-label' }, h('strong', {}, label), h('span', {}, text)),
    h('div', { class: 'track', 'aria-hidden': 'true' }, fill));
}

const METRICS = {
  storage_bytes: ['Storage', humanSize],
  bandwidth_bytes: ['Bandwidth', humanSize],
  upload_count: ['Uploads', String],
};

function chart(days, metric) {
  const [name, fmt] = METRICS[metric];
  const W = 720;
  const H = 200;
  const pad = 28;
  const max = Math.max(1, ...days.map((d) => d[metric]));
  const bw = (W - pad) / days.length;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H + 24}`, class: 'chart', role: 'img',
    'aria-label': `${name} per day, ${days[0]?.date} to ${days[days.length - 1]?.date}; highest ${fmt(max)}` });
  svg.append(s('line', { x1: pad, y1: H, x2: W, y2: H, class: 'axis' }));
  svg.append(s('text', { x: 0, y: 12, class: 'tick' }, fmt(max)));
  days.forEach((d, i) => {
    const v = d[metric];
    const bh = (v / max) * (H - 20);
    const rect = s('rect', { x: pad + i * bw + 1, y: H - bh, width: Math.max(1, bw - 2), height: bh, class: 'bar' });
    rect.append(s('title', {}, `${d.date}: ${fmt(v)}`));
    svg.append(rect);
    const last = i === days.length - 1;
    if ((i % 7 === 0 && days.length - 1 - i >= 4) || last) {
      svg.append(s('text', { x: pad + i * bw + (last ? bw : 0), y: H + 16, class: 'tick', 'text-anchor': last ? 'end' : 'start' }, d.date.slice(5)));
    }
  });
  return svg;
}

export async function render(main) {
  document.title = 'Usage · filestore console';
  const bars = h('section', { class: 'usage', 'aria-label': 'This month' });
  const chartBox = h('section', { class: 'chart-box', 'aria-labelledby': 'chart-title' });
  clear(main, screenHead('Usage'), bars, chartBox);
  const u = await get('/v1/usage');
  const l = u.limits || {};
  clear(bars, h('h2', {}, `This month (since ${u.period_start}) · plan ${u.plan || ''}`),
    bar('Storage', u.storage_bytes + (u.reserved_bytes || 0), l.storage_bytes, humanSize),
    bar('Bandwidth', u.bandwidth_bytes, l.bandwidth_bytes, humanSize),
    bar('Uploads', u.upload_count, l.upload_count, String));
  try {
    const hist = await get('/v1/usage/history?days=30');
    const select = h('select', { id: 'chart-metric' },
      Object.entries(METRICS).map(([k, [n]]) => h('option', { value: k }, n)));
    const holder = h('div', {}, chart(hist.days, 'storage_bytes'));
    select.addEventListener('change', () => holder.replaceChildren(chart(hist.days, select.value)));
    clear(chartBox, h('div', { class: 'chart-head' }, h('h2', { id: 'chart-title' }, 'Last 30 days'),
      h('div', { class: 'field inline' }, h('label', { for: 'chart-metric' }, 'Show'), select)), holder);
  } catch (e) {
    clear(chartBox, h('h2', { id: 'chart-title' }, 'Last 30 days'), h('p', { class: 'error' }, e.message));
    if (e.status !== 404) failed(e);
  }
}
