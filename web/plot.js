// A canvas plot of series against time: min/max decimation per pixel column (each column
// draws one vertical stroke from the smallest to the largest sample in it, joined to the
// next), so a million rows draw in a few milliseconds. The x range and the cursor are shared
// by every plot of a page through a TimeAxis.
import { indexAt, valueAt } from './csv.js';

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf',
  '#7f7f7f', '#bcbd22'];

// Numbers for ticks and read-outs: short, never in exponent form between 1e-3 and 1e6.
export function formatNumber(x) {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(3);
  return String(Number(x.toPrecision(6)));
}

function niceTicks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) ticks.push(Math.abs(v) < 1e-12 * step ? 0 : v);
  return ticks;
}

// The x range (zoom) and the cursor time shared by plots; listeners redraw.
export class TimeAxis {
  constructor(t0, t1) {
    this.full = [t0, t1];
    this.range = [t0, t1];
    this.cursor = null;
    this.listeners = [];
  }
  onChange(f) { this.listeners.push(f); }
  notify(what) { for (const f of this.listeners) f(what); }
  setRange(a, b) {
    if (!(b > a)) return;
    this.range = [Math.max(a, this.full[0]), Math.min(b, this.full[1])];
    this.notify('range');
  }
  reset() { this.range = this.full.slice(); this.notify('range'); }
  setCursor(t) { this.cursor = t; this.notify('cursor'); }
  extend(t1) { if (t1 > this.full[1]) { const end = this.range[1] === this.full[1]; this.full[1] = t1; if (end) this.range[1] = t1; } }
}

