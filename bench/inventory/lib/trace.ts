import { readFileSync } from 'node:fs';
import {
  PostgresQueryCompiler,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/** CPU time a process has spent on a CPU, in ms (Linux /proc/<pid>/schedstat, nanosecond resolution). */
export function processCpuMs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

const clientCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** What a statement of syncInventory does, from its SQL. */
export function phaseOf(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim().toLowerCase().replaceAll('"', '');
  if (s.startsWith('select 1 from cloud_connections')) return 'lock connection';
  if (s.startsWith('insert into inventory_snapshots')) return 'snapshot row';
  if (s.startsWith('update inventory_snapshots')) return 'snapshot counts';
  if (s.startsWith('select') && s.includes('from resources') && s.includes(' arn in '))
    return 'read previous content';
  if (s.startsWith('select') && s.includes('from resources')) return 'read existing hashes';
  if (s.startsWith('select') && s.includes('from metrics_daily')) return 'facts stored yet?';
  if (s.startsWith('insert into resources')) return 'resources upsert';
  if (s.startsWith('update resources set last_seen')) return 'resources last_seen';
  if (s.startsWith('update resources set deleted_at')) return 'resources deleted';
  if (s.startsWith('insert into resource_history')) return 'history insert';
  if (s.startsWith('insert into resource_edges')) return 'edges upsert';
  if (s.startsWith('delete from resource_edges')) return 'edges delete stale';
  if (s.startsWith('insert into metrics_daily')) return 'metrics insert';
  if (s.startsWith('insert into cost_daily')) return 'costs insert';
  if (s.startsWith('insert into inventory_events')) return 'events insert';
  return s.slice(0, 40);
}

export interface Statement {
  phase: string;
  /** ms since the trace began: when the statement was handed to Kysely, and when its result came back. */
  start: number;
  end: number;
  /** Wall time since the previous statement ended (or the trace began): JavaScript preparing this one. */
  gap: number;
  /** This process's CPU during the statement (Kysely compile, pg parameter serialization, result parsing). */
  clientCpu: number;
  /** The Postgres backend's CPU during the statement. */
  serverCpu: number;
  rows: number;
}

export interface PhaseSummary {
  phase: string;
  statements: number;
  rows: number;
  /** JS before the phase's first statement, and between its later statements. */
  gapFirst: number;
  gapRest: number;
  statementMs: number;
  clientCpu: number;
  serverCpu: number;
  wall: number;
}

/**
 * A Kysely plugin that times every statement of the transaction it sees: wall time, the gap before it
 * (JavaScript work: hashing, diffing, building column arrays), this process's CPU and the Postgres
 * backend's CPU during it. It compiles each statement once more to read its SQL (microseconds).
 */
export class QueryTrace implements KyselyPlugin {
  private readonly compiler = new PostgresQueryCompiler();
  private readonly pending = new Map<unknown, { phase: string; start: number; cpu: number; pg: number }>();
  statements: Statement[] = [];
  private origin = 0;
  private lastEnd = 0;
  private backendPid: number | undefined;
  private active = false;
  private lastPhase: string | undefined;
  /** Called before the first statement of each phase (a diagnostic hook: it runs inside the timing). */
  onPhase: ((phase: string) => void) | undefined;

  /** Begins a trace; `backendPid` is the Postgres backend the traced transaction runs on. */
  begin(backendPid: number | undefined): void {
    this.statements = [];
    this.backendPid = backendPid;
    this.origin = performance.now();
    this.lastEnd = 0;
    this.lastPhase = undefined;
    this.active = true;
  }

  /** Ends the trace; answers the time from the last statement's end to now (commit and return). */
  finish(): number {
    this.active = false;
    return performance.now() - this.origin - this.lastEnd;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.active) {
      const phase = phaseOf(this.compiler.compileQuery(args.node, args.queryId).sql);
      if (phase !== this.lastPhase) {
        this.lastPhase = phase;
        this.onPhase?.(phase);
      }
      this.pending.set(args.queryId, {
        phase,
        start: performance.now() - this.origin,
        cpu: clientCpuMs(),
        pg: this.backendPid ? processCpuMs(this.backendPid) : NaN,
      });
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const p = this.pending.get(args.queryId);
    if (p) {
      this.pending.delete(args.queryId);
      const end = performance.now() - this.origin;
      this.statements.push({
        phase: p.phase,
        start: p.start,
        end,
        gap: p.start - this.lastEnd,
        clientCpu: clientCpuMs() - p.cpu,
        serverCpu: this.backendPid ? processCpuMs(this.backendPid) - p.pg : NaN,
        rows: Number(args.result.numAffectedRows ?? args.result.rows.length),
      });
      this.lastEnd = end;
    }
    return args.result;
  }

  /** Statements grouped by phase, in the order the phases first ran. */
  summary(): PhaseSummary[] {
    const byPhase = new Map<string, PhaseSummary>();
    for (const s of this.statements) {
      let p = byPhase.get(s.phase);
      if (!p) {
        p = {
          phase: s.phase,
          statements: 0,
          rows: 0,
          gapFirst: s.gap,
          gapRest: 0,
          statementMs: 0,
          clientCpu: 0,
          serverCpu: 0,
          wall: 0,
        };
        byPhase.set(s.phase, p);
      } else p.gapRest += s.gap;
      p.statements++;
      p.rows += s.rows;
      p.statementMs += s.end - s.start;
      p.clientCpu += s.clientCpu;
      p.serverCpu += s.serverCpu;
      p.wall += s.gap + (s.end - s.start);
    }
    return [...byPhase.values()];
  }
}
