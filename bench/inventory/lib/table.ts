export interface Target {
  /** 'abs' bounds ours; 'ratio' bounds ours/raw. */
  kind: 'abs' | 'ratio';
  direction: 'lower' | 'higher';
  value: number;
}

export interface Row {
  metric: string;
  unit: string;
  ours: number;
  raw?: number;
  /** What the raw column is (e.g. "COPY"), shown beside its value. */
  rawLabel?: string;
  target?: Target;
  digits?: number;
}

export function passes(row: Row): boolean | undefined {
  const t = row.target;
  if (!t || (t.kind === 'ratio' && !row.raw)) return undefined;
  const value = t.kind === 'abs' ? row.ours : row.raw ? row.ours / row.raw : NaN;
  return t.direction === 'lower' ? value <= t.value : value >= t.value;
}

export function fmt(n: number | undefined, digits = 1): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function targetText(row: Row): string {
  const t = row.target;
  if (!t) return 'info';
  const op = t.direction === 'lower' ? '<=' : '>=';
  return t.kind === 'abs' ? `${op} ${fmt(t.value, 0)} ${row.unit}` : `ratio ${op} ${t.value.toFixed(2)}`;
}

/** A Markdown table: readable on a terminal, pasteable into docs. */
export function markdownTable(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [row(header), row(widths.map((w) => '-'.repeat(w))), ...lines.map(row)].join('\n');
}

/** The results: metric, ours, raw, ratio, target, pass/fail. */
export function renderResults(rows: Row[]): string {
  return markdownTable(
    ['metric', 'ours', 'raw', 'ratio (ours/raw)', 'target', 'result'],
    rows.map((r) => {
      const digits = r.digits ?? 1;
      const pass = passes(r);
      return [
        r.metric,
        `${fmt(r.ours, digits)} ${r.unit}`,
        r.raw === undefined ? '—' : `${fmt(r.raw, digits)} ${r.unit}${r.rawLabel ? ` (${r.rawLabel})` : ''}`,
        r.raw ? `${(r.ours / r.raw).toFixed(2)}×` : '—',
        targetText(r),
        pass === undefined ? '—' : pass ? 'PASS' : 'FAIL',
      ];
    }),
  );
}
