/**
 * Learnings for every question: what the team taught about the service or the subject a question names is
 * looked up on every turn (one list_learnings call), matched by service and by the question's words, and
 * cited with the answer. A learning about a service with no tagged resources is the answer itself.
 */
import type { Request } from './history';
import type { LearningList } from './shapes';
import { ok, type ToolBox } from './toolbox';
import { when, words, wordsMatch } from './text';

export type Learning = LearningList['learnings'][number];

/** Questions a taught fact answers better than the inventory: who owns, how it is set up, what we may do. */
export const KNOWLEDGE_QUESTION =
  /\b(?:who (?:owns|runs|maintains|manages|is responsible|looks after|supports|handles|to (?:call|page|contact|ask))|owners?|owned by|ownership|responsible for|on-?call|contacts?|escalat\w*|point of contact|configur\w*|set ?up|what do we know|what(?:'s| is) known|anything (?:i|we) should know|good to know|gotchas?|caveats?|conventions?|rules? (?:for|about|on)|(?:can|may|should|must) (?:we|i)\b|allowed to|safe to|when (?:can|should|may|must) (?:we|i)|how (?:do|should|must) we|maintenance windows?|freeze|when (?:does|do|is|are|will)|schedul\w*|how often|what time)\b/;

/** Words that carry no subject (question words, fillers, generic nouns of the domain). */
const STOP = new Set(
  (
    'what which who whom whose when where why how does have has had with from that this these those there ' +
    'their they them then than into onto over under about after before again also just only some any every ' +
    'each more most much many such very your yours ours ourselves please tell show give know known learn ' +
    'learned learnt lesson lessons taught team teams service services resource resources finding findings ' +
    'open data thing things something anything should would could will shall must might need want make ' +
    'being been were same other another like right now today currently does doing done long hours hour'
  ).split(' '),
);

function contentWords(text: string): string[] {
  return [...new Set(words(text).filter((w) => w.length >= 4 && !STOP.has(w) && !/^\d+$/.test(w)))];
}

/** How strongly a learning is about what the question names: its service, a name in it, or shared words. */
function score(l: Learning, lower: string, service: string | undefined, qWords: string[]): number {
  let s = 0;
  const svc = l.service?.toLowerCase();
  if (svc) {
    const re = new RegExp(`(?<![\\w])${svc.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`);
    if (service?.toLowerCase() === svc || re.test(lower)) s += 3;
  }
  const fact = l.fact.toLowerCase();
  // A name from the question (kebab-case, dotted) that the fact mentions.
  for (const m of lower.matchAll(/\b[a-z0-9]+(?:[-_.][a-z0-9]+)+\b/g)) if (fact.includes(m[0])) s += 3;
  const fWords = contentWords(l.fact);
  const shared = qWords.filter((q) => fWords.some((f) => wordsMatch(q, f)));
  s += shared.length;
  return s;
}

/** The learnings about what a request names, best first (none when the turn lacks list_learnings). */
export async function taughtAbout(box: ToolBox, req: Request): Promise<Learning[]> {
  if (!box.has('list_learnings')) return [];
  const out = ok(await box.call<LearningList>('list_learnings', { limit: 50 }));
  const all = out?.learnings ?? [];
  if (!all.length) return [];
  const lower = req.prompt.toLowerCase();
  const qWords = contentWords(req.prompt);
  return all
    .map((l) => ({ l, s: score(l, lower, req.facets.service, qWords) }))
    .filter((x) => x.s >= 2)
    .sort((a, b) => b.s - a.s)
    .slice(0, 5)
    .map((x) => x.l);
}

export function learningLine(l: Learning): string {
  return `${l.fact}${l.service ? ` (service ${l.service})` : ''} — learning ${l.id}, taught by ${l.created_by.replace(/^user:/, '')} on ${when(l.created_at)}`;
}

/** The section an answer carries for the learnings it rests on. */
export function taughtSection(found: Learning[], leading: boolean): string {
  const head = leading
    ? 'What the team has taught about this:'
    : 'What the team has taught about this (learnings):';
  return `${head}\n${found.map((l) => `- ${learningLine(l)}`).join('\n')}`;
}
