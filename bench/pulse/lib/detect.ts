import { sql, type Db } from '@opsi/db';
import {
  runDetectors,
  type SandboxLimits,
  type DetectionSummary,
  type Detector,
  type DetectorRow,
  type FindingDraft,
} from '@opsi/detectors';

export interface DetectorTiming {
  id: string;
  /** Wall time of the detector's whole turn in runDetectors: query, evidence queries, recording. */
  totalMs: number;
  /** Its own query, sandboxed (transaction, role, settings, JSON rows, parsing), wall time. */
  queryMs: number;
  /** The evidence queries of its findings, as the sandbox timed them (duration_ms of their steps). */
  evidenceMs: number;
  evidenceQueries: number;
  rows: number;
  findings: number;
}

export interface Detection {
  summary: DetectionSummary;
  wallMs: number;
  /** Sandboxed query executions: each detector's (with retries) and each finding's evidence. */
  queries: number;
  evidenceQueries: number;
  timings: DetectorTiming[];
}

/**
 * runDetectors over the given detectors, each wrapped (same id, domain, SQL and findings) to note when
 * its turn starts and when its query has answered. runDetectors reads `title` once, at the start of a
 * detector's turn (for its query step), and calls `findings(rows)` once its query has answered; a turn
 * ends when the next one starts. Nothing else in the run reads `title`; the wrapper adds two
 * performance.now() calls per detector.
 */
export async function timedDetection(db: Db, tenantId: string, detectors: Detector[]): Promise<Detection> {
  const marks = detectors.map(() => ({ start: NaN, answered: NaN, rows: 0, findings: 0 }));
  const wrapped: Detector[] = detectors.map((d, i) => ({
    ...d,
    get title() {
      if (Number.isNaN(marks[i]!.start)) marks[i]!.start = performance.now();
      return d.title;
    },
    findings(rows: DetectorRow[]): FindingDraft[] {
      marks[i]!.answered = performance.now();
      marks[i]!.rows = rows.length;
      const drafts = d.findings(rows);
      marks[i]!.findings = drafts.length;
      return drafts;
    },
  }));
  const started = performance.now();
  const summary = await runDetectors(db, tenantId, wrapped);
  const ended = performance.now();
  const wallMs = ended - started;

  // The evidence steps, per check: one per finding with resources (more if a query was retried).
  const evidence = await sql<{ check_id: string; n: number; ms: number }>`
    select f.check_id, count(*)::int as n, coalesce(sum(s.duration_ms), 0)::int as ms
    from finding_audit_steps s join findings f on f.id = s.finding_id
    where s.tenant_id = ${tenantId} and s.step_kind = 'query' and s.title like 'Evidence for %'
    group by f.check_id`.execute(db);
  const byCheck = new Map(evidence.rows.map((r) => [r.check_id, r]));
  const timings = detectors.map((d, i) => {
    const m = marks[i]!;
    const end = i + 1 < marks.length ? marks[i + 1]!.start : ended;
    const e = byCheck.get(d.id);
    return {
      id: d.id,
      totalMs: end - m.start,
      // A detector whose query failed twice never gets to findings(): its whole turn was the query.
      queryMs: (Number.isNaN(m.answered) ? end : m.answered) - m.start,
      evidenceMs: e?.ms ?? 0,
      evidenceQueries: e?.n ?? 0,
      rows: m.rows,
      findings: m.findings,
    };
  });
  const evidenceQueries = evidence.rows.reduce((a, r) => a + r.n, 0);
  return { summary, wallMs, queries: summary.queries + evidenceQueries, evidenceQueries, timings };
}

