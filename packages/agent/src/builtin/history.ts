/**
 * Follow-ups: what the previous answer was about, read from the conversation. The previous user message
 * gives the previous intent (re-parsed, itself resolved against the turns before it); the previous
 * assistant message gives the items it listed and the ids it cited, in order.
 */
import type { ConversationMessage } from '../engine';
import { asksAmount, findingSetOf, moneyOf, type FindingSet } from './finding-set';
import { isOnlyFacets, isReferenceOnly, parsePrompt, SAVINGS_WORD, type Facets, type Parsed } from './parse';
import { idsIn, type FoundId } from './text';

export interface PriorItem {
  kind: 'finding' | 'resource' | 'incident';
  id: string;
}

export interface Prior {
  request: Request;
  /** The items the previous answer listed (one per list line), or the ids it cited when it listed none. */
  items: PriorItem[];
  /** What the previous answer was about: the first id of its opening paragraph, else its first item. */
  subject?: PriorItem | undefined;
}

/** A prompt read in the light of the conversation: the request a handler answers. */
export interface Request extends Parsed {
  /** Which findings the question is about, from its own words (./finding-set). */
  set: FindingSet;
  /** The previous turn, when the conversation has one. */
  prior?: Prior | undefined;
  /**
   * Which money an amount is asked of (./finding-set moneyOf); an amount question whose words name none
   * ("how much of that comes from the old snapshots?") asks of the previous question's.
   */
  money?: 'savings' | 'cost' | undefined;
  /** A note that says how a follow-up was understood. */
  understoodAs?: string | undefined;
}

const INCIDENT_ID = /\bincident ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/i;

function itemOf(ids: FoundId[], line = ''): PriorItem | undefined {
  // "… (incident <uuid>)": an incident record, not a finding.
  const incident = INCIDENT_ID.exec(line);
  if (incident && ids[0]?.id === incident[1]) return { kind: 'incident', id: incident[1]! };
  const finding = ids.find((i) => i.kind === 'finding');
  if (finding) return { kind: 'finding', id: finding.id };
  const arn = ids.find((i) => i.kind === 'arn');
  if (arn) return { kind: 'resource', id: arn.id };
  const native = ids[0];
  return native ? { kind: 'resource', id: native.id } : undefined;
}

/** The items an answer lists: each list line ("1. …", "- …") counts once, by its finding id or else its first resource id. */
export function itemsOf(answer: string): { items: PriorItem[]; subject?: PriorItem | undefined } {
  const lines = answer.split('\n');
  const items: PriorItem[] = [];
  const seen = new Set<string>();
  let subject: PriorItem | undefined;
  let inList = false;
  for (const line of lines) {
    const isItem = /^\s*(?:\d+[.)]|[-*•])\s/.test(line);
    if (isItem) inList = true;
    const item = itemOf(idsIn(line), line);
    if (!item) continue;
    if (!isItem && !inList && !subject) subject = item;
    if (isItem && !seen.has(item.id)) {
      seen.add(item.id);
      items.push(item);
    }
  }
  if (!items.length) {
    for (const id of idsIn(answer)) {
      const item = itemOf([id]);
      if (item && !seen.has(item.id)) {
        seen.add(item.id);
        items.push(item);
      }
    }
  }
  return { items, subject: subject ?? items[0] };
}

function mergeFacets(base: Facets, over: Facets): Facets {
  return {
    domain: over.domain ?? base.domain,
    severity: over.severity ?? base.severity,
    service: over.service ?? base.service,
    account: over.account ?? base.account,
  };
}

const TARGETED = new Set([
  'resource',
  'neighbours',
  'blast',
  'fix',
  'finding',
  'learnings',
  'runbook',
  'incident',
]);
const LISTS = new Set(['open', 'savings', 'costs']);
/** A fix asked how to make ("how do I fix …", "the steps to fix …"), not supposed ("if we fixed …"). */
const HOW_TO =
  /\bhow (?:do|does|did|should|can|could|to|is|are)\b|\bsteps?\b|\bwhat (?:should|do) (?:i|we) do\b|\binstructions?\b/;

/**
 * Resolves a prompt against the conversation (oldest message first). Depth-bounded: a follow-up of a
 * follow-up resolves its predecessor first, up to a few turns back.
 */
