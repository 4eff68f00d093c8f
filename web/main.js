// The page: reads the data block (<script id="stride-data">: runs with their summary.json and
// results.csv inlined by `stride report`, or fetched from `stride view`), then draws the
// summaries, a sweep's tables, the 3D replay of mechanisms and every column against time.
// When done it sets data-stride-ready="true" on <body> and fills window.strideView for tests.
// Live (`stride run --view`, data.live): the rows come over the WebSocket (live.js), the plots
// grow over the run's time span and the cursor (and the 3D view) follows the newest row.
import { parseResults, splitCsvLine, valueAt } from './csv.js';
import { Plot, TimeAxis, PALETTE, drawXY, formatNumber } from './plot.js';
import { el, summaryTables, markdownTable } from './tables.js';
import { mechanismsOf, Replay } from './scene.js';
import { LiveFeed, csvRows, renderControls } from './live.js';

async function fetchText(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
  return r.text();
}

// Each run gets its summary and its table (parsed results.csv).
async function loadRuns(data) {
  for (const run of data.runs) {
    if (run.summary === null || run.summary === undefined) run.summary = JSON.parse(await fetchText(run.base + 'summary.json'));
    const inlined = run.results_element ? document.getElementById(run.results_element).textContent : run.results;
    const text = inlined !== null && inlined !== undefined ? inlined : await fetchText(run.base + 'results.csv');
    run.table = parseResults(text);
    run.results = null;  // the text is no longer needed
    if (run.results_element) document.getElementById(run.results_element).remove();
  }
  return data.runs;
}

function subsystemOf(column) {
  const dot = column.indexOf('.');
  return dot < 0 ? '(host)' : column.slice(0, dot);
}

// The names a run's column is plotted under: its own, or for a sweep's reference every run
// column it is compared with (reference_columns.json: "crane.s" for the reference's "reference.s").
function plottedNames(run, column) {
  return (run.plotted_as && run.plotted_as[column]) || [column];
}

// Plot groups: subsystem -> unit -> [{run, column index, name plotted under, column}], in the
// order of first appearance.
function groupColumns(runs) {
  const groups = new Map();
  runs.forEach((run) => {
    const units = (run.summary && run.summary.column_units) || {};
    run.table.names.forEach((column, k) => {
      const unit = units[column] || '?';
      plottedNames(run, column).forEach((name) => {
        const sub = subsystemOf(name);
        if (!groups.has(sub)) groups.set(sub, new Map());
        const byUnit = groups.get(sub);
        if (!byUnit.has(unit)) byUnit.set(unit, []);
        byUnit.get(unit).push({ run, k, name, column });
      });
    });
  });
  return groups;
}

// y of series (run, column k) minus the base run's column plotted under the same name, at the same times:
// the column reference_columns.json compares with it, else the one of that name.
function difference(run, k, base, name) {
  const names = base.table.names, as = base.plotted_as || {};
  const mapped = names.findIndex((c) => (as[c] || []).includes(name));
  const kb = mapped >= 0 ? mapped : names.indexOf(name);
  if (kb < 0) return null;
  const t = run.table.time, y = run.table.column(k), tb = base.table.time, yb = base.table.column(kb);
  const d = new Float64Array(t.length);
  for (let i = 0; i < t.length; ++i) d[i] = y[i] - valueAt(tb, yb, t[i]);
  return d;
}

// A sweep's table: sweep.csv as rows of {column: text}, the step axis and the other axes.
function sweepTable(sw) {
  const lines = sw.csv.split('\n').filter((l) => l !== '');
  const header = lines.length ? splitCsvLine(lines[0]) : [];
  const rows = lines.slice(1).map(splitCsvLine).filter((c) => c.length === header.length)
    .map((c) => Object.fromEntries(header.map((h, k) => [h, c[k]])));
  const m = /largest stable (\S+)/.exec(sw.stability || '');
  const step = m ? m[1] : header[1];
  const axes = header.slice(1, Math.max(1, header.indexOf('status')));
  return { rows, step, axes };
}

