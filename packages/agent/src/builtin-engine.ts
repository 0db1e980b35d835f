import type { AgentEngine, TurnEvent, TurnInput } from './engine';

/**
 * The built-in offline engine as it stands before the agent's tools exist: a deterministic responder
 * that says plainly what it is and what it cannot do yet, streamed a few words at a time like a model.
 */
export class BuiltinEngine implements AgentEngine {
  readonly name = 'builtin';

  async runTurn(input: TurnInput, emit: (event: TurnEvent) => Promise<void>) {
    const asked = input.prompt.length > 200 ? `${input.prompt.slice(0, 200)}…` : input.prompt;
    const earlier = input.history.length;
    const reply =
      `This is the built-in offline engine. The agent's tools (findings, resources, incidents) are not ` +
      `connected yet, so I cannot look anything up or answer from your data. You asked: "${asked}". ` +
      `This session has ${earlier} earlier message${earlier === 1 ? '' : 's'}.`;
    const words = reply.split(/(?<= )/);
    for (let i = 0; i < words.length; i += 4) {
      input.signal.throwIfAborted();
      await emit({ kind: 'message.delta', text: words.slice(i, i + 4).join('') });
    }
    return { reply };
  }
}
