// The summary of a run as tables (status, steps, accuracy, energy, events, real time) and a
// sweep's stability table (its stability.md) and error against step (its sweep.csv).
import { formatNumber } from './plot.js';

export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function cell(v) {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// A table of rows [name, value, ...] under a caption.
export function table(caption, header, rows) {
  const t = el('table', {}, el('caption', {}, caption));
  if (header) t.append(el('tr', {}, ...header.map((h) => el('th', {}, h))));
  for (const r of rows) t.append(el('tr', {}, ...r.map((v) => el('td', {}, cell(v)))));
  return t;
}

function subsystemRows(s) {
  const rows = [];
  for (const [name, sub] of Object.entries(s.subsystems || {})) {
    const taken = sub.steps_taken || {};
    rows.push([name, sub.plugin, sub.steps, sub.step, taken.smallest, taken.largest, sub.energy_J,
      sub.messages ? sub.messages.warnings : null]);
  }
  return rows;
}

// Events: what the summary counts under "events" (any subsystem or the run), if anything.
function eventRows(s) {
  const rows = [];
  const add = (where, ev) => {
    if (ev && typeof ev === 'object') for (const [k, v] of Object.entries(ev)) rows.push([where, k, v]);
    else if (ev !== undefined) rows.push([where, 'events', ev]);
  };
  add('run', s.events);
  for (const [name, sub] of Object.entries(s.subsystems || {})) {
    add(name, sub.events);
    if (sub.statistics) for (const [k, v] of Object.entries(sub.statistics)) if (/event/.test(k)) add(name, { [k]: v });
  }
  return rows;
}

// Every table of one run's summary.json, in a <section>.
export function summaryTables(label, s) {
  const sec = el('section', { class: 'summary' }, el('h3', {}, label));
  const status = [['status', s.status], ['message', s.message], ['time reached', s.end_time_reached],
    ['end time', s.end_time], ['rows', s.rows], ['wall time [s]', s.wall_time_s],
    ['real-time factor (wall / simulated)', s.real_time_factor], ['manifest', s.manifest]].filter((r) => r[1] !== undefined);
  sec.append(table('Run', null, status));
  if (s.subsystems) {
    sec.append(table('Subsystems', ['subsystem', 'plugin', 'steps', 'step [s]', 'smallest [s]', 'largest [s]',
      'energy [J]', 'warnings'], subsystemRows(s)));
  }
  const acc = s.accuracy;
  if (acc) {
    sec.append(table('Accuracy', null, [['status', acc.status], ['warning', acc.warning],
      ['RMS relative coupling error', acc.rms_relative_coupling_error],
      ['max relative coupling error', acc.max_relative_coupling_error],
      ['max relative energy residual', acc.max_relative_energy_residual]].filter((r) => r[1] !== undefined)));
    if (acc.coupling_error && acc.coupling_error.length) {
      sec.append(table('Coupling error per connection', ['from', 'to', 'unit', 'RMS', 'RMS relative', 'max', 'at [s]'],
        acc.coupling_error.map((c) => [c.from, c.to, c.unit, c.rms, c.rms_relative, c.max, c.max_at_s])));
    }
  }
  if (s.energy_balance) {
    sec.append(table('Energy balance [J]', null, Object.entries(s.energy_balance)));
  }
  const ev = eventRows(s);
  if (ev.length) sec.append(table('Events', ['where', 'what', 'count'], ev));
  if (s.real_time && typeof s.real_time === 'object') {
    sec.append(table('Real time', null, Object.entries(s.real_time)));
  }
  return sec;
}

// A Markdown table (stability.md) as HTML rows.
export function markdownTable(caption, text) {
  const lines = text.split('\n').filter((l) => l.trim().startsWith('|'));
  if (lines.length < 2) return null;
  const cells = (l) => l.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
  return table(caption, cells(lines[0]), lines.slice(2).map(cells));
}
