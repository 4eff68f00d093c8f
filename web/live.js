// The live page of `stride run --view`: the WebSocket /live (framework/src/view/live.hpp) brings
// the controls of view_input subsystems, the rows of results.csv as the run writes them and, at
// the end, the run's summary; the sliders and buttons send {"type": "set", "name", "value"}.
import { splitCsvLine } from './csv.js';
import { el } from './tables.js';
import { formatNumber } from './plot.js';

export class LiveFeed {
  // handlers: rows(text of whole lines), controls(list), end(summary), closed()
  constructor(socket, handlers) {
    this.handlers = handlers;
    this.pending = '';
    this.messages = 0;
    this.sent = 0;
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/' + socket;
    this.ws = new WebSocket(url);
    this.ws.onmessage = (e) => this.receive(JSON.parse(e.data));
    this.ws.onclose = () => handlers.closed();
  }
  receive(m) {
    ++this.messages;
    if (m.type === 'controls') this.handlers.controls(m.controls);
    else if (m.type === 'end') this.handlers.end(m.summary);
    else if (m.type === 'rows') {
      const text = this.pending + m.csv, cut = text.lastIndexOf('\n');
      this.pending = text.slice(cut + 1);
      if (cut >= 0) this.handlers.rows(text.slice(0, cut + 1));
    }
  }
  set(name, value) {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify({ type: 'set', name, value }));
    ++this.sent;
    return true;
  }
}

// Whole lines of results.csv (no header) as rows of cells.
export function csvRows(text) {
  return text.split('\n').filter((l) => l !== '').map((l) => splitCsvLine(l.endsWith('\r') ? l.slice(0, -1) : l));
}

// The sliders and buttons of the controls in `box` (replacing what was there).
export function renderControls(box, controls, feed) {
  box.replaceChildren();
  if (!controls.length) return;
  box.append(el('h3', {}, 'Controls (view_input)'));
  for (const c of controls) {
    const unit = c.unit && c.unit !== '1' ? ' [' + c.unit + ']' : '';
    if (c.kind === 'button') {
      const b = el('button', { 'data-control': c.name, class: 'control' }, c.name + unit);
      const press = (v) => (e) => { e.preventDefault(); feed.set(c.name, v); };
      b.addEventListener('mousedown', press(c.max));
      b.addEventListener('touchstart', press(c.max));
      for (const ev of ['mouseup', 'mouseleave', 'touchend']) b.addEventListener(ev, press(c.min));
      box.append(el('div', { class: 'control-row' }, b));
      continue;
    }
    const input = el('input', { type: 'range', 'data-control': c.name, min: String(c.min), max: String(c.max),
      step: 'any', value: String(c.value) });
    const readout = el('span', { class: 'readout' }, formatNumber(c.value));
    input.addEventListener('input', () => {
      readout.textContent = formatNumber(Number(input.value));
      feed.set(c.name, Number(input.value));
    });
    box.append(el('div', { class: 'control-row' }, el('label', {}, c.name + unit + ' '), el('span', {}, formatNumber(c.min)),
      input, el('span', {}, formatNumber(c.max)), readout));
  }
}
