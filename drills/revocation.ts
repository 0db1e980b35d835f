import type { Drill, DrillContext } from './lib/types';
import { sleep } from './lib/http';

// A token is revoked while clients hammer both APIs with it. "Revocation is immediate": no request
// sent after the revoking response arrived may be admitted, on either API process.

async function round(ctx: DrillContext, index: number) {
  const tenant = await ctx.newTenant();
  const token = tenant.tokens.read_write;
  const apis = ctx.stack.apis;
  const calls: Array<{ sentAt: number; status: number }> = [];
  let stop = false;
  const paths = ['/api/v1/me', '/api/v1/sessions', '/api/v1/learnings', '/api/v1/incidents'];
  const client = async (c: number) => {
    for (let i = 0; !stop && !ctx.signal.aborted; i++) {
      const api = apis[(c + i) % apis.length]!;
      const sentAt = performance.now();
      let status = -1;
      try {
        const res = await fetch(`${api.url}${paths[i % paths.length]}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(30_000),
        });
        status = res.status;
        await res.arrayBuffer();
      } catch {
        // counted as -1
      }
      calls.push({ sentAt, status });
    }
  };
  const running = Promise.all(Array.from({ length: ctx.scale(8, 4) }, (_, c) => client(c)));
  await sleep(ctx.scale(1000, 400));
  // Revoked by the owner's other token, through one API or the other.
  const res = await fetch(`${apis[index % apis.length]!.url}/api/v1/tokens/${tenant.tokenIds.read_write}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${tenant.tokens.read_write}` },
  });
  const revokedAt = performance.now();
  await res.arrayBuffer();
  await sleep(ctx.scale(1000, 400));
  stop = true;
  await running;
  const after = calls.filter((c) => c.sentAt > revokedAt);
  return {
    revokeStatus: res.status,
    before: calls.filter((c) => c.sentAt <= revokedAt && c.status === 200).length,
    after: after.length,
    admittedAfter: after.filter((c) => c.status !== 401).length,
    other: calls.filter((c) => c.sentAt <= revokedAt && c.status !== 200 && c.status !== 401).length,
  };
}

export const drill: Drill = {
  name: 'revocation',
  description: 'tokens revoked under load on both APIs: requests admitted after the revoking response',
  async run(ctx) {
    const rounds = ctx.scale(20, 3);
    const results = [];
    for (let i = 0; i < rounds && !ctx.signal.aborted; i++) results.push(await round(ctx, i));
    const admitted = results.reduce((a, r) => a + r.admittedAfter, 0);
    const after = results.reduce((a, r) => a + r.after, 0);
    const before = results.reduce((a, r) => a + r.before, 0);
    const badRevokes = results.filter((r) => r.revokeStatus !== 204).length;
    const row = (measure: string, value: number | string, target: string, pass: boolean) => ({
      drill: 'revocation',
      measure,
      value,
      target,
      pass,
    });
    return [
      row(
        'revocations under load (answered 204)',
        `${results.length - badRevokes}/${rounds}`,
        `${rounds}/${rounds}`,
        badRevokes === 0 && results.length === rounds,
      ),
      row('requests sent after the revoking response', after, 'info', after > 0),
      row('of them not refused with 401', admitted, '0', admitted === 0),
      row('requests admitted before it (200)', before, 'info', before > 0),
    ];
  },
};
