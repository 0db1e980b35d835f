import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import { DelayedError, type QueueHandlers } from '@opsi/jobs';
import {
  abandonFinalize,
  executeFinalizePlan,
  executeGeneratePlan,
  executeVerifyStep,
  type PlanDrafter,
} from './execute';

export interface PlanJobsDeps {
  db: Db;
  /** A hosted AGENT_ENGINE also drafts plan steps; its drafts are validated like the built-in ones. */
  drafter?: PlanDrafter | undefined;
  config: Pick<Config, 'PLAN_GENERATION_TIMEOUT_MS' | 'PLAN_VERIFY_RETRIES' | 'PLAN_VERIFY_RETRY_DELAY_MS'>;
}

/** The plans queue's handlers: generating a plan, verifying a step, finalizing a plan. */
export function planJobs(d: PlanJobsDeps): { plans: QueueHandlers<'plans'> } {
  const { db, drafter, config } = d;
  return {
    plans: {
      generate: (payload) =>
        executeGeneratePlan(
          { db, drafter, generationTimeoutMs: config.PLAN_GENERATION_TIMEOUT_MS },
          payload.tenant_id,
          payload.plan_id,
        ),
      verify: async (payload, ctx) => {
        const tries = payload.tries ?? 0;
        const result = await executeVerifyStep({ db }, payload, {
          tries,
          retries: config.PLAN_VERIFY_RETRIES,
        });
        if (result.outcome !== 'retry') return result;
        // Not reflected by the cloud yet: check again shortly; the step stays `verifying`.
        await ctx.job.updateData({ ...payload, tries: tries + 1 });
        await ctx.job.moveToDelayed(Date.now() + config.PLAN_VERIFY_RETRY_DELAY_MS, ctx.token);
        throw new DelayedError();
      },
      finalize: async (payload, ctx) => {
        try {
          return await executeFinalizePlan({ db }, payload);
        } catch (e) {
          // The last attempt gives the plan back (ready, with the reason): finalize can be asked again.
          if (ctx.job.attemptsMade + 1 >= (ctx.job.opts.attempts ?? 1))
            await abandonFinalize(db, payload.tenant_id, payload.plan_id, (e as Error).message);
          throw e;
        }
      },
    },
  };
}
