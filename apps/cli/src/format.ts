import type { Colors } from './context';

// eslint-disable-next-line no-control-regex -- the escape sequences of colours
const ANSI = /\x1b\[[0-9;]*m/g;

export const visibleLength = (s: string) => s.replace(ANSI, '').length;

function truncate(s: string, width: number): string {
  if (visibleLength(s) <= width) return s;
  return `${s.replace(ANSI, '').slice(0, Math.max(0, width - 1))}…`;
}

/**
 * A plain aligned table: a header row, then rows. The last column is cut to the terminal's width when
 * there is one.
 */
export function table(c: Colors, headers: string[], rows: string[][], maxWidth?: number): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visibleLength(r[i] ?? ''))));
  const last = widths.length - 1;
  if (maxWidth) {
    const before = widths.slice(0, last).reduce((a, w) => a + w + 2, 0);
    widths[last] = Math.max(10, Math.min(widths[last]!, maxWidth - before));
  }
  const pad = (s: string, i: number) => {
    const cell = i === last ? truncate(s, widths[i]!) : s;
    return i === last ? cell : cell + ' '.repeat(widths[i]! - visibleLength(cell));
  };
  const lines = [c.bold(headers.map((h, i) => pad(h, i)).join('  '))];
  for (const row of rows) lines.push(row.map((cell, i) => pad(cell, i)).join('  '));
  return lines.join('\n');
}

const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low', 'info'];

export function severity(c: Colors, value: string): string {
  const v = value.toLowerCase();
  if (v === 'critical' || v === 'sev1') return c.red(c.bold(value));
  if (v === 'high' || v === 'sev2') return c.red(value);
  if (v === 'medium' || v === 'sev3') return c.yellow(value);
  if (v === 'low' || v === 'sev4') return c.blue(value);
  return c.dim(value);
}

export function status(c: Colors, value: string): string {
  if (['resolved', 'verified', 'confirmed', 'completed', 'active', 'ready'].includes(value))
    return c.green(value);
  if (['failed', 'failed_check', 'revoked', 'expired', 'still_present'].includes(value)) return c.red(value);
  if (['skipped', 'dismissed'].includes(value)) return c.dim(value);
  return c.yellow(value);
}

export const severityRank = (s: string) => SEVERITY_ORDER.indexOf(s.toLowerCase());

export function money(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return `$${value.toLocaleString('en-US', { maximumFractionDigits: 2, minimumFractionDigits: value % 1 ? 2 : 0 })}`;
}

export function when(value: string | null | undefined): string {
  if (!value) return '—';
  return value.replace('T', ' ').slice(0, 16) + ' UTC';
}

export function preview(value: unknown, max = 120): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const one = (text ?? '').replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
