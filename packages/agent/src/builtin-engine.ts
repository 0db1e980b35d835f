import { HANDLERS } from './builtin/answers/index';
import { matchingFindings } from './builtin/answers/findings';
import { asksTotal, totals } from './builtin/answers/totals';
import { asksIncidentRecords, incidentRecords, investigate } from './builtin/answers/incidents';
import { asksAmount } from './builtin/finding-set';
import { resolveRequest } from './builtin/history';
import { SAVINGS_WORD } from './builtin/parse';
import { hasDomainSignal, outOfScopeAnswer, refusalAnswer, scopeOf } from './builtin/scope';
import { KNOWLEDGE_QUESTION, taughtAbout, taughtSection } from './builtin/taught';
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
    const reply = (await this.answer(input, box)).trim();
    // A safety net: the answers are composed from tool output, and anything that is not is marked.
    let checked = reply;
    const report = checkGrounding(reply, box.outputs);
    if (!report.grounded) {
      const items = [...report.ungroundedNumbers, ...report.ungroundedIds];
      checked += `\n\nUnverified: ${items.join(', ')} (not found in the data the tools returned).`;
    }
    for (const text of chunks(checked)) {
      input.signal.throwIfAborted();
      await emit({ kind: 'message.delta', text });
    }
    return { reply: checked };
  }

  /**
   * The scope check comes first: a request to refuse is refused with no tool called; a question the
   * tenant's data cannot answer says so and states no data. Then the intent's answer, with what the team
   * has taught about its service or subject (looked up on every turn); a question about ownership or
   * set-up that a learning answers is answered by it first.
   */
  private async answer(input: TurnInput, box: ToolBox): Promise<string> {
    const scope = scopeOf(input.prompt);
    if (scope.kind === 'refuse') return refusalAnswer(scope.reason);
    if (scope.kind === 'out_of_scope') return outOfScopeAnswer(scope.reason, scope.what);
    const request = resolveRequest(input.prompt, input.history);
    const bound = input.incident?.id;
    if (input.incident?.investigation && box.has('get_incident'))
      return investigate({ box, req: request }, input.incident.id);
    // "Which resources does it involve?" after an answer about an incident: that incident's record.
    const subject = request.prior?.subject;
    if (
      subject?.kind === 'incident' &&
      request.reference?.kind === 'pronoun' &&
      !request.ids.length &&
      box.has('get_incident')
    )
      return incidentRecords({ box, req: request }, subject.id);
    const taught = request.intent === 'learnings' ? [] : await taughtAbout(box, request);
    // The prompt as the engine reads it (bounded: builtin/text readablePrompt), for every pattern below.
    const lower = request.prompt.toLowerCase();
    if (request.intent === 'unknown' && !request.prior && !taught.length && !hasDomainSignal(lower))
      return outOfScopeAnswer('general');
    const ctx = { box, req: request };
    // A question about the tenant that no intent names: the findings its words point at.
    // A total over a set is added up by a tool, with every figure it adds.
    // "How much would fixing those save?": an amount over the previous answer's list is a total too.
    // "What would deleting the old snapshots save?", "how much of that comes from the unattached
    // volumes?": what fixing the subset a description names saves, added up the same way.
    const overPrior = request.set.kind === 'prior' && asksAmount(lower) && SAVINGS_WORD.test(lower);
    const overDescribed =
      request.set.kind === 'described' && asksAmount(lower) && request.money === 'savings';
    const total =
      (asksTotal(lower) || overPrior || overDescribed) && !KNOWLEDGE_QUESTION.test(lower)
        ? await totals(ctx)
        : undefined;
    const matched =
      !total && request.intent === 'unknown' && hasDomainSignal(lower)
        ? await matchingFindings(ctx)
        : undefined;
    if (taught.length && (request.intent === 'unknown' || KNOWLEDGE_QUESTION.test(lower))) {
      const data =
        request.intent === 'unknown' ? (matched ?? '') : (await HANDLERS[request.intent](ctx)).trim();
      return [taughtSection(taught, true), ...(data ? [`What the data shows:\n\n${data}`] : [])].join('\n\n');
    }
    const main =
      total ??
      (box.has('list_incidents') && box.has('get_incident') && asksIncidentRecords(request.prompt, bound)
        ? await incidentRecords(ctx, bound)
        : (matched ?? (await HANDLERS[request.intent](ctx))));
    // The learnings the answer does not cite already (a resource's answer names its service's own).
    const more = taught.filter((l) => !main.includes(l.id));
    return more.length ? `${main.trim()}\n\n${taughtSection(more, false)}` : main;
  }
}
