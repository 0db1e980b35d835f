/**
 * Which findings a question is about, read from its own words before anything the conversation said:
 *
 * - all open findings: the question names them all ("all open findings", "every finding", "everything
 *   that's open", "not just these"), or names no subset at all ("how much could we save in total?");
 * - the previous answer's list: it points back at it ("these", "those", "all of them", "the ones above");
 * - the findings a description names ("the unattached volumes", "the old snapshots").
 *
 * Facets (domain, severity, service, account) narrow any of the three; they are read by ./parse. A
 * question that names all open findings inherits neither the previous list nor the previous facets.
 */
import { SAVINGS_WORD, type Facets } from './parse';
import { words } from './text';

export type FindingSet =
  | {
      kind: 'all';
      /** The question says "all"/"every"/"everything" rather than naming no subset. */ explicit: boolean;
    }
  | { kind: 'prior' }
  | { kind: 'described'; words: string[] };

const STATUS = '(?:open|outstanding|active|current|currently open|remaining|existing|unresolved|known)';
const FACET = '(?:finops|cost|security|sre|reliability|resilience|critical|high|medium|low|info)';
const NOUN = '(?:findings?|issues?|problems?|recommendations?|risks?|opportunit(?:y|ies))';

/** Words that name every open finding (of the facets the question gives). */
const NAMES_ALL = new RegExp(
  [
    `\\b(?:all|every|each|any)\\s+(?:(?:of\\s+)?(?:the|our|my|your|those|these)\\s+)?(?:${STATUS}\\s+)?(?:${FACET}[\\s-]+)*(?:severity\\s+)?${NOUN}\\b`,
    `\\b(?:the|our)\\s+(?:${STATUS}\\s+)?(?:${FACET}[\\s-]+)*${NOUN}\\s+(?:all|together|combined|altogether|in total)\\b`,
    `\\beverything(?:\\s+(?:(?:that|which)(?:'s|\\s+is)?\\s+|we have\\s+)?(?:${STATUS}|flagged|found))?\\b`,
    `\\b(?:across|over)\\s+(?:the board|everything|all (?:of )?(?:them|it))\\b`,
    `\\b(?:the\\s+)?(?:whole|entire|full)\\s+(?:list|backlog|set|tenant|account|estate|environment)\\b`,
    `\\bnot (?:just|only) (?:these|those|them|that one|the ones? (?:above|listed))\\b`,
    `\\bin (?:the|our) (?:whole|entire) `,
  ].join('|'),
);

/**
 * Words that ask for a total and name no set ("and how many are open in total?", "overall?"): when the
 * question neither describes a subset nor points back, they name every open finding, as explicitly as
 * "all" does, so an elliptical follow-up does not inherit the previous question's filters.
 */
const TOTAL_WORDS = /\b(?:in total|overall|altogether|all (?:told|together)|in all|grand total)\b/;

/** Words that point back at the previous answer's list. */
const POINTS_BACK =
  /\b(?:these|those|them|they|the ones? (?:above|listed|you (?:listed|mentioned|showed|named|found|gave))|(?:this|that|the (?:above|previous|last)) list|the (?:above|listed|same) (?:ones|findings|items))\b/;

/**
 * Words that say how much, what kind of question, or which findings in general, and never what the
 * findings are about: what is left of a question after them is its description.
 */
