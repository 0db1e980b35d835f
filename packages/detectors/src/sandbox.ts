import { createHash } from 'node:crypto';
import { sql, type Db } from '@opsi/db';

export interface SandboxLimits {
  /** Statement timeout. */
  timeoutMs: number;
  /** Rows returned at most. */
  maxRows: number;
  /** Bytes of JSON returned at most (rows beyond are cut, and `truncated` is set). */
  maxBytes: number;
  /** work_mem of the re-run (per sort or hash), in kB. */
  workMemKb?: number;
  /** temp_file_limit of the re-run, in kB (set where the service's role may: see setTempFileLimit). */
  tempFileLimitKb?: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  timeoutMs: 5000,
  maxRows: 500,
  maxBytes: 256 * 1024,
  workMemKb: 8 * 1024,
  tempFileLimitKb: 64 * 1024,
};

/**
 * Whether this connection's role may set temp_file_limit (superuser-only, unless granted SET on it:
 * PostgreSQL 15+, which the 20261128T1000 migration grants when a superuser runs it). Asked once per
 * database handle.
 */
const tempFileLimitSettable = new WeakMap<object, Promise<boolean>>();
function canSetTempFileLimit(db: Db): Promise<boolean> {
  let known = tempFileLimitSettable.get(db);
  if (!known) {
    known = sql<{ ok: boolean }>`select current_setting('is_superuser') = 'on'
        or (current_setting('server_version_num')::int >= 150000
            and has_parameter_privilege('temp_file_limit', 'SET')) as ok`
      .execute(db)
      .then((r) => r.rows[0]?.ok === true)
      .catch(() => false);
    tempFileLimitSettable.set(db, known);
  }
  return known;
}

export interface SandboxResult {
  rows: Array<Record<string, unknown>>;
  rowCount: number;
  truncated: boolean;
  durationMs: number;
  /** A digest of the full rows, to tell whether a re-run differs from the recorded result. */
  resultHash: string;
}

export class SandboxRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxRefused';
  }
}

/** The one statement a sandboxed query may be: a SELECT (or WITH … SELECT), nothing after it. */
export function checkSandboxSql(text: string): string {
  const body = text.trim().replace(/;\s*$/, '');
  if (!/^(select|with)\b/i.test(body))
    throw new SandboxRefused('Only a single SELECT (or WITH … SELECT) statement can run here.');
  if (/;/.test(body.replace(/'(?:[^']|'')*'/g, "''")))
    throw new SandboxRefused('Only one statement can run here.');
  return body;
}

/** A stable digest of rows (order-sensitive), to compare a re-run with what was recorded. */
export function hashRows(rows: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(rows)).digest('hex');
}

/**
 * Runs untrusted read-only SQL for one tenant: as the opsi_sandbox role (SELECT on the inventory only),
 * in a read-only transaction, with a statement timeout, under row-level security on the tenant, with the
 * result capped in rows and bytes. The statement goes over the extended protocol (it carries a
 * parameter), which refuses a second statement; set_config(), the only way to change the tenant from
 * inside a query, is not callable by the role, nor are the advisory-lock functions (a lock taken there
 * could outlive the re-run on a pooled connection). work_mem and temp_file_limit are set per re-run.
 */
export async function runSandboxed(
  db: Db,
  tenantId: string,
  query: string,
  limits: SandboxLimits = DEFAULT_LIMITS,
): Promise<SandboxResult> {
  const body = checkSandboxSql(query);
  if (!/^[0-9a-f-]{36}$/i.test(tenantId)) throw new SandboxRefused('bad tenant id');
  const workMemKb = Math.floor(limits.workMemKb ?? DEFAULT_LIMITS.workMemKb!);
  const tempFileLimitKb = Math.floor(limits.tempFileLimitKb ?? DEFAULT_LIMITS.tempFileLimitKb!);
  const setTempFileLimit = await canSetTempFileLimit(db);
  return db.transaction().execute(async (tx) => {
    await sql`set transaction read only`.execute(tx);
    await sql.raw(`set local statement_timeout = ${Math.floor(limits.timeoutMs)}`).execute(tx);
    // Memory and disk of one re-run, for this transaction only (SET LOCAL, before the role switch).
    await sql.raw(`set local work_mem = ${workMemKb}`).execute(tx);
    if (setTempFileLimit) await sql.raw(`set local temp_file_limit = ${tempFileLimitKb}`).execute(tx);
    // The detectors' joins over the inventory have planner costs far above jit_above_cost, and compiling
    // them took longer than running them: over the large demo, runDetectors took 23-27 s with JIT and
    // 9-10 s without, with the same findings (bench/pulse). These queries are short; JIT never pays.
    await sql`set local jit = off`.execute(tx);
    await sql.raw(`set local opsi.tenant_id = '${tenantId}'`).execute(tx);
    await sql`set local role opsi_sandbox`.execute(tx);
    const started = performance.now();
    // Each row comes back as JSON text cut at the byte cap, so one huge value cannot flood the service.
    const result = await sql<{
      j: string;
    }>`select left(row_to_json(q)::text, ${limits.maxBytes}) as j from (${sql.raw(body)}) q limit ${limits.maxRows + 1}`.execute(
      tx,
    );
    const durationMs = Math.round(performance.now() - started);
    const rows: Array<Record<string, unknown>> = [];
    let bytes = 0;
    let truncated = result.rows.length > limits.maxRows;
    const all: unknown[] = [];
    for (const { j } of result.rows.slice(0, limits.maxRows)) {
      let row: Record<string, unknown>;
      try {
        row = JSON.parse(j) as Record<string, unknown>;
      } catch {
        row = { _truncated_row: j };
        truncated = true;
      }
      all.push(row);
      bytes += j.length;
      if (bytes > limits.maxBytes) {
        truncated = true;
        continue;
      }
      rows.push(row);
    }
    return {
      rows,
      rowCount: result.rows.length > limits.maxRows ? limits.maxRows : result.rows.length,
      truncated,
      durationMs,
      resultHash: hashRows(all),
    };
  });
}