/** Runs `fn` in a transaction set up the way runSandboxed sets it up (read only, role, tenant, timeout). */
export function inSandbox<T>(db: Db, tenantId: string, fn: (tx: Db) => Promise<T>): Promise<T> {
  if (!/^[0-9a-f-]{36}$/i.test(tenantId)) throw new Error('bad tenant id');
  return db.transaction().execute(async (tx) => {
    await sql`set transaction read only`.execute(tx);
    await sql.raw(`set local statement_timeout = 120000`).execute(tx);
    await sql.raw(`set local opsi.tenant_id = '${tenantId}'`).execute(tx);
    await sql`set local role opsi_sandbox`.execute(tx);
    return fn(tx);
  });
}

/**
 * The raw side: each detector's query alone, `select * from (<query>)`, in the same sandbox (the same
 * row-level security, so the same plans), rows fetched as pg parses them; no row_to_json, no limit, no
 * evidence queries, no recording. Each query runs twice, with the server's JIT setting and with
 * `jit = off`, in alternating order from one detector to the next. Wall time per detector.
 */
export async function rawQueries(db: Db, tenantId: string, detectors: Detector[]) {
  const out: Array<{ id: string; ms: number; jitOffMs: number; rows: number }> = [];
  for (const [i, d] of detectors.entries()) {
    const timed = async (jitOff: boolean) => {
      const t0 = performance.now();
      const rows = await inSandbox(db, tenantId, async (tx) => {
        if (jitOff) await sql`set local jit = off`.execute(tx);
        return sql.raw(`select * from (${d.sql.trim()}) as q`).execute(tx);
      });
      return { ms: performance.now() - t0, rows: rows.rows.length };
    };
    let on, off;
    if (i % 2 === 0) {
      on = await timed(false);
      off = await timed(true);
    } else {
      off = await timed(true);
      on = await timed(false);
    }
    out.push({ id: d.id, ms: on.ms, jitOffMs: off.ms, rows: on.rows });
  }
  return out;
}

/** EXPLAIN (ANALYZE, BUFFERS) of a query in the sandbox, as text. */
export async function explainSandboxed(db: Db, tenantId: string, query: string): Promise<string> {
  return inSandbox(db, tenantId, async (tx) => {
    const r = await sql<{
      'QUERY PLAN': string;
    }>`explain (analyze, buffers) ${sql.raw(query.trim())}`.execute(tx);
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  });
}

/**
 * Which detector queries Postgres compiles with JIT: the planner's total cost of each, as runSandboxed
 * sends it (row_to_json wrapper, row cap), against jit_above_cost, jit_inline_above_cost and
 * jit_optimize_above_cost. EXPLAIN without ANALYZE: plans only.
 */
export async function jitDecisions(db: Db, tenantId: string, detectors: Detector[], limits: SandboxLimits) {
  const settings = await sql<{ name: string; setting: string }>`
    select name, setting from pg_settings
    where name in ('jit', 'jit_above_cost', 'jit_inline_above_cost', 'jit_optimize_above_cost')`.execute(db);
  const s = Object.fromEntries(settings.rows.map((r) => [r.name, r.setting]));
  const on = s.jit === 'on';
  const [above, inline, optimize] = [
    s.jit_above_cost,
    s.jit_inline_above_cost,
    s.jit_optimize_above_cost,
  ].map((v) => (Number(v) < 0 ? Infinity : Number(v)));
  const out: Array<{ id: string; cost: number; jit: boolean; inline: boolean; optimize: boolean }> = [];
  for (const d of detectors) {
    const plan = await inSandbox(db, tenantId, (tx) =>
      sql<{ 'QUERY PLAN': Array<{ Plan: { 'Total Cost': number } }> }>`explain (format json)
        select left(row_to_json(q)::text, ${sql.lit(limits.maxBytes)}) as j from (${sql.raw(d.sql.trim())}) q
        limit ${sql.lit(limits.maxRows + 1)}`.execute(tx),
    );
    const cost = plan.rows[0]!['QUERY PLAN'][0]!.Plan['Total Cost'];
    out.push({
      id: d.id,
      cost,
      jit: on && cost > above!,
      inline: on && cost > inline!,
      optimize: on && cost > optimize!,
    });
  }
  return { settings: s, queries: out };
}
