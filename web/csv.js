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
        const s = cells[k];
        this.stores[k - 1][r] = s === '' || s === 'nan' ? NaN : s === 'inf' ? Infinity : s === '-inf' ? -Infinity : Number(s);
      }
    }
  }
  get time() { return this.timeStore.subarray(0, this.rows); }
  column(k) { return this.stores[k].subarray(0, this.rows); }
}

// Parses the whole text of a results.csv. Text cells spanning lines (a quoted line break)
// are not numbers: such rows are read by splitCsvLine line by line and dropped by width.
export function parseResults(text) {
  let end = text.indexOf('\n');
  if (end < 0) end = text.length;
  const header = splitCsvLine(text.slice(0, end).replace(/\r$/, ''));
  if (header[0] !== 'time') throw new Error('results.csv: the first column is "' + header[0] + '", expected "time"');
  const table = new ResultTable(header.slice(1));
  const lines = text.slice(end + 1).split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();  // the final newline
  const complete = text.endsWith('\n') ? lines : lines.slice(0, -1);  // a torn last row is left out
  const batch = [];
  for (const line of complete) batch.push(splitCsvLine(line.replace(/\r$/, '')));
  table.appendRows(batch);
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
