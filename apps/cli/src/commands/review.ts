import { readFile } from 'node:fs/promises';
import type { Risk } from '@opsi/sdk';
import type { Context } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { severity } from '../format';

export const RISKS: Risk[] = ['low', 'medium', 'high', 'critical'];

/**
 * A plan file's bytes as text, whatever wrote them: UTF-16 LE or BE with a byte-order mark
 * (PowerShell's `terraform plan > plan.txt`; read as UTF-8 it became a NUL after each character),
 * UTF-8 with or without one.
 */
export function decodePlanBytes(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes);
}

async function readAll(source: string): Promise<string> {
  if (source !== '-') {
    try {
      return decodePlanBytes(await readFile(source));
    } catch (e) {
      throw new CliError(`cannot read ${source}: ${(e as Error).message}`, EXIT.usage);
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return decodePlanBytes(Buffer.concat(chunks));
}

/**
 * Reviews a Terraform plan (a file, or - for stdin) against the live environment. Exit status 10 when
 * the overall risk is at or above --fail-on (default high), so CI can gate on it.
 */
export async function planReview(ctx: Context, source: string, opts: { failOn?: string }) {
  const failOn = (opts.failOn ?? 'high').toLowerCase();
  if (failOn !== 'never' && !RISKS.includes(failOn as Risk))
    throw new CliError(`--fail-on must be one of ${RISKS.join(', ')} or never`, EXIT.usage);
  const plan = await readAll(source);
  if (!plan.trim()) throw new CliError('the plan is empty', EXIT.usage);
  const review = await (await ctx.client()).planReview(plan);
  const failed = failOn !== 'never' && RISKS.indexOf(review.overall_risk) >= RISKS.indexOf(failOn as Risk);
  if (ctx.json) ctx.printJson({ ...review, fail_on: failOn, failed });
  else {
    const c = ctx.c;
    ctx.out(
      `${c.bold('Overall risk:')} ${severity(c, review.overall_risk)} ${c.dim(`(read-only review, ${review.annotations.length} annotations)`)}`,
    );
    for (const a of review.annotations) {
      ctx.out();
      ctx.out(`${severity(c, a.risk)} ${c.bold(a.title)} ${c.dim(`${a.category} · ${a.address}`)}`);
      ctx.out(`  ${a.detail}`);
      for (const cite of a.citations) ctx.out(c.dim(`  [${cite.kind}] ${cite.ref}`));
    }
    if (failed)
      process.stderr.write(`${c.red('✗')} risk ${review.overall_risk} is at or above --fail-on ${failOn}\n`);
  }
  return failed ? EXIT.riskAboveThreshold : EXIT.ok;
}
