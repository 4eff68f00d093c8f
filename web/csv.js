// results.csv as columns of numbers: the header's names, the time column and one
// Float64Array per column (NaN where a cell is not a number, e.g. a quoted text column).
// Rows are kept in growable arrays so that rows streamed later can be appended (appendRows).

// Splits one CSV line at commas outside double quotes (RFC 4180: "" inside quotes is a quote).
export function splitCsvLine(line) {
  if (line.indexOf('"') < 0) return line.split(',');
  const cells = [];
  let cell = '', quoted = false;
  for (let i = 0; i < line.length; ++i) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { cell += '"'; ++i; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { cells.push(cell); cell = ''; }
    else cell += c;
  }
  cells.push(cell);
  return cells;
}

// A table of numeric columns: `names` (after time), `time`, `columns[k]` (views of length `rows`).
export class ResultTable {
  constructor(names) {
    this.names = names;
    this.rows = 0;
    this.capacity = 0;
    this.timeStore = new Float64Array(0);
    this.stores = names.map(() => new Float64Array(0));
  }
  reserve(n) {
    if (n <= this.capacity) return;
    const cap = Math.max(n, 2 * this.capacity, 1024);
    const grow = (a) => { const b = new Float64Array(cap); b.set(a.subarray(0, this.rows)); return b; };
    this.timeStore = grow(this.timeStore);
    this.stores = this.stores.map(grow);
    this.capacity = cap;
  }
  // Appends rows given as arrays of cells (time first); a row of the wrong length is left out
  // (a row cut by a crash).
  appendRows(rows) {
    this.reserve(this.rows + rows.length);
    const width = this.names.length + 1;
    for (const cells of rows) {
      if (cells.length !== width) continue;
      const r = this.rows++;
      this.timeStore[r] = Number(cells[0]);
      for (let k = 1; k < width; ++k) {
        this.stores[k - 1][r] = cellNumber(cells[k]);
      }
    }
  }
  get time() { return this.timeStore.subarray(0, this.rows); }
  column(k) { return this.stores[k].subarray(0, this.rows); }
}

function cellNumber(s) {
  return s === '' || s === 'nan' ? NaN : s === 'inf' ? Infinity : s === '-inf' ? -Infinity : Number(s);
}

// Parses the whole text of a results.csv. Numeric lines are scanned in place (no array per
// row); a line with quotes (text columns) goes through splitCsvLine; a line of the wrong width
// (a quoted line break, a row cut by a crash) is left out, and so is a last line without its
// newline (a row being written).
export function parseResults(text) {
  let end = text.indexOf('\n');
  if (end < 0) end = text.length;
  const header = splitCsvLine(text.slice(0, end).replace(/\r$/, ''));
  if (header[0] !== 'time') throw new Error('results.csv: the first column is "' + header[0] + '", expected "time"');
  const table = new ResultTable(header.slice(1));
  const width = header.length;
  let lines = 0;
  for (let i = end + 1; (i = text.indexOf('\n', i) + 1) > 0;) ++lines;
  table.reserve(lines);
  const row = new Float64Array(width);
  for (let start = end + 1; start < text.length;) {
    const stop = text.indexOf('\n', start);
    if (stop < 0) break;  // the torn last line
    let line = text.substring(start, stop);
    start = stop + 1;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.indexOf('"') >= 0) { table.appendRows([splitCsvLine(line)]); continue; }
    let k = 0, from = 0, fits = true;
    for (;;) {
      const comma = line.indexOf(',', from);
      if (k === width) { fits = false; break; }  // more cells than columns
      row[k++] = cellNumber(comma < 0 ? line.substring(from) : line.substring(from, comma));
      if (comma < 0) break;
      from = comma + 1;
    }
    if (!fits || k !== width) continue;
    const r = table.rows++;
    table.timeStore[r] = row[0];
    for (let c = 1; c < width; ++c) table.stores[c - 1][r] = row[c];
  }
  return table;
}

// Index of the last sample with time <= t (0 when t is before the first).
export function indexAt(time, t) {
  let lo = 0, hi = time.length - 1;
  if (hi < 0) return -1;
  if (t >= time[hi]) return hi;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (time[mid] <= t) lo = mid; else hi = mid;
  }
  return lo;
}

// Linear interpolation of (time, y) at t, held outside the samples.
export function valueAt(time, y, t) {
  const n = time.length;
  if (n === 0) return NaN;
  const i = indexAt(time, t);
  if (i >= n - 1 || t <= time[0]) return y[Math.max(i, 0)];
  const t0 = time[i], t1 = time[i + 1];
  if (t1 === t0) return y[i + 1];
  return y[i] + (y[i + 1] - y[i]) * (t - t0) / (t1 - t0);
}