// A sweep's runs are named by their axes' values ("run 3: h_M = 0.01, coupling = RIM").
function labelSweepRuns(data) {
  const tables = (data.sweeps || []).map(sweepTable);
  for (const run of data.runs) {
    if (run.sweep < 0) continue;
    const prefix = data.sweeps.length > 1 ? data.sweeps[run.sweep].label + ' ' : '';
    const row = tables[run.sweep].rows.find((r) => Number(r.run) === run.sweep_run);
    if (row) run.label = prefix + run.label + ': ' + tables[run.sweep].axes.map((a) => a + ' = ' + row[a]).join(', ');
    else run.label = prefix + run.label;
  }
  return tables;
}

class Page {
  constructor(data) {
    this.data = data;
    this.runs = data.runs;
    const t0 = Math.min(...this.runs.map((r) => (r.table.rows ? r.table.time[0] : 0)));
    const t1 = Math.max(...this.runs.map((r) => (r.table.rows ? r.table.time[r.table.rows - 1] : 1)));
    const s = data.live ? this.runs[0].summary : null;  // live: the run's whole time span from the start
    if (s && s.end_time > s.start_time) this.axis = new TimeAxis(s.start_time, s.end_time);
    else this.axis = new TimeAxis(t0, t1 > t0 ? t1 : t0 + 1);
    this.replays = [];
    this.base = null;
  }
  render() {
    const main = document.getElementById('main');
    if (!this.data.live) main.append(el('h1', {}, this.data.title || 'Stride results'));  // live: startLive's
    this.sweepPlots = [];
    (this.data.sweeps || []).forEach((sw, k) => this.renderSweep(main, sw, this.data.sweepTables[k]));
    this.sums = el('details', this.runs.length <= 2 ? { open: '' } : {});
    this.refreshSummaries();
    main.append(this.sums);
    this.renderControls(main);
    this.renderReplays(main);
    this.plotsRoot = el('div', { id: 'plots' });
    main.append(this.plotsRoot);
    this.renderPlots();
  }
  refreshSummaries() {
    this.sums.replaceChildren(el('summary', {}, 'Summaries (' + this.runs.length + ' runs)'));
    for (const run of this.runs) this.sums.append(summaryTables(run.label, run.summary || {}));
  }
  // Live: rows were appended; the cursor follows the newest one (unless "follow" is off). At most
  // ten redraws a second, whatever the rate of messages (the browser shares the run's cores).
  liveUpdate() {
    if (this.drawPending) return;
    this.drawPending = true;
    setTimeout(() => {
      this.drawPending = false;
      const t = this.runs[0].table;
      if (this.follow && this.follow.checked && t.rows) this.axis.setCursor(t.time[t.rows - 1]);
      else for (const p of this.plots) p.draw();
    }, 100);
  }
  renderSweep(main, sw, tab) {
    const sec = el('section', { class: 'sweep' }, el('h2', {}, 'Sweep: ' + sw.label));
    const t = markdownTable('Stability', sw.stability || '');
    if (t) sec.append(t);
    const others = tab.axes.filter((a) => a !== tab.step), curves = new Map();
    for (const r of tab.rows) {
      const key = others.map((a) => a + ' = ' + r[a]).join(', ') || 'error';
      if (!curves.has(key)) curves.set(key, []);
      if (r.status === 'completed' && Number.isFinite(Number(r.error))) curves.get(key).push([Number(r[tab.step]), Number(r.error)]);
    }
    const canvas = el('canvas', { class: 'xy' });
    sec.append(el('h3', {}, 'Error against ' + tab.step + ' (completed runs)'), canvas);
    main.append(sec);
    const list = [...curves].map(([label, points]) => ({ label, points: points.sort((a, b) => a[0] - b[0]) }));
    this.sweepPlots.push(() => drawXY(canvas, list, tab.step, 'error', true));
  }
  renderControls(main) {
    const bar = el('div', { class: 'controls' });
    if (this.runs.length > 1) {
      const sel = el('select', { id: 'difference' }, el('option', { value: '' }, 'no difference'));
      this.runs.forEach((r, k) => sel.append(el('option', { value: String(k) }, 'difference to ' + r.label)));
      sel.addEventListener('change', () => { this.base = sel.value === '' ? null : this.runs[Number(sel.value)]; this.renderPlots(); });
      bar.append(sel);
    }
    this.play = el('button', { id: 'play' }, 'play');
    this.speed = el('select', { id: 'speed' }, ...[0.1, 0.25, 0.5, 1, 2, 5, 10].map((s) => el('option', { value: String(s) }, s + '×')));
    this.speed.value = '1';
    const [a, b] = this.axis.full;
    this.slider = el('input', { id: 'time', type: 'range', min: String(a), max: String(b), step: String((b - a) / 10000), value: String(a) });
    this.clock = el('span', { class: 'clock' }, 't = ' + formatNumber(a) + ' s');
    const reset = el('button', {}, 'zoom out');
    reset.addEventListener('click', () => this.axis.reset());
    bar.append(this.play, this.speed, this.slider, this.clock, reset);
    if (this.data.live) {
      this.follow = el('input', { id: 'follow', type: 'checkbox', checked: '' });
      bar.append(el('label', {}, this.follow, ' follow the newest row'));
    }
    main.append(bar);
    this.slider.addEventListener('input', () => this.axis.setCursor(Number(this.slider.value)));
    this.play.addEventListener('click', () => this.togglePlay());
    this.axis.onChange((what) => { if (what === 'cursor') this.showTime(this.axis.cursor); });
  }
  showTime(t) {
    if (t === null) return;
    this.slider.value = String(t);
    this.clock.textContent = 't = ' + formatNumber(t) + ' s';
    for (const r of this.replays) r.setTime(t);
  }
  togglePlay() {
    if (this.playing) { this.playing = false; this.play.textContent = 'play'; return; }
    this.playing = true;
    this.play.textContent = 'pause';
    let last = performance.now();
    const [a, b] = this.axis.full;
    if (this.axis.cursor === null || this.axis.cursor >= b) this.axis.setCursor(a);
    const tick = (now) => {
      if (!this.playing) return;
      const t = Math.min(b, this.axis.cursor + (now - last) / 1000 * Number(this.speed.value));
      last = now;
      this.axis.setCursor(t);
      if (t >= b) { this.togglePlay(); return; }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }
  renderReplays(main) {
    for (const run of this.runs) {
      for (const mech of mechanismsOf(run)) {
        const box = el('section', { class: 'replay-box' });
        main.append(box);
        if (!window.THREE) { box.append(el('p', { class: 'note' }, mech.subsystem + ': no 3D replay, three.js is not available (Debian package libjs-three)')); continue; }
        if (!mech.recorded) { box.append(el('p', { class: 'note' }, mech.subsystem + ': no 3D replay, record "' + mech.subsystem + '.poses*" for one')); continue; }
        const r = new Replay(box, run, mech);
        r.setTime(this.axis.full[0]);
        this.replays.push(r);
      }
    }
  }
  renderPlots() {
    this.plotsRoot.replaceChildren();
    this.axis.listeners = this.axis.listeners.filter((f) => !f.plot);
    this.plots = [];
    const several = this.runs.length > 1;
    for (const [sub, byUnit] of groupColumns(this.runs)) {
      const box = el('details', { open: '', class: 'subsystem' }, el('summary', {}, sub));
      this.plotsRoot.append(box);
      for (const [unit, members] of byUnit) {
        const plot = new Plot(box, this.axis, (this.base ? 'difference ' : '') + '[' + unit + ']');
        this.axis.listeners[this.axis.listeners.length - 1].plot = true;
        members.forEach((m, i) => {
          if (this.base === m.run) return;
          const y = this.base ? difference(m.run, m.k, this.base, m.name) : m.run.table.column(m.k);
          if (!y) return;
          // The table's current views (rows appended in a live view show at the next draw).
          const table = m.run.table, live = !this.base;
          const column = m.column === m.name ? m.name : m.column + ' (compared with ' + m.name + ')';
          plot.add({ label: (several ? m.run.label + ': ' : '') + column, color: PALETTE[i % PALETTE.length],
            get time() { return table.time; }, get y() { return live ? table.column(m.k) : y; },
            run: m.run.label, name: m.column, plottedAs: m.name });
        });
        this.plots.push(plot);
      }
    }
    for (const p of this.plots) p.draw();
  }
  // What a test reads: every plotted series with its row count and last value, the bodies.
  describe() {
    const series = this.plots.flatMap((p, plot) => p.series.map((s) => ({ run: s.run, name: s.name,
      plottedAs: s.plottedAs, plot, rows: s.time.length, last: s.time.length ? s.y[s.y.length - 1] : null })));
    const rowCounts = {};
    for (const r of this.runs) rowCounts[r.label] = r.table.rows;
    return {
      seriesNames: [...new Set(series.map((s) => s.name))], series, rowCounts,
      runs: this.runs.map((r) => r.label),
      bodyCount: this.replays.reduce((n, r) => n + r.bodies.length, 0),
      time: this.axis.cursor === null ? this.axis.full[0] : this.axis.cursor,
      bodies: this.replays.flatMap((r) => r.positions()),
      contacts: this.replays.flatMap((r) => r.contactPositions()),
    };
  }
}

function showPage(page, begin, extra) {
  page.render();
  for (const p of page.sweepPlots) p();
  window.addEventListener('resize', () => { for (const p of page.plots) p.draw(); for (const p of page.sweepPlots) p(); });
  window.strideView = {
    get seriesNames() { return page.describe().seriesNames; },
    get rowCounts() { return page.describe().rowCounts; },
    get bodyCount() { return page.describe().bodyCount; },
    get time() { return page.describe().time; },
    describe: () => page.describe(),
    setTime: (t) => page.axis.setCursor(t),
    setRange: (a, b) => page.axis.setRange(a, b),
    renderMs: performance.now() - begin,
    ...extra,
  };
  document.body.dataset.strideReady = 'true';
}

// Live: the page is drawn once the header of results.csv has arrived, then grows with each batch.
function startLive(data, begin) {
  const run = data.runs[0], main = document.getElementById('main');
  const status = el('p', { id: 'live-status', class: 'note' }, 'live: waiting for the first rows');
  const controls = el('section', { id: 'controls', class: 'controls-box' });
  main.append(el('h1', {}, 'live: ' + (data.title || 'Stride results')), status, controls);
  data.sweepTables = [];
  let page = null, state = 'running';
  const feed = new LiveFeed(data.live.socket, {
    controls: (list) => renderControls(controls, list, feed),
    rows: (text) => {
      if (!run.table) {
        run.table = parseResults(text);
        page = new Page(data);
        showPage(page, begin, { live: { get status() { return state; }, get messages() { return feed.messages; },
          get sent() { return feed.sent; }, set: (name, value) => feed.set(name, value) } });
      } else {
        run.table.appendRows(csvRows(text));
        page.liveUpdate();
      }
      status.textContent = 'live: ' + run.table.rows + ' rows, t = ' + formatNumber(run.table.rows ? run.table.time[run.table.rows - 1] : 0) + ' s';
    },
    end: (summary) => {
      state = summary.status || 'ended';
      run.summary = summary;
      if (page) { page.refreshSummaries(); page.liveUpdate(); }
      status.textContent = 'run ' + state + (summary.message ? ': ' + summary.message : '') + ' (' + (run.table ? run.table.rows : 0) + ' rows)';
      document.body.dataset.strideLive = 'ended';
    },
    closed: () => { if (state === 'running') status.textContent += ' (the connection to stride closed)'; },
  });
}

async function start() {
  const data = JSON.parse(document.getElementById('stride-data').textContent);
  const begin = performance.now();
  if (data.live) { startLive(data, begin); return; }
  await loadRuns(data);
  data.sweepTables = labelSweepRuns(data);
  showPage(new Page(data), begin, {});
}

start().catch((e) => {
  document.getElementById('main').append(el('pre', { class: 'error' }, 'error: ' + e.message));
  console.error('stride view: ' + e.message);
});
