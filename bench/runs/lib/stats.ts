/** Nearest-rank percentile of a sample (p in 0..100). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

export function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** Runs `fn(i)` for i = 0..n-1 with at most `width` calls in flight. */
export async function pool(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) {
        const i = next++;
        await fn(i);
      }
    }),
  );
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type Direction = 'lower' | 'higher';

export interface Target {
  kind: 'abs' | 'ratio';
  direction: Direction;
  value: number;
}

export interface Row {
  /** Short id shown first, e.g. `(a)`. */
  id: string;
  metric: string;
  unit: string;
  ours: number;
  raw: number | undefined;
  /** What the targets bound: the absolute value of ours, or ours/raw. All must hold to pass. */
  targets?: Target[];
  /** Digits after the point for ours/raw. */
  digits?: number;
}

function holds(row: Row, t: Target): boolean {
  const value = t.kind === 'abs' ? row.ours : row.raw ? row.ours / row.raw : NaN;
  return t.direction === 'lower' ? value <= t.value : value >= t.value;
}

/** True when every target holds, undefined for an informational row. */
export function passes(row: Row): boolean | undefined {
  if (!row.targets?.length) return undefined;
  return row.targets.every((t) => holds(row, t));
}

function fmt(n: number | undefined, digits: number): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function targetText(row: Row): string {
  if (!row.targets?.length) return 'info';
  return row.targets
    .map((t) => {
      const op = t.direction === 'lower' ? '<=' : '>=';
      return t.kind === 'abs' ? `${op} ${fmt(t.value, 0)} ${row.unit}` : `ratio ${op} ${t.value.toFixed(2)}`;
    })
    .join(' and ');
}

/** The results as a Markdown table (also readable on a terminal). */
export function renderTable(rows: Row[]): string {
  const header = ['metric', 'ours', 'base', 'ratio (ours/base)', 'target', 'result'];
  const lines = rows.map((r) => {
    const digits = r.digits ?? 1;
    const pass = passes(r);
    return [
      `${r.id} ${r.metric}`,
      `${fmt(r.ours, digits)} ${r.unit}`,
      r.raw === undefined ? '—' : `${fmt(r.raw, digits)} ${r.unit}`,
      r.raw ? `${(r.ours / r.raw).toFixed(2)}×` : '—',
      targetText(r),
      pass === undefined ? '—' : pass ? 'PASS' : 'FAIL',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [row(header), row(widths.map((w) => '-'.repeat(w))), ...lines.map(row)].join('\n');
}