export function resolveRequest(prompt: string, history: ConversationMessage[], depth = 0): Request {
  const own = parsePrompt(prompt);
  const lower = own.prompt.toLowerCase();
  const parsed: Request = {
    ...own,
    set: findingSetOf(own.prompt, own.facets),
    money: moneyOf(lower),
  };
  let lastUser = -1;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]!.role === 'user') {
      lastUser = i;
      break;
    }
  }
  if (lastUser < 0 || depth > 4) return standalone(parsed);
  const previous = resolveRequest(history[lastUser]!.content, history.slice(0, lastUser), depth + 1);
  const answer = history
    .slice(lastUser + 1)
    .filter((m) => m.role === 'assistant')
    .map((m) => m.content)
    .join('\n');
  const { items, subject } = itemsOf(answer);
  parsed.prior = { request: previous, items, subject };
  if (!parsed.money && asksAmount(lower)) parsed.money = previous.money;
  // "Which one would save the most?" with no earlier list to pick from is a question of its own.
  if (parsed.intent === 'pick' && !items.length) return standalone(parsed);
  // "How many of them are critical?" after a list of findings: a count over the previous question's set
  // (not only the lines its answer had room for), narrowed by what the question adds.
  if (
    parsed.set.kind === 'prior' &&
    parsed.intent === 'count' &&
    (previous.intent === 'open' || previous.intent === 'savings') &&
    previous.set.kind === 'all'
  ) {
    parsed.intent = 'open';
    parsed.set = previous.set;
    parsed.facets = mergeFacets(previous.facets, parsed.facets);
    parsed.reference = undefined;
    parsed.target = undefined;
    parsed.understoodAs = 'a count of the findings of your previous question';
    return parsed;
  }
  // "What would fixing them all save?" after "which finops findings are open?": the previous question's
  // findings, all of them, not only the ones its answer had room to list.
  if (
    parsed.set.kind === 'prior' &&
    parsed.intent !== 'pick' &&
    asksAmount(lower) &&
    LISTS.has(previous.intent) &&
    previous.set.kind === 'all'
  ) {
    parsed.set = previous.set;
    parsed.facets = mergeFacets(previous.facets, parsed.facets);
    parsed.reference = undefined;
    return standalone(parsed);
  }
  // A question that names all open findings is about all of them, whatever was said before: it takes
  // neither the previous answer's list nor its filters ("and across all open findings?" after a list of
  // security ones asks the previous kind of question, about everything).
  if (parsed.set.kind === 'all' && parsed.set.explicit && !parsed.ids.length && !parsed.checks.length) {
    parsed.reference = undefined;
    // An elliptical follow-up ("and in total?", "what about if we fixed everything that's open?") asks
    // the previous kind of question: its own verb, a supposed fix or a count, only carries the scope.
    if (
      parsed.continues &&
      LISTS.has(previous.intent) &&
      (['unknown', 'open', 'resource', 'count'].includes(parsed.intent) ||
        (parsed.intent === 'fix' && !HOW_TO.test(lower)))
    ) {
      parsed.intent = previous.intent;
      parsed.sortBySavings = parsed.sortBySavings || previous.sortBySavings;
      parsed.understoodAs = 'your previous question, about all open findings';
    }
    return standalone(parsed);
  }

  const hasFacets = Object.values(parsed.facets).some((v) => v !== undefined);
  const refersBack = parsed.reference !== undefined && isReferenceOnly(parsed.target);
  // "and the security ones?", "only critical", "what about payments?": the previous question, narrowed.
  if (
    (parsed.intent === 'unknown' ||
      (parsed.continues && (parsed.intent === 'open' || parsed.intent === 'resource'))) &&
    !parsed.ids.length &&
    !refersBack
  ) {
    if (hasFacets && isOnlyFacets(parsed.target, parsed.facets)) {
      const intent = LISTS.has(previous.intent) || previous.intent === 'resource' ? previous.intent : 'open';
      parsed.intent = intent;
      parsed.facets = mergeFacets(intent === previous.intent ? previous.facets : {}, parsed.facets);
      if (intent === 'resource') {
        parsed.target = previous.target;
        parsed.ids = previous.ids;
      }
      parsed.sortBySavings = parsed.sortBySavings || previous.sortBySavings;
      parsed.understoodAs = 'your previous question, narrowed';
      return parsed;
    }
    if (previous.intent === 'count' && parsed.continues) {
      // "how many instances?" then "and buckets?": the same count, of another kind.
      parsed.intent = 'count';
      parsed.facets = mergeFacets(previous.facets, parsed.facets);
      return parsed;
    }
    if (parsed.target && !isOnlyFacets(parsed.target, parsed.facets)) {
      // "what about sg-web?": the previous kind of question, about something else.
      parsed.intent = TARGETED.has(previous.intent) ? previous.intent : 'resource';
      parsed.days = parsed.days ?? previous.days;
      parsed.understoodAs = 'the same question as before, about something else';
      return parsed;
    }
  }
  if (parsed.intent === 'unknown' && refersBack) parsed.intent = 'resource';
  if (refersBack) return parsed;
  return standalone(parsed);
}

