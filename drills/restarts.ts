import { followRun, script, type FollowedRun } from '../test/support/stack';
import { alive, runsSettled, sleep } from './lib/http';
import type { Drill, DrillContext, DrillRow, DrillTenant } from './lib/types';

// Redis is killed and started again without persistence (it comes back empty) and with an append-only
// file (it comes back with what it acknowledged), then Postgres is stopped and started, each while
// clients call both APIs and runs stream. Expected: no process exits; every answer is 2xx or 503
// {detail} (never another 5xx, never a hang); every run ends with exactly one terminal event.

/** Clients calling both APIs until told to stop; every status recorded. */
function load(ctx: DrillContext, tenant: DrillTenant, clients: number) {
  const statuses: number[] = [];
  const bad: string[] = [];
  let stop = false;
  const calls: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/me'],
    ['GET', '/api/v1/sessions'],
    ['POST', '/api/v1/sessions', { name: 'drill' }],
    ['GET', '/api/v1/learnings'],
    ['GET', '/api/v1/incidents'],
    ['POST', '/api/v1/ask', { prompt: 'hello' }],
  ];
  const client = async (offset: number) => {
    for (let i = offset; !stop && !ctx.signal.aborted; i++) {
      const [method, path, body] = calls[i % calls.length]!;
      const api = ctx.stack.apis[i % ctx.stack.apis.length]!;
      try {
        const res = await fetch(`${api.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${tenant.tokens.read_write}`,
            'content-type': 'application/json',
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
          // A bound: a request that hangs through the outage counts as a failure.
          signal: AbortSignal.timeout(30_000),
        });
        statuses.push(res.status);
        const text = await res.text();
        if (res.status >= 500 && res.status !== 503)
          bad.push(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
        if (res.status === 503 && !text.includes('"detail"'))
          bad.push(`${method} ${path}: 503 without {detail}`);
      } catch (e) {
        statuses.push(-1);
        bad.push(`${method} ${path}: ${String(e)}`);
      }
      await sleep(40);
    }
  };
  const running = Promise.all(Array.from({ length: clients }, (_, i) => client(i)));
  return {
    statuses,
    bad,
    async stop() {
      stop = true;
      await running;
    },
  };
}

async function phase(
  ctx: DrillContext,
  name: string,
  outageMs: number,
  down: () => Promise<void>,
  up: () => Promise<void>,
): Promise<DrillRow[]> {
  const tenant = await ctx.newTenant();
  const processes = [...ctx.stack.processes];
  const runCount = ctx.scale(8, 3);
  const started: Array<Promise<void>> = [];
  const runs: Array<Promise<FollowedRun>> = [];
  for (let i = 0; i < runCount; i++) {
    let first!: () => void;
    started.push(new Promise<void>((r) => (first = r)));
    const steps = [{ deltas: 3 }, { sleep: 500 }, { tool: 'list_findings' }, { sleep: 2500 }, { deltas: 3 }];
    runs.push(
      followRun(ctx.stack.apis[i % 2]!.url, tenant.tokens.read_write, script(steps), {
        onFirstEvent: () => first(),
        boundMs: 150_000,
      }),
    );
  }
  await Promise.race([Promise.all(started), sleep(60_000)]);
  const during = load(ctx, tenant, ctx.scale(6, 3));
  await sleep(500);
  await down();
  await sleep(outageMs);
  await up();
  const upAt = Date.now();
  // Recovered: both APIs ready, and a new run over each completes.
  let recoveredMs = NaN;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
    const ready = await Promise.all(
      ctx.stack.apis.map((a) =>
        fetch(`${a.url}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
          (r) => r.ok,
          () => false,
        ),
      ),
    );
    if (ready.every(Boolean)) {
      const fresh = await Promise.all(
        ctx.stack.apis.map((a) =>
          followRun(a.url, tenant.tokens.read_write, script([{ delta: 'ok' }]), { boundMs: 30_000 }),
        ),
      );
      if (fresh.every((f) => f.kinds.at(-1) === 'run.completed')) {
        recoveredMs = Date.now() - upAt;
        break;
      }
    }
    await sleep(200);
  }
  await sleep(1000);
  await during.stop();
  const followed = await Promise.all(runs);
  const settled = await runsSettled(ctx.stack, tenant.id, 60_000);
  const open = await ctx.stack.database.db
    .selectFrom('agent_runs')
    .select('id')
    .where('tenant_id', '=', tenant.id)
    .where('status', 'in', ['queued', 'running'])
    .execute();
  const withoutTerminal = followed.filter((r) => r.terminals !== 1).length + (settled ? 0 : open.length);
  const exits = processes.filter((p) => !alive(p)).length;
  const count503 = during.statuses.filter((s) => s === 503).length;
  for (const b of during.bad.slice(0, 5)) ctx.log(`${name}: ${b}`);
  const row = (measure: string, value: number | string, target: string, pass: boolean): DrillRow => ({
    drill: 'restarts',
    measure: `${name}: ${measure}`,
    value,
    target,
    pass,
  });
  return [
    row('process exits', exits, '0', exits === 0),
    row('5xx other than 503 (or no answer)', during.bad.length, '0', during.bad.length === 0),
    row('requests (of them 503)', `${during.statuses.length} (${count503})`, 'info', true),
    row(
      'time to recover (ms)',
      Number.isNaN(recoveredMs) ? 'not recovered' : recoveredMs,
      'recovers',
      !Number.isNaN(recoveredMs),
    ),
    row(
      'runs left without a terminal event',
      `${withoutTerminal}/${runCount}`,
      `0/${runCount}`,
      withoutTerminal === 0,
    ),
  ];
}

export const drill: Drill = {
  name: 'restarts',
  description: 'Redis restart (without and with AOF) and Postgres restart, under load on both APIs',
  timeoutMs: 420_000,
  async run(ctx) {
    const { redis, pg } = ctx.stack;
    const outage = ctx.scale(8000, 3000);
    const rows: DrillRow[] = [];
    rows.push(
      ...(await phase(
        ctx,
        'Redis restart, no AOF',
        outage,
        () => redis.kill(),
        () => redis.start(),
      )),
    );
    await redis.setAof(true);
    try {
      rows.push(
        ...(await phase(
          ctx,
          'Redis restart, AOF',
          outage,
          () => redis.kill(),
          () => redis.start(),
        )),
      );
    } finally {
      await redis.setAof(false);
    }
    rows.push(
      ...(await phase(
        ctx,
        'Postgres restart',
        ctx.scale(5000, 3000),
        () => pg.stop(),
        () => pg.start(),
      )),
    );
    return rows;
  },
};
