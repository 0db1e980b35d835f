import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlanDrafter } from '@opsi/agent';
import { openaiText, startScriptedModelServer, type ScriptedModelServer } from '@opsi/agent/testing';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { connectEnvironment, requestScan, runScan } from '../inventory';
import { executeGeneratePlan, type PlanDrafter } from './execute';
import { getPlan } from './plans';

/** The hosted-model path: the model's draft is shown only if it obeys the same rules as the built-in steps. */
let t: TestContext;
let a: TestMember;
let server: ScriptedModelServer;
let mode: 'good' | 'invented_id' | 'unsupported' | 'too_few' | 'prose' = 'good';
let lastRequest: Record<string, unknown> = {};

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await runScan(t.db, (await requestScan(t.db, null, a.tenant.id, 'test')).id);
  server = await startScriptedModelServer((req) => {
    lastRequest = req.body;
    if (mode === 'prose') return openaiText('Here are better steps: first, look at the volume.');
    const messages = req.body.messages as Array<{ role: string; content: string }>;
    const input = JSON.parse(messages.find((m) => m.role === 'user')!.content) as {
      steps: Array<{ title: string; instructions: string; fix_command: string | null }>;
    };
    const steps = input.steps.map((s) => ({
      title: `Model: ${s.title}`,
      instructions: `${s.instructions} (reviewed)`,
      fix_command:
        mode === 'invented_id' && s.fix_command
          ? s.fix_command.replace(/vol-[0-9a-f]+/, 'vol-0123456789abcdef0')
          : mode === 'unsupported' && s.fix_command
            ? 'aws ec2 create-snapshot --volume-id vol-0123456789abcdef0'
            : s.fix_command,
    }));
    return openaiText(JSON.stringify({ steps: mode === 'too_few' ? steps.slice(1) : steps }));
  });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await t?.close();
});

async function generate(drafter: PlanDrafter, generationTimeoutMs = 30_000) {
  const finding = await t.db
    .selectFrom('findings')
    .select(['id', 'group_id'])
    .where('tenant_id', '=', a.tenant.id)
    .where('check_id', '=', 'finops.ebs_unattached')
    .where('status', '=', 'open')
    .executeTakeFirstOrThrow();
  await t.db.deleteFrom('resolution_plans').where('group_id', '=', finding.group_id).execute();
  const plan = await t.db
    .insertInto('resolution_plans')
    .values({
      tenant_id: a.tenant.id,
      group_id: finding.group_id,
      finding_id: finding.id,
      created_by: 'test',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await executeGeneratePlan({ db: t.db, drafter, generationTimeoutMs }, a.tenant.id, plan.id);
  return getPlan(t.db, a.tenant.id, plan.id);
}

describe('plans drafted by a hosted model', () => {
  const drafter = () =>
    createPlanDrafter({
      engine: 'openai',
      model: 'test-model',
      baseUrl: `${server.url}/v1`,
      maxRetries: 0,
    }) as PlanDrafter;

  it('a draft that keeps to the rules is shown, labelled with the engine', async () => {
    mode = 'good';
    const plan = await generate(drafter());
    expect(plan.status, plan.error ?? '').toBe('ready');
    expect(plan.engine).toBe('openai:test-model');
    expect(plan.steps[0]!.title).toMatch(/^Model: /);
    expect(plan.steps.at(-1)!.final).toBe(true);
    expect(plan.steps.some((s) => s.fix_command?.command.startsWith('aws ec2 delete-volume'))).toBe(true);
    // structured output: the request asks for JSON (the SDK's response_format), not for prose to mine
    expect(lastRequest.response_format, JSON.stringify(lastRequest).slice(0, 400)).toBeTruthy();
  });

  it('an answer that is not the asked shape fails the plan with that reason', async () => {
    mode = 'prose';
    const plan = await generate(drafter());
    expect(plan.status).toBe('failed');
    expect(plan.error).toMatch(/did not answer the plan in the asked shape/);
    expect(plan.steps).toEqual([]);
  });

  it('a draft naming a resource outside the finding, an unsupported command, or the wrong steps is refused', async () => {
    for (const [m, why] of [
      ['invented_id', /vol-0123456789abcdef0, which is not a resource of this finding/],
      ['unsupported', /create-snapshot" is not a fix command/],
      ['too_few', /answered \d+ steps for \d+/],
    ] as const) {
      mode = m;
      const plan = await generate(drafter());
      expect(plan.status, m).toBe('failed');
      expect(plan.error, m).toMatch(why);
      expect(plan.steps).toEqual([]);
    }
  });

  it('generation that passes its time limit is failed with the reason (and can be retried)', async () => {
    const hanging: PlanDrafter = {
      name: 'hanging',
      draft: (_input, _steps, signal) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    };
    const plan = await generate(hanging, 300);
    expect(plan.status).toBe('failed');
    expect(plan.error).toMatch(/took longer than/);
  });
});
