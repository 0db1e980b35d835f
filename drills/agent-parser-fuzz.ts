import { parseTurn, pathologicalPrompts } from '@opsi/agent/testing';
import { MAX_PROMPT_CHARS } from '@opsi/contracts';
import type { DrillContext, DrillRow } from './lib/types';

// The hostile drill's fuzzing pass over the agent's prompt parser (issue 24), in a file of its own so
// that other fuzzing passes of drills/hostile.ts merge beside it. Generated pathological prompts (long
// runs of what the patterns backtrack on, and seeded random mixes of the engine's own vocabulary), up to
// the API's largest prompt, each read as the built-in engine reads a turn (scope check, request
// resolved against a conversation that holds it too). The drills' stack runs the scripted engine, so
// the parser is read here, in process, as the worker runs it; the stack is asked for the API's cap.
// Expected: every read within a bound per byte; one character over the cap is a 400 naming it.

/**
 * Microseconds per byte of prompt a read may take beyond a fixed 2 ms (a linear parser takes about 1 on
 * a loaded 2-core machine; the patterns before issue 24 took 475 for 20,000 spaces).
 */
const MAX_US_PER_BYTE = 25;
const FIXED_MS = 2;
const SIZES = [2_000, 8_000, MAX_PROMPT_CHARS];

export async function agentParserFuzz(ctx: DrillContext): Promise<DrillRow[]> {
  const seeds = ctx.scale(6, 2);
  let read = 0;
  let worst = { usPerByte: 0, what: '', prompt: '' };
  // The first reading compiles the engine's patterns: not a cost of any prompt.
  parseTurn('what is open on the payments service?');
  const started = performance.now();
  for (let seed = 1; seed <= seeds && !ctx.signal.aborted; seed++) {
    for (const size of SIZES) {
      for (const { what, prompt } of pathologicalPrompts(size, seed, seed === 1 ? 8 : 16)) {
        // A conversation whose earlier turn is the same kind of prompt: every turn re-reads the earlier ones.
        const t = performance.now();
        parseTurn(`${seed} ${prompt}`, [
          { role: 'user', content: `${seed + 1} ${prompt}` },
          { role: 'assistant', content: 'There are 2 open findings.' },
        ]);
        const usPerByte = (Math.max(0, performance.now() - t - FIXED_MS) * 1_000) / prompt.length;
        read++;
        if (usPerByte > worst.usPerByte) worst = { usPerByte, what: `${what} at ${size}`, prompt };
      }
    }
  }
  ctx.log(
    `agent parser: ${read} pathological prompts read in ${((performance.now() - started) / 1000).toFixed(1)} s; worst ${worst.usPerByte.toFixed(2)} µs/byte (${worst.what})`,
  );
  // The API takes no longer prompt than the largest read here: one character more is a 400 naming the cap.
  const tenant = await ctx.newTenant({ budget: 1 });
  const over = await fetch(`${ctx.stack.api.url}/api/v1/ask`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.tokens.read_write}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: `what${' '.repeat(MAX_PROMPT_CHARS - 11)}is open?` }),
    signal: AbortSignal.timeout(30_000),
  });
  const detail = ((await over.json()) as { detail?: string }).detail ?? '';
  const row = (measure: string, value: number | string, target: string, pass: boolean): DrillRow => ({
    drill: 'hostile',
    measure,
    value,
    target,
    pass,
  });
  return [
    row('agent parser: pathological prompts read', read, 'info', read > 0),
    row(
      `agent parser: worst time per byte beyond ${FIXED_MS} ms (µs)`,
      Number(worst.usPerByte.toFixed(2)),
      `≤ ${MAX_US_PER_BYTE}`,
      worst.usPerByte <= MAX_US_PER_BYTE,
    ),
    row(
      `agent parser: prompt of ${MAX_PROMPT_CHARS + 1} characters`,
      over.status,
      '400 naming the cap',
      over.status === 400 && detail.includes(String(MAX_PROMPT_CHARS)),
    ),
  ];
}