/** A question read on its own: filters alone ask for a list; a name alone asks about that resource. */
function standalone(parsed: Request): Request {
  // "How much would fixing all open findings save?", "total savings if we fix everything that's open?":
  // an amount over every open finding (of the facets named), whatever verb carries it.
  const lower = parsed.prompt.toLowerCase();
  if (
    parsed.set.kind === 'all' &&
    !parsed.ids.length &&
    !parsed.checks.length &&
    ['fix', 'open', 'resource', 'unknown', 'count', 'changes', 'pick'].includes(parsed.intent) &&
    (SAVINGS_WORD.test(lower) || /\b(?:on the table|at stake|to be saved|up for grabs)\b/.test(lower)) &&
    asksAmount(lower)
  ) {
    parsed.intent = 'savings';
    parsed.pick = undefined;
    return parsed;
  }
  // A superlative with nothing to pick from ("which one finding saves the most?") asks the whole tenant.
  if (parsed.intent === 'pick') {
    parsed.intent = parsed.pick === 'savings' ? 'savings' : parsed.pick === 'severe' ? 'open' : 'costs';
    if (parsed.pick === 'savings') parsed.sortBySavings = true;
    parsed.pick = undefined;
    return parsed;
  }
  const hasFacets = Object.values(parsed.facets).some((v) => v !== undefined);
  // "What should we fix first?", "what do I fix next?", "the cheapest fix with the biggest impact": no
  // finding named, so the most pressing ones, or the largest savings when the question is about money.
  if (
    parsed.intent === 'fix' &&
    !parsed.ids.length &&
    !parsed.checks.length &&
    (!parsed.target ||
      /^(?:first|next|now|today|asap|right now|first of all|urgently|most urgently|soonest)$/i.test(
        parsed.target,
      ) ||
      /^(?:with |that (?:has|have|gives?|brings?) )?(?:the )?(?:most|biggest|best|largest|highest|greatest|cheapest|easiest|quickest)\b/i.test(
        parsed.target,
      ) ||
      isOnlyFacets(parsed.target, parsed.facets))
  ) {
    parsed.intent =
      SAVINGS_WORD.test(lower) || /\b(?:cheap\w*|impact|money|value|roi|payoff)\b/.test(lower)
        ? 'savings'
        : 'open';
    if (parsed.intent === 'savings') parsed.sortBySavings = true;
    return parsed;
  }
  // "Which account and region is old-jenkins in?": a question no intent names, about a named resource.
  const named = /\b[a-z0-9]+(?:-[a-z0-9]+)+\b/i.exec(parsed.prompt)?.[0];
  if (
    parsed.intent === 'unknown' &&
    named &&
    !parsed.facets.service &&
    !/^us-[a-z]+-\d[a-z]?$/i.test(named)
  ) {
    parsed.intent = 'resource';
    parsed.target = named;
    return parsed;
  }
  if (parsed.intent === 'resource' && !parsed.ids.length && isOnlyFacets(parsed.target, parsed.facets))
    parsed.intent = 'open';
  else if (parsed.intent === 'unknown' && hasFacets && isOnlyFacets(parsed.target, parsed.facets))
    parsed.intent = 'open';
  else if (
    parsed.intent === 'unknown' &&
    parsed.continues &&
    parsed.target &&
    !isReferenceOnly(parsed.target)
  )
    parsed.intent = 'resource';
  return parsed;
}
