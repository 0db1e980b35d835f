import { followRun, script, type FollowedRun } from '../test/support/stack';
import { killAndReplaceWorkers, percentile } from './lib/http';
import type { Drill, DrillRow } from './lib/types';

// Runs stream while every worker is SIGKILLed mid-turn (no shutdown, no chance to write anything);
// new workers start in their place. BullMQ sees the jobs' locks lapse and hands them to the new
// workers, which resume the runs (run.resumed). Each client follows its run as EventSource does.
// Correct: exactly one terminal event, and it is the last; seqs 1..n with no gap and no repeat.

const STEPS = [{ deltas: 5, text: 'a' }, { sleep: 3000 }, { deltas: 5, text: 'b' }];

export const drill: Drill = {
  name: 'sigkill',
  description: 'every worker SIGKILLed mid-run, in rounds; the runs resume on new workers',
  timeoutMs: 420_000,
  async run(ctx) {
    const total = ctx.scale(100, 3);
    // 16 at a time: both workers' agent slots (WORKER_CONCURRENCY_AGENT 8 each) are busy when killed.
    const perRound = ctx.scale(16, 3);
    const tenant = await ctx.newTenant();
    const results: Array<{ run: FollowedRun; ms: number }> = [];
    for (let done = 0; done < total && !ctx.signal.aborted; done += perRound) {
      const n = Math.min(perRound, total - done);
      const started: Array<Promise<void>> = [];
      let killedAt = 0;
      const runs = Array.from({ length: n }, (_, i) => {
        let first!: () => void;
        started.push(new Promise<void>((r) => (first = r)));
        const api = ctx.stack.apis[(done + i) % ctx.stack.apis.length]!;
        return followRun(api.url, tenant.tokens.read_write, script(STEPS), {
          onFirstEvent: () => first(),
          boundMs: 120_000,
        }).then((run) => ({ run, ms: Date.now() - killedAt }));
      });
      await Promise.race([Promise.all(started), new Promise((r) => setTimeout(r, 60_000))]);
      killedAt = await killAndReplaceWorkers(ctx.stack);
      results.push(...(await Promise.all(runs)));
      ctx.log(`${results.length}/${total} runs through a kill`);
    }
    const correct = results.filter(({ run }) => {
      const terminalLast = ['run.completed', 'run.failed'].includes(run.kinds.at(-1) ?? '');
      const dense = run.seqs.every((s, i) => s === i + 1);
      return run.terminals === 1 && terminalLast && dense;
    });
    const gaps = results.filter(({ run }) =>
      run.seqs.some((s, i) => i > 0 && s > run.seqs[i - 1]! + 1),
    ).length;
    const dups = results.filter(({ run }) => new Set(run.seqs).size !== run.seqs.length).length;
    const resumed = results.filter(({ run }) => run.kinds.includes('run.resumed')).length;
    const completed = results.filter(({ run }) => run.kinds.at(-1) === 'run.completed').length;
    const ms = results.map((r) => r.ms);
    const row = (measure: string, value: number | string, target: string, pass: boolean): DrillRow => ({
      drill: 'sigkill',
      measure,
      value,
      target,
      pass,
    });
    return [
      row(
        'runs correct (one terminal, no gap, no duplicate seq)',
        `${correct.length}/${total}`,
        `${total}/${total}`,
        correct.length === total && results.length === total,
      ),
      row('runs with a gap in seq', gaps, '0', gaps === 0),
      row('runs with a duplicate seq', dups, '0', dups === 0),
      row('runs resumed by a new worker (run.resumed)', `${resumed}/${total}`, 'info', true),
      row('runs completed (not failed)', `${completed}/${total}`, 'info', true),
      row('kill to terminal event p50 (ms)', Math.round(percentile(ms, 50)), 'info', true),
      row('kill to terminal event max (ms)', Math.round(Math.max(...ms)), 'info', true),
    ];
  },
};
