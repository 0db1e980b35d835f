import { runsSettled, sleep } from './lib/http';
import type { Drill } from './lib/types';

// Many more agent requests than the daily budget allows, all at once, over both APIs (/ask and
// /stream alike). Exactly N may be admitted, and exactly N runs may exist.

export const drill: Drill = {
  name: 'budget',
  description: 'budget race: many concurrent agent requests against a budget of N',
  async run(ctx) {
    const rounds = ctx.scale(3, 1);
    const n = ctx.scale(25, 5);
    const m = ctx.scale(200, 30);
    let exact = 0;
    let beyond = 0;
    let short = 0;
    let other = 0;
    let runsMismatch = 0;
    const admitted: number[] = [];
    for (let r = 0; r < rounds && !ctx.signal.aborted; r++) {
      const tenant = await ctx.newTenant({ budget: n });
      const token = tenant.tokens.read_write;
      const statuses = await Promise.all(
        Array.from({ length: m }, async (_, i) => {
          const api = ctx.stack.apis[i % ctx.stack.apis.length]!;
          const init = { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
          try {
            const res =
              i % 2
                ? await fetch(`${api.url}/api/v1/stream?prompt=race`, {
                    ...init,
                    signal: AbortSignal.timeout(60_000),
                  })
                : await fetch(`${api.url}/api/v1/ask`, {
                    ...init,
                    method: 'POST',
                    body: JSON.stringify({ prompt: 'race' }),
                    signal: AbortSignal.timeout(120_000),
                  });
            await res.text();
            return res.status;
          } catch {
            return -1;
          }
        }),
      );
      const ok = statuses.filter((s) => s === 200).length;
      admitted.push(ok);
      if (ok === n) exact++;
      if (ok > n) beyond += ok - n;
      if (ok < n) short += n - ok;
      other += statuses.filter((s) => s !== 200 && s !== 429).length;
      await runsSettled(ctx.stack, tenant.id, 60_000);
      const runs = await ctx.stack.database.db
        .selectFrom('agent_runs')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('tenant_id', '=', tenant.id)
        .executeTakeFirstOrThrow();
      if (Number(runs.n) !== n) runsMismatch++;
      await sleep(100);
    }
    const row = (measure: string, value: number | string, target: string, pass: boolean) => ({
      drill: 'budget',
      measure,
      value,
      target,
      pass,
    });
    return [
      row(
        `admitted per race (budget N=${n}, ${m} concurrent requests)`,
        admitted.join(', '),
        `exactly ${n} each`,
        exact === rounds,
      ),
      row('admitted beyond N', beyond, '0', beyond === 0),
      row('refused below N', short, '0', short === 0),
      row('answers other than 200 or 429', other, '0', other === 0),
      row('races where runs created ≠ N', runsMismatch, '0', runsMismatch === 0),
    ];
  },
};