const NOT_A_DESCRIPTION = new Set(
  (
    'how much many what whats which who is are was were be been being the a an our my your their we us i you ' +
    'they them these those it its this that thats there here could would can will should might may do does did ' +
    'doing done if by in on of for to from with at into per each every all any everything anything across over ' +
    'board entire whole full overall total totals totally together combined altogether sum summed add adds added ' +
    'adding up put numbers number show me tell give list get got go goes going down off out bill bills month ' +
    'monthly year yearly annual annually dollars money cost costs costing spend spending spent pay paying paid ' +
    'save saves saved saving savings worth potential possible estimated estimate fix fixes fixed fixing ' +
    'resolve resolved resolving address addressed addressing remediate remediated remediating clean cleaned ' +
    'cleaning deleting removing delete remove handle handled handling close closed closing finding findings ' +
    'issue issues problem problems recommendation recommendations risk risks opportunity opportunities open ' +
    'outstanding active current currently remaining existing unresolved known flagged found list backlog set ' +
    'tenant account estate environment not just only ones one above listed mentioned showed named gave same ' +
    'previous last and or then also plus so now today right please just exactly roughly approximately about ' +
    'around much lot lots impact value get gets reduce reduced lower lowered cut knock drop most least ' +
    'biggest largest highest top best cheapest expensive first next table stake grabs regardless discussed ' +
    'come comes coming came part share portion fraction percent percentage proportion both either ' +
    'neither two three four five several few back bring brings bringing return returns yield yields ' +
    'recover recoup free freed releasing release released terminating terminate terminated count ' +
    'counts counted counting including include includes included have has had having single'
  ).split(' '),
);

const FACET_WORDS =
  /^(?:finops|cost|costs|costly|security|secure|sre|reliability|resilience|availability|critical|high|medium|low|info|severity|sev|domain|service|services|tagged|tag)$/;

/** What a question's own words say about the findings it is about (see the module comment). */
export function findingSetOf(prompt: string, facets: Facets = {}): FindingSet {
  const lower = prompt.toLowerCase().replace(/[’‘]/g, "'");
  const named = new Set(
    [facets.service, facets.account].flatMap((v) => (v ? words(v) : [])).map((w) => w.toLowerCase()),
  );
  const described = words(lower.replace(/'s\b/g, ' ').replace(/\bn't\b/g, ' '))
    .filter((w) => !/[-_./]/.test(w) || !named.has(w))
    .filter(
      (w) =>
        w.length >= 3 &&
        !/^\d+$/.test(w) &&
        !NOT_A_DESCRIPTION.has(w) &&
        !FACET_WORDS.test(w) &&
        !named.has(w),
    );
  if (described.length) return { kind: 'described', words: [...new Set(described)] };
  if (NAMES_ALL.test(lower)) return { kind: 'all', explicit: true };
  if (POINTS_BACK.test(lower)) return { kind: 'prior' };
  return { kind: 'all', explicit: TOTAL_WORDS.test(lower) };
}

/** Whether a question asks for an amount ("how much …", "what would … save", "by how much …"). */
export function asksAmount(lower: string): boolean {
  return /\bhow much\b|\b(?:total|totals|sum|summed|combined|altogether|all together|add(?:s|ed)? (?:\w+ )?up)\b|\bwhat(?:'s| is| are)? (?:the )?(?:total|sum|amount)\b|\bwhat (?:would|could|will|do|does|did|might)\b[^?.!]*\b(?:save|saves|saving|savings|cost|costs)\b/.test(
    lower,
  );
}

/** Acting on findings (delete, fix, clean up …): an amount asked of such an act is what it saves. */
const REMEDIATES =
  /\b(?:delet|remov|fix|clean|resolv|remediat|address|terminat|releas|right-?siz|downsiz|migrat|switch|decommission|get(?:ting)? rid)\w*/;
const COST_WORD = /\b(?:costs?|costing|spend\w*|spent|pay\w*|bills?|charged?)\b/;

/**
 * Which money an amount question is about, from its own words: what something saves ("save", or an act
 * of fixing: "what would deleting the old snapshots come to?"), or what it costs; undefined when its
 * words name neither ("how much of that …" takes the previous question's, see ./history).
 */
export function moneyOf(lower: string): 'savings' | 'cost' | undefined {
  if (SAVINGS_WORD.test(lower)) return 'savings';
  if (COST_WORD.test(lower)) return 'cost';
  if (asksAmount(lower) && REMEDIATES.test(lower)) return 'savings';
  return undefined;
}
