import { z } from 'zod';
import { EngineError, sleep, type AgentEngine, type TurnEvent, type TurnInput } from './engine';

const Step = z.union([
  z.object({ delta: z.string() }),
  z.object({ deltas: z.number().int().min(1).max(100_000), text: z.string().optional() }),
  z.object({ sleep: z.number().int().min(0).max(600_000) }),
  z.object({
    tool: z.string(),
    input: z.unknown().optional(),
    ok: z.boolean().optional(),
    output: z.string().optional(),
  }),
  z.object({ fail: z.string() }),
  z.object({ hang: z.literal(true) }),
]);
const Script = z.array(Step);

/**
 * Plays a prompt of the form `script:[...]` as a turn, so tests can cue deltas, tool events, delays and
 * failures inside real worker processes. Steps: {delta}, {deltas: n} (n numbered deltas), {sleep: ms},
 * {tool, input, ok, output}, {fail: detail}, {hang: true} (until aborted). Any other prompt is echoed.
 * Refused in production by configuration.
 */
export class ScriptedEngine implements AgentEngine {
  readonly name = 'scripted';

  async runTurn(input: TurnInput, emit: (event: TurnEvent) => Promise<void>) {
    // An investigation's prompt is "Investigate incident <id>: <title>": a test cues it through the title.
    const at = input.incident?.investigation ? input.prompt.indexOf('script:') : -1;
    if (at > 0) input = { ...input, prompt: input.prompt.slice(at) };
    if (!input.prompt.startsWith('script:')) {
      const reply = `echo: ${input.prompt}`;
      await emit({ kind: 'message.delta', text: reply });
      return { reply };
    }
    const parsed = Script.safeParse(JSON.parse(input.prompt.slice('script:'.length)));
    if (!parsed.success) throw new EngineError(`bad script: ${parsed.error.issues[0]?.message}`);
    let reply = '';
    for (const step of parsed.data) {
      input.signal.throwIfAborted();
      if ('delta' in step) {
        reply += step.delta;
        await emit({ kind: 'message.delta', text: step.delta });
      } else if ('deltas' in step) {
        for (let i = 1; i <= step.deltas; i++) {
          const text = `${step.text ?? 'chunk'} ${i} `;
          reply += text;
          await emit({ kind: 'message.delta', text });
        }
      } else if ('sleep' in step) {
        await sleep(step.sleep, input.signal);
      } else if ('tool' in step) {
        await emit({ kind: 'tool.started', tool: step.tool, input: step.input ?? {} });
        await emit({
          kind: 'tool.finished',
          tool: step.tool,
          ok: step.ok ?? true,
          output_preview: step.output ?? '',
        });
      } else if ('fail' in step) {
        throw new EngineError(step.fail);
      } else {
        await sleep(2 ** 31 - 1, input.signal);
      }
    }
    return { reply };
  }
}
