import { createInterface } from 'node:readline/promises';
import type { OpsiClient, PlanStep, ResolutionPlan } from '@opsi/sdk';
import { spinner, type Context } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { status } from '../format';

export interface PlanOptions {
  verify?: string;
  confirm?: string;
  skip?: string;
  reason?: string;
  finalize?: boolean;
  regenerate?: boolean;
  interactive?: boolean;
  /** Bound of each wait for background work, in seconds. */
  timeout?: string;
}

const DONE = new Set(['verified', 'confirmed', 'skipped']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls the plan until `ready(plan)` holds, with a spinner; bounded. */
async function waitFor(
  ctx: Context,
  client: OpsiClient,
  planId: string,
  label: string,
  ready: (plan: ResolutionPlan) => boolean,
  timeoutMs: number,
): Promise<ResolutionPlan> {
  const spin = spinner(ctx, label);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const plan = await client.getPlan(planId);
      if (ready(plan)) return plan;
      if (Date.now() > deadline) throw new CliError(`gave up waiting: ${label}`, EXIT.error);
      await sleep(500);
    }
  } finally {
    spin.stop();
  }
}

function printStep(ctx: Context, step: PlanStep) {
  const c = ctx.c;
  ctx.out(
    `${c.bold(`${step.seq}. ${step.title}`)} ${status(c, step.status)}${step.final ? c.dim(' (final check)') : ''}`,
  );
  ctx.out(`   ${step.instructions.replace(/\n/g, '\n   ')}`);
  for (const cite of step.citations) ctx.out(c.dim(`   [${cite.kind}] ${cite.ref}`));
  if (step.fix_command)
    ctx.out(`   ${c.yellow('fix (you run it; the service never does):')} ${step.fix_command.command}`);
  if (step.verification)
    ctx.out(
      `   ${c.cyan('verify:')} ${step.verification.command}  ${c.dim(`done when ${step.verification.done_when}`)}`,
    );
  if (step.how_to_confirm) ctx.out(`   ${c.cyan('how to confirm:')} ${step.how_to_confirm}`);
  if (step.last_check)
    ctx.out(
      c.dim(
        `   last check ${step.last_check.outcome} at ${step.last_check.at}: ${step.last_check.output_preview}`,
      ),
    );
}

function printPlan(ctx: Context, plan: ResolutionPlan) {
  const c = ctx.c;
  ctx.out(
    `${c.bold('Resolution plan')} ${plan.id} · ${status(c, plan.status)}${plan.stale ? c.yellow(' · stale: the evidence changed, regenerate it') : ''}`,
  );
  if (plan.error) ctx.out(c.red(plan.error));
  ctx.out();
  for (const step of plan.steps) {
    printStep(ctx, step);
    ctx.out();
  }
  if (plan.final_check)
    ctx.out(`${c.bold('Final check:')} ${status(c, plan.final_check.outcome)} ${plan.final_check.summary}`);
}

function stepOf(plan: ResolutionPlan, seqText: string): PlanStep {
  const step = plan.steps.find((s) => s.seq === Number(seqText));
  if (!step) throw new CliError(`plan ${plan.id} has no step ${seqText}`, EXIT.usage);
  return step;
}

async function verify(
  ctx: Context,
  client: OpsiClient,
  plan: ResolutionPlan,
  seq: number,
  timeoutMs: number,
) {
  await client.verifyStep(plan.id, seq);
  return waitFor(
    ctx,
    client,
    plan.id,
    `verifying step ${seq}…`,
    (p) => !['verifying'].includes(p.steps.find((s) => s.seq === seq)?.status ?? ''),
    timeoutMs,
  );
}

async function finalize(ctx: Context, client: OpsiClient, plan: ResolutionPlan, timeoutMs: number) {
  await client.finalizePlan(plan.id);
  return waitFor(
    ctx,
    client,
    plan.id,
    'running the final check…',
    (p) => p.status !== 'finalizing' && p.final_check !== null,
    timeoutMs,
  );
}

/**
 * The resolution wizard: gets or creates the plan of the finding's cluster, waits while it is drafted,
 * then shows it, or runs one action (--verify, --confirm, --skip, --finalize), or walks the steps one by
 * one on a terminal (--interactive).
 */