// One plot: series {label, color, time, y, visible}, a y label with its unit.
export class Plot {
  constructor(parent, axis, ylabel) {
    this.axis = axis;
    this.ylabel = ylabel;
    this.series = [];
    this.root = document.createElement('div');
    this.root.className = 'plot';
    this.canvas = document.createElement('canvas');
    this.legend = document.createElement('div');
    this.legend.className = 'legend';
    this.root.append(this.canvas, this.legend);
    parent.append(this.root);
    this.margin = { left: 70, right: 10, top: 8, bottom: 28 };
    this.listen();
    axis.onChange(() => this.draw());
  }
  add(series) {
    series.visible = series.visible !== false;
    this.series.push(series);
    const item = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = series.visible;
    box.addEventListener('change', () => { series.visible = box.checked; this.draw(); });
    const swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.background = series.color;
    series.readout = document.createElement('span');
    series.readout.className = 'readout';
    item.append(box, swatch, document.createTextNode(series.label + ' '), series.readout);
    this.legend.append(item);
  }
  // Pixel geometry of the plotting area.
  frame() {
    const w = this.canvas.clientWidth || 800, h = this.canvas.clientHeight || 220, m = this.margin;
    return { w, h, x0: m.left, x1: w - m.right, y0: m.top, y1: h - m.bottom };
  }
  timeOfPixel(px) {
    const f = this.frame(), [a, b] = this.axis.range;
    return a + (b - a) * (px - f.x0) / (f.x1 - f.x0);
  }
  listen() {
    let dragFrom = null;
    const px = (e) => e.clientX - this.canvas.getBoundingClientRect().left;
    this.canvas.addEventListener('mousedown', (e) => { dragFrom = px(e); });
    this.canvas.addEventListener('mousemove', (e) => {
      this.axis.setCursor(this.timeOfPixel(px(e)));
      if (dragFrom !== null) this.dragTo = px(e);
    });
    this.canvas.addEventListener('mouseup', (e) => {
      const to = px(e);
      if (dragFrom !== null && Math.abs(to - dragFrom) > 4) {
        const a = this.timeOfPixel(Math.min(dragFrom, to)), b = this.timeOfPixel(Math.max(dragFrom, to));
        this.axis.setRange(a, b);
      }
      dragFrom = null;
      this.dragTo = null;
    });
    this.canvas.addEventListener('dblclick', () => this.axis.reset());
    this.canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      const t = this.timeOfPixel(px(e)), [a, b] = this.axis.range, k = e.deltaY > 0 ? 1.25 : 0.8;
      this.axis.setRange(t - (t - a) * k, t + (b - t) * k);
    }, { passive: false });
  }
  // The y range of the visible series over the x range (from the same decimation as drawing).
  columns(s, f) {
    const [a, b] = this.axis.range, t = s.time, y = s.y, n = t.length, width = Math.max(1, Math.round(f.x1 - f.x0));
    const lo = new Float64Array(width).fill(Infinity), hi = new Float64Array(width).fill(-Infinity);
    let i = Math.max(0, indexAt(t, a)), last = Math.min(n - 1, indexAt(t, b) + 1);
    const scale = width / (b - a);
    for (; i <= last; ++i) {
      const v = y[i];
      if (!Number.isFinite(v)) continue;
      let c = Math.floor((t[i] - a) * scale);
      if (c < 0) c = 0; else if (c >= width) c = width - 1;
      if (v < lo[c]) lo[c] = v;
      if (v > hi[c]) hi[c] = v;
    }
    return { lo, hi, width };
  }
  draw() {
    const dpr = window.devicePixelRatio || 1, f = this.frame();
    if (this.canvas.width !== Math.round(f.w * dpr)) this.canvas.width = Math.round(f.w * dpr);
    if (this.canvas.height !== Math.round(f.h * dpr)) this.canvas.height = Math.round(f.h * dpr);
    const g = this.canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, f.w, f.h);
    const visible = this.series.filter((s) => s.visible);
    // Decimated once per range, size, visibility and row count: moving the cursor only redraws.
    const key = [this.axis.range[0], this.axis.range[1], f.x1 - f.x0, ...visible.map((s) => s.label + ':' + s.time.length)].join('|');
    if (!this.cache || this.cache.key !== key) this.cache = { key, cols: visible.map((s) => this.columns(s, f)) };
    const cols = this.cache.cols;
    let ymin = Infinity, ymax = -Infinity;
    for (const c of cols) for (let k = 0; k < c.width; ++k) { if (c.lo[k] < ymin) ymin = c.lo[k]; if (c.hi[k] > ymax) ymax = c.hi[k]; }
    if (!Number.isFinite(ymin)) { ymin = -1; ymax = 1; }
    if (ymax === ymin) { const d = Math.abs(ymin) * 0.05 || 1; ymin -= d; ymax += d; }
    const pad = (ymax - ymin) * 0.05;
    ymin -= pad; ymax += pad;
    this.yrange = [ymin, ymax];
    const Y = (v) => f.y1 - (v - ymin) * (f.y1 - f.y0) / (ymax - ymin);
    this.drawAxes(g, f, Y);
    g.save();
    g.beginPath();
    g.rect(f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0);
    g.clip();
    visible.forEach((s, k) => {
      const c = cols[k];
      g.strokeStyle = s.color;
      g.lineWidth = 1.25;
      g.beginPath();
      let started = false;
      for (let p = 0; p < c.width; ++p) {
        if (c.lo[p] > c.hi[p]) continue;
        const x = f.x0 + p + 0.5;
        if (!started) { g.moveTo(x, Y(c.lo[p])); started = true; } else g.lineTo(x, Y(c.lo[p]));
        if (c.hi[p] !== c.lo[p]) g.lineTo(x, Y(c.hi[p]));
      }
      g.stroke();
    });
    g.restore();
    this.drawCursor(g, f);
  }
  drawAxes(g, f, Y) {
    const [a, b] = this.axis.range;
    g.strokeStyle = '#ccc';
    g.fillStyle = '#333';
    g.font = '11px sans-serif';
    g.lineWidth = 1;
    g.textAlign = 'center';
    for (const t of niceTicks(a, b, 8)) {
      const x = f.x0 + (t - a) * (f.x1 - f.x0) / (b - a);
      g.beginPath(); g.moveTo(x, f.y0); g.lineTo(x, f.y1); g.stroke();
      g.fillText(formatNumber(t), x, f.y1 + 13);
    }
    g.fillText('time [s]', (f.x0 + f.x1) / 2, f.h - 2);
    g.textAlign = 'right';
    for (const v of niceTicks(this.yrange[0], this.yrange[1], 5)) {
      const y = Y(v);
      g.beginPath(); g.moveTo(f.x0, y); g.lineTo(f.x1, y); g.stroke();
      g.fillText(formatNumber(v), f.x0 - 4, y + 4);
    }
    g.save();
    g.translate(12, (f.y0 + f.y1) / 2);
    g.rotate(-Math.PI / 2);
    g.textAlign = 'center';
    g.fillText(this.ylabel, 0, 0);
    g.restore();
    g.strokeStyle = '#888';
    g.strokeRect(f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0);
  }
  drawCursor(g, f) {
    const t = this.axis.cursor, [a, b] = this.axis.range;
    for (const s of this.series) s.readout.textContent = t === null ? '' : '= ' + formatNumber(valueAt(s.time, s.y, t));
    if (t === null || t < a || t > b) return;
    const x = f.x0 + (t - a) * (f.x1 - f.x0) / (b - a);
    g.strokeStyle = '#000';
    g.setLineDash([4, 3]);
    g.beginPath(); g.moveTo(x, f.y0); g.lineTo(x, f.y1); g.stroke();
    g.setLineDash([]);
  }
}

