import { HANDLERS } from './builtin/answers/index';
import { asksIncidentRecords, incidentRecords, investigate } from './builtin/answers/incidents';
import { resolveRequest } from './builtin/history';
import { chunks } from './builtin/text';
import { ToolBox } from './builtin/toolbox';
import type { AgentEngine, TurnEvent, TurnInput } from './engine';
import { checkGrounding } from './grounding';

/**
 * The built-in offline engine: it plays the model's part without one. It reads the prompt and the
 * conversation (builtin/parse, builtin/history: an intent table and the follow-up cues), runs the
 * intent's plan of tool calls through the turn's tools (builtin/toolbox: tool.started / tool.finished,
 * bounded, cancellable), and composes the answer only from what the tools returned (builtin/answers),
 * citing the ids it rests on. When the data does not answer the question, or a tool it needs is not
 * selected for the turn, it says so. Deterministic: the same data and conversation give the same answer.
 */
export class BuiltinEngine implements AgentEngine {
  readonly name = 'builtin';

  async runTurn(input: TurnInput, emit: (event: TurnEvent) => Promise<void>) {
    input.signal.throwIfAborted();
    const box = new ToolBox(input.tools, emit, input.signal);
    const request = resolveRequest(input.prompt, input.history);
    const bound = input.incident?.id;
    let reply: string;
    if (input.incident?.investigation && box.has('get_incident')) {
      reply = (await investigate({ box, req: request }, input.incident.id)).trim();
    } else if (
      box.has('list_incidents') &&
      box.has('get_incident') &&
      asksIncidentRecords(input.prompt, bound)
    ) {
      reply = (await incidentRecords({ box, req: request }, bound)).trim();
    } else {
      reply = (await HANDLERS[request.intent]({ box, req: request })).trim();
    }
    // A safety net: the answers are composed from tool output, and anything that is not is marked.
    const report = checkGrounding(reply, box.outputs);
    if (!report.grounded) {
      const items = [...report.ungroundedNumbers, ...report.ungroundedIds];
      reply += `\n\nUnverified: ${items.join(', ')} (not found in the data the tools returned).`;
    }
    for (const text of chunks(reply)) {
      input.signal.throwIfAborted();
      await emit({ kind: 'message.delta', text });
    }
    return { reply };
  }
}