export async function plan(ctx: Context, findingId: string, opts: PlanOptions) {
  const client = await ctx.client();
  const timeoutMs = Number(opts.timeout ?? 180) * 1000;
  let current = await client.resolutionPlan(findingId);
  if (opts.regenerate) {
    await client.regeneratePlan(current.id);
    current = await client.getPlan(current.id);
  }
  if (current.status === 'generating')
    current = await waitFor(
      ctx,
      client,
      current.id,
      'drafting the plan…',
      (p) => p.status !== 'generating',
      timeoutMs,
    );
  if (current.status === 'failed') {
    if (ctx.json) ctx.printJson(current);
    else printPlan(ctx, current);
    throw new CliError(
      `plan generation failed: ${current.error ?? 'no detail'} (retry with --regenerate)`,
      EXIT.error,
    );
  }
  let action: string | undefined;
  if (opts.verify) {
    current = await verify(ctx, client, current, stepOf(current, opts.verify).seq, timeoutMs);
    action = `verify ${opts.verify}`;
  } else if (opts.confirm) {
    await client.confirmStep(current.id, stepOf(current, opts.confirm).seq);
    current = await client.getPlan(current.id);
    action = `confirm ${opts.confirm}`;
  } else if (opts.skip) {
    if (!opts.reason) throw new CliError('--skip needs --reason "<why>"', EXIT.usage);
    await client.skipStep(current.id, stepOf(current, opts.skip).seq, opts.reason);
    current = await client.getPlan(current.id);
    action = `skip ${opts.skip}`;
  } else if (opts.finalize) {
    current = await finalize(ctx, client, current, timeoutMs);
    action = 'finalize';
  } else if (opts.interactive) {
    if (ctx.json || !process.stdin.isTTY) throw new CliError('--interactive needs a terminal', EXIT.usage);
    current = await wizard(ctx, client, current, timeoutMs);
  }
  if (ctx.json) return ctx.printJson(current);
  if (action) {
    const step = opts.finalize ? undefined : stepOf(current, (opts.verify ?? opts.confirm ?? opts.skip)!);
    if (step) printStep(ctx, step);
    else if (current.final_check)
      ctx.out(
        `${ctx.c.bold('Final check:')} ${status(ctx.c, current.final_check.outcome)} ${current.final_check.summary}`,
      );
    if (step?.status === 'failed_check') return EXIT.conflict;
    if (current.final_check?.outcome === 'still_present') return EXIT.conflict;
    return EXIT.ok;
  }
  if (!opts.interactive) printPlan(ctx, current);
  return EXIT.ok;
}

async function wizard(ctx: Context, client: OpsiClient, start: ResolutionPlan, timeoutMs: number) {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  let plan = start;
  try {
    for (;;) {
      const next = plan.steps.find((s) => !s.final && !DONE.has(s.status));
      if (!next) {
        const finalStep = plan.steps.find((s) => s.final);
        if (finalStep) printStep(ctx, finalStep);
        const answer = (await rl.question('Every step is done. Run the final check now? [y/N] '))
          .trim()
          .toLowerCase();
        if (answer === 'y' || answer === 'yes') {
          plan = await finalize(ctx, client, plan, timeoutMs);
          ctx.out(
            `${ctx.c.bold('Final check:')} ${status(ctx.c, plan.final_check!.outcome)} ${plan.final_check!.summary}`,
          );
        }
        return plan;
      }
      printStep(ctx, next);
      const choices = [next.verification ? '[v]erify' : '', '[c]onfirm done', '[s]kip', '[q]uit'].filter(
        Boolean,
      );
      const answer = (await rl.question(`${choices.join(' ')} > `)).trim().toLowerCase();
      if (answer.startsWith('q')) return plan;
      if (answer.startsWith('v') && next.verification) {
        plan = await verify(ctx, client, plan, next.seq, timeoutMs);
        const after = plan.steps.find((s) => s.seq === next.seq)!;
        ctx.out(`   → ${status(ctx.c, after.status)} ${ctx.c.dim(after.last_check?.output_preview ?? '')}`);
      } else if (answer.startsWith('c')) {
        await client.confirmStep(plan.id, next.seq);
        plan = await client.getPlan(plan.id);
      } else if (answer.startsWith('s')) {
        const reason = (await rl.question('Why skip this step? ')).trim();
        await client.skipStep(plan.id, next.seq, reason).catch((e: Error) => ctx.out(ctx.c.red(e.message)));
        plan = await client.getPlan(plan.id);
      }
      ctx.out();
    }
  } finally {
    rl.close();
  }
}