// An x-y plot of a few points per curve (a sweep's error against its step), log axes optional.
export function drawXY(canvas, curves, xlabel, ylabel, logY) {
  const dpr = window.devicePixelRatio || 1, w = canvas.clientWidth || 600, h = canvas.clientHeight || 300;
  canvas.width = w * dpr; canvas.height = h * dpr;
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  const f = { x0: 70, x1: w - 10, y0: 10, y1: h - 30 };
  const ty = (v) => (logY ? Math.log10(v) : v);
  const pts = curves.flatMap((c) => c.points).filter((p) => Number.isFinite(p[0]) && Number.isFinite(ty(p[1])));
  if (!pts.length) return;
  let [xa, xb] = [Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0]))];
  let [ya, yb] = [Math.min(...pts.map((p) => ty(p[1]))), Math.max(...pts.map((p) => ty(p[1])))];
  if (xa === xb) { xa -= 1; xb += 1; }
  if (ya === yb) { ya -= 1; yb += 1; }
  const X = (x) => f.x0 + (x - xa) * (f.x1 - f.x0) / (xb - xa), Y = (v) => f.y1 - (ty(v) - ya) * (f.y1 - f.y0) / (yb - ya);
  g.font = '11px sans-serif'; g.strokeStyle = '#ccc'; g.fillStyle = '#333'; g.textAlign = 'center';
  for (const x of niceTicks(xa, xb, 6)) { g.beginPath(); g.moveTo(X(x), f.y0); g.lineTo(X(x), f.y1); g.stroke(); g.fillText(formatNumber(x), X(x), f.y1 + 13); }
  g.fillText(xlabel, (f.x0 + f.x1) / 2, h - 3);
  g.textAlign = 'right';
  const decades = [];
  for (let d = Math.ceil(ya); d <= Math.floor(yb); ++d) decades.push(d);
  for (const v of logY && decades.length >= 2 ? decades : niceTicks(ya, yb, 5)) {
    const y = f.y1 - (v - ya) * (f.y1 - f.y0) / (yb - ya);
    g.beginPath(); g.moveTo(f.x0, y); g.lineTo(f.x1, y); g.stroke();
    g.fillText(logY ? formatNumber(Math.pow(10, v)) : formatNumber(v), f.x0 - 4, y + 4);
  }
  g.save(); g.translate(12, (f.y0 + f.y1) / 2); g.rotate(-Math.PI / 2); g.textAlign = 'center'; g.fillText(ylabel, 0, 0); g.restore();
  g.strokeStyle = '#888'; g.strokeRect(f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0);
  curves.forEach((c, k) => {
    g.strokeStyle = g.fillStyle = PALETTE[k % PALETTE.length];
    g.beginPath();
    c.points.forEach((p, i) => (i ? g.lineTo(X(p[0]), Y(p[1])) : g.moveTo(X(p[0]), Y(p[1]))));
    g.stroke();
    for (const p of c.points) { g.beginPath(); g.arc(X(p[0]), Y(p[1]), 3, 0, 2 * Math.PI); g.fill(); }
    g.fillText(c.label, f.x1 - 4, f.y0 + 14 * (k + 1));
  });
}
