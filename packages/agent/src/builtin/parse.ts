/**
 * Reading a prompt: which intent it expresses (the intent table), the filters it names (domain,
 * severity, service, account), the thing it is about (a resource, a finding), the time window, and the
 * cues that make it a follow-up of the previous answer ("and the security ones?", "the first one").
 */
import type { DomainName, SeverityName } from '@opsi/contracts';
import { CHECK_RE, idsIn, readablePrompt } from './text';

export type Intent =
  | 'help'
  | 'open'
  | 'savings'
  | 'costs'
  | 'count'
  | 'resource'
  | 'neighbours'
  | 'blast'
  | 'risks'
  | 'incident'
  | 'changes'
  | 'learnings'
  | 'runbook'
  | 'fix'
  | 'finding'
  | 'pick'
  | 'unknown';

export type Domain = DomainName;
export type Severity = SeverityName;

export interface Facets {
  domain?: Domain | undefined;
  severity?: Severity | undefined;
  service?: string | undefined;
  /** A 12-digit account id or an account's name (resolved through the inventory). */
  account?: string | undefined;
}

/** What a prompt refers to in the previous answer. */
export type Reference = { kind: 'ordinal'; index: number } | { kind: 'pronoun' };

export interface Parsed {
  /** The prompt as written. */
  prompt: string;
  intent: Intent;
  facets: Facets;
  /** The words naming what the question is about (a resource, a finding, a topic), as written. */
  target?: string | undefined;
  /** Ids written in the prompt, in order. */
  ids: ReturnType<typeof idsIn>;
  checks: string[];
  days?: number | undefined;
  sortBySavings: boolean;
  /** How many items the question asks for ("the top 3"), when it says. */
  limit?: number | undefined;
  pick?: 'expensive' | 'savings' | 'severe' | undefined;
  reference?: Reference | undefined;
  /** The prompt opens like a follow-up ("and …", "what about …", "only …"). */
  continues: boolean;
  /** The prompt names an incident (an id like INC-42) that no store can look up. */
  incidentName?: string | undefined;
}

/**
 * The intent table, in order of precedence: the first intent whose pattern matches wins. Each intent's
 * plan of tool calls and its answer live in ./answers.
 */
export const INTENTS: Array<{ intent: Intent; pattern: RegExp }> = [
  { intent: 'runbook', pattern: /\b(?:run ?books?|playbooks?|sops?)\b/ },
  {
    intent: 'learnings',
    pattern: /\b(?:learn(?:ed|t|ings?)?|lessons?|post-?mortems?|retro(?:spective)?s?|takeaways?)\b/,
  },
  {
    intent: 'risks',
    pattern:
      /\bsingle points? of failure\b|\bspofs?\b|\btoxic (?:combinations?|paths?)\b|\bone failure (?:away )?from\b|\b(?:how )?resilient\b|\bresilience (?:risks?|gaps?)\b|\bweak(?:est)? (?:points?|links?|spots?)\b|\b(?:most )?fragile\b|\black(?:s|ing)? (?:redundancy|failover|a standby)\b|\bno (?:redundancy|failover|standby)\b|\bnot redundant\b|\bsingle (?:az|availability zone)\b|\bsingle-az\b|\b(?:not|isn't|aren't|without|no) multi-?az\b|\bcould take (?:us|everything|the (?:site|service)) down\b/,
  },
  {
    intent: 'pick',
    pattern:
      /\bwhich (?:of (?:those|these|them)|one)\b|\b(?:most expensive|priciest|costliest|most severe|most urgent|worst|biggest|saves? the most) (?:of|among) (?:those|these|them)\b/,
  },
  {
    intent: 'fix',
    pattern:
      /\b(?:fix|fixes|fixed|fixing|remediat\w*|resolve|mitigat\w*|steps to close|what should (?:i|we) do (?:about|with|for))\b/,
  },
  {
    // "What does checkout-api-1 depend on?": its own dependencies, i.e. its edges.
    intent: 'neighbours',
    pattern:
      /\b(?:what|which\s+\w+)\s+(?:does|do|is|are)\s+\S.*?\s+(?:depend(?:s|ing)?|rel(?:y|ies|ying)|built)\s+(?:on|upon)\s*[?.!]*$/,
  },
  {
    // "Can we safely delete X?", "is it safe to remove X?": what would break, before anything is removed.
    intent: 'blast',
    pattern:
      /\bsafe(?:ly)?\s+(?:to\s+)?(?:delete|remove|terminate|decommission|shut ?down|turn off|retire)\b|\b(?:can|could|should)\s+(?:we|i)\s+(?:safely\s+)?(?:delete|remove|terminate|decommission|shut ?down|turn off|retire)\b/,
  },
  {
    intent: 'blast',
    pattern:
      /\bblast radius\b|\b(?:depends?|relies|rely|relying|depending) on\b|\bdependents?\b|\bdownstream\b|\b(?:what|which)\b.*\b(?:breaks?|affected|impacted|stops? working|stop functioning)\b|\bif (?:someone|somebody|anyone|we|they|you)\s+(?:revokes?|deletes?|removes?|disables?|drops?|detaches?|terminates?|kills?|stops?|breaks?|loses?|lose|deprovisions?)\b|\b(?:if|when|once|in case)\b.*\b(?:fails?|failed|goes down|went down|(?:is|was|were|gets|got) (?:deleted|removed|terminated|lost)|dies|died|is down|stops|stopped|crash(?:es|ed)?|(?:goes|went|is|was|were) (?:offline|unavailable|unreachable|away)|(?:we )?lose|lost)\b|\b(?:impact|effect|consequences?) of (?:losing|an? (?:outage|failure|loss) (?:of|on|in))\b|\b(?:losing|loss of|outage of|failure of)\s+\S+.*\b(?:break|affect|impact|take down)\w*\b|\bwhat (?:else )?(?:goes|would go) down\b/,
  },
  {
    intent: 'neighbours',
    pattern: /\b(?:connected|attached|linked|wired) to\b|\bneighbou?rs?\b|\bconnections of\b/,
  },
  {
    intent: 'incident',
    pattern:
      /\b(?:incidents?|outages?|last night|overnight|what happened|alerts?|alarms? (?:fired|went off)|paged|pager|firing|fired|5xx|downtime|sev ?\d|on fire|(?:is )?anything (?:down|broken|burning)|(?:are|is) we down|5\d\d|50x|errors?|error rates?|latency|timeouts?|timing out|slow(?:ness|down)?|root cause|why did)\b/,
  },
  {
    intent: 'changes',
    pattern:
      /\b(?:chang\w*|drift\w*|modifi\w*|who (?:did|touched|made|created|deleted|added|removed|updated|edited|launched|terminated|opened|closed|allowed|granted|authori[sz]ed|revoked|enabled|disabled|attached|detached|started|stopped|resized|deployed|rotated|made)|cloudtrail|audit trail|what(?:'s| is) new|since yesterday)\b|\bwho\s+(?!owned\b|used\b|needed\b)[a-z]+ed\b|\b(?:did|has|have|had)\s+(?:anyone|anybody|someone|somebody|any ?one|people)\b|\b(?:were|was|have been|has been|got)\s+(?:\w+\s+){0,2}(?:deleted|removed|terminated|created|added|launched|modified|updated)\b|\bwhat (?:did|has|have) [a-z][\w.-]* (?:do|done|been doing|touch\w*|modif\w*|delet\w*|creat\w*|updat\w*|edit\w*|launch\w*|terminat\w*)\b/,
  },
  {
    intent: 'costs',
    pattern:
      /\b(?:costs? (?:us )?the most|most expensive|priciest|costliest|biggest (?:cost|spend|bill)\w*|top (?:costs?|spend)|spend(?:ing)?|our bill|cost breakdown|how much (?:do|does|are|is|did|have)\b.*\b(?:pay\w*|spend\w*|spent|cost\w*)|what do(?:es)?\b.*\bcost|costs? of|what do we (?:pay|spend)|(?:we|i) (?:pay|spend) (?:for|on)|paying for)\b/,
  },
  {
    intent: 'savings',
    pattern:
      /\b(?:sav(?:e|es|ing|ings)|wast\w*|cheaper|(?:reduc\w*|lower\w*|cut\w*|trim\w*|shrink\w*|slash\w*|decreas\w*|bring down)(?: (?:the|our|my|this))?(?: (?:aws|cloud|monthly|infra(?:structure)?))? (?:costs?|bills?|spend\w*)|optimi[sz]\w*|recommendations?|right-?siz\w*|idle|underutili[sz]\w*|over-?provision\w*|quick wins?)\b/,
  },
  { intent: 'count', pattern: /\bhow many\b|\bnumber of\b|\bcount (?:of|the)\b/ },
  {
    intent: 'resource',
    pattern:
      /\b(?:wrong|problems?|issues?|going on) with\b|\bstatus of\b|\bhealth of\b|\btell me (?:more )?about\b|\bmore about\b|\bdetails? (?:of|on|for|about)\b|\bdescribe\b|\blook (?:at|up)\b|\bwho is\b|\bis\b.+\b(?:ok|okay|healthy|fine|safe|secure|alright)\b/,
  },
  {
    intent: 'open',
    pattern:
      /\b(?:open|findings?|issues?|problems?|risks?|vulnerab\w*|wrong|outstanding|backlog|to ?do|broken|misconfigur\w*|summar\w*|overview|posture|how are we doing|state of|needs? (?:our |my )?attention|priorit\w*|most urgent|urgent|most important|worry about|focus on|concerns?|riskiest|most at risk|most dangerous|biggest (?:risk|threat|problem)s?)\b/,
  },
  { intent: 'help', pattern: /^(?:hi|hello|hey|help|thanks?|thank you)\b|\bwhat can you (?:do|answer)\b/ },
];

export const SAVINGS_WORD =
  /\b(?:sav(?:e|es|ed|ing|ings)|cheaper|(?:reduc\w*|lower\w*|cut\w*|trim\w*|slash\w*|decreas\w*) (?:(?:the|our|my) )?(?:(?:aws|cloud|monthly) )?(?:costs?|bills?|spend\w*)|wast\w*)\b/;
const SUPERLATIVE =
  /\b(?:most|biggest|largest|greatest|highest|top|best|maximum|max|single|first|priorit\w*|quickest|fastest|easiest)\b/;

const DOMAIN_PATTERNS: Array<[Domain, RegExp]> = [
  ['finops', /\b(?:finops|cost|costs|costly|money|spend\w*|wast\w*|billing|savings?)\b/],
  ['security', /\b(?:security|secure|insecure|exposures?|exposed|vulnerab\w*|sec)\b/],
  ['sre', /\b(?:sre|reliab\w*|resilien\w*|availability|uptime|durab\w*)\b/],
];

const SEVERITY_WORD = /\b(critical|high|medium|low|info)\b(?!-(?!severity\b|sev\b|priority\b|risk\b))/g;

/** Words that never name a service, an account or a resource by themselves. */
const NOT_A_NAME = new Set(
  (
    'a an the this that these those which what each every any our my your their its of for on in to with ' +
    'and or is are was were be tag tags tagged name named called id ids all some other same one ones aws ' +
    'cloud root service services account accounts resource resources finding findings open has have had ' +
    'do does did can could should would will per by from at as it be been there here who how why when ' +
    'where most least more less top new old whole entire main about into over under'
  ).split(' '),
);

function severityOf(lower: string): Severity | undefined {
  for (const m of lower.matchAll(SEVERITY_WORD)) {
    const after = lower.slice((m.index ?? 0) + m[0].length);
    const before = lower.slice(0, m.index ?? 0);
    if (
      /^\s*(?:-|\s)?(?:severity|sev|ones?|findings?|issues?|problems?|risks?|priority|items?|and|or|only)\b/.test(
        after,
      ) ||
      /^\s*[?!.,]*\s*$/.test(after) ||
      /\bseverity\s*(?:of|is|=|:)?\s*$/.test(before)
    )
      return m[1] as Severity;
  }
  return undefined;
}

function domainOf(lower: string): Domain | undefined {
  const hits = DOMAIN_PATTERNS.filter(([, re]) => re.test(lower)).map(([d]) => d);
  return hits.length === 1 ? hits[0] : undefined;
}

const NAME = `["'\`]?([a-z0-9][\\w.-]*[a-z0-9]|[a-z0-9])["'\`]?`;

function serviceOf(raw: string): string | undefined {
  const patterns = [
    new RegExp(`\\bservice\\s*[=:]\\s*${NAME}`, 'i'),
    new RegExp(`\\btagged\\s+(?:with\\s+)?(?:service\\s*[=:]?\\s*)?${NAME}`, 'i'),
    new RegExp(`\\b${NAME}\\s+service\\b`, 'i'),
    // "service payments" only when the name ends the phrase ("service save money" names no service).
    new RegExp(`\\bservices?\\s+(?:called\\s+|named\\s+)?${NAME}(?=\\s*(?:[?.!,;]|$|\\s(?:and|or)\\b))`, 'i'),
  ];
  for (const re of patterns) {
    for (const m of raw.matchAll(new RegExp(re.source, 'gi'))) {
      const name = m[1]!;
      if (!NOT_A_NAME.has(name.toLowerCase())) return name;
    }
  }
  return undefined;
}

function accountOf(raw: string): string | undefined {
  const id = /\b(\d{12})\b/.exec(raw);
  if (id) return id[1];
  for (const re of [
    new RegExp(`\\baccount\\s+(?:called\\s+|named\\s+)?${NAME}`, 'gi'),
    new RegExp(`\\b${NAME}\\s+account\\b`, 'gi'),
  ]) {
    for (const m of raw.matchAll(re)) {
      const name = m[1]!;
      if (!NOT_A_NAME.has(name.toLowerCase()) && !/^(?:ids?|numbers?|level)$/i.test(name)) return name;
    }
  }
  return undefined;
}

const WORD_NUMBERS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  seven: 7,
  fourteen: 14,
};

function daysOf(lower: string): number | undefined {
  const n = /\b(?:last|past|previous)\s+(\d{1,2}|one|two|three|four|five|seven|fourteen)\s+days?\b/.exec(
    lower,
  );
  if (n) return Math.min(30, Math.max(1, Number(n[1]) || WORD_NUMBERS[n[1]!] || 1));
  const h = /\b(?:last|past)\s+(\d{1,3})\s+hours?\b/.exec(lower);
  if (h) return Math.min(30, Math.max(1, Math.ceil(Number(h[1]) / 24)));
  if (/\b(?:last|past|this|previous) (?:week|seven days)\b|\bweek\b/.test(lower)) return 7;
  if (/\b(?:last|past|this|previous) month\b/.test(lower)) return 30;
  if (/\b(?:yesterday|last night|overnight|today|last day|tonight|this morning)\b/.test(lower)) return 1;
  if (/\b(?:recent(?:ly)?|lately|of late|these days)\b/.test(lower)) return 7;
  return undefined;
}

const ORDINALS: Record<string, number> = {
  first: 0,
  '1st': 0,
  second: 1,
  '2nd': 1,
  third: 2,
  '3rd': 2,
  fourth: 3,
  '4th': 3,
  fifth: 4,
  '5th': 4,
  top: 0,
  last: -1,
};

function referenceOf(lower: string): Reference | undefined {
  const ord =
    /\b(first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last|top)\s+(?:one|item|finding|resource|of (?:those|these|them)|on (?:the|that) list)\b/.exec(
      lower,
    ) ?? /\bthe (first|second|third|fourth|fifth|last)\b/.exec(lower);
  if (ord) return { kind: 'ordinal', index: ORDINALS[ord[1]!]! };
  const numbered = /(?:#|\bnumber\s+|\bitem\s+)(\d{1,2})\b/.exec(lower);
  if (numbered) return { kind: 'ordinal', index: Number(numbered[1]) - 1 };
  if (/\b(?:it|its|it's|that one|this one|that|this|them|those|these|the same)\b/.test(lower))
    return { kind: 'pronoun' };
  return undefined;
}

/** The words after the intent's verb that name what the question is about. */
const TARGET_PATTERNS: RegExp[] = [
  /\b(?:what|which\s+\w+)\s+(?:does|do|is|are)\s+(\S.*?)\s+(?:depend(?:s|ing)?|rel(?:y|ies|ying)|built)\s+(?:on|upon)\s*[?.!]*$/i,
  /\b(?:wrong|problems?|issues?|going on) with\s+(.+)/i,
  /\bblast radius\s+(?:of|for|on)\s+(.+)/i,
  /\b(.+?)(?:'s)?\s+blast radius\b/i,
  /\b(?:depends?|relies|rely|relying|depending) on\s+(.+)/i,
  /\bdependents?\s+(?:of|for|on)\s+(.+)/i,
  /\bdownstream of\s+(.+)/i,
  /\bif\s+(?:we\s+)?(?:lose|lost)\s+(.+)/i,
  /\bif\s+(?:someone|somebody|anyone|we|they|you)\s+(?:revokes?|deletes?|removes?|disables?|drops?|detaches?|terminates?|kills?|stops?|breaks?|loses?|deprovisions?)\s+(.+)/i,
  /\b(?:if|when|once|should|in case)\s+(.+?)\s+(?:fails?|failed|goes down|went down|(?:is|was|were|gets|got) (?:deleted|removed|terminated|lost)|dies|died|is down|stops|stopped|crash(?:es|ed)?|(?:goes|went|is|was|were) (?:offline|unavailable|unreachable|away))\b/i,
  /\b(?:impact|effect|consequences?) of (?:losing|an? (?:outage|failure|loss) (?:of|on|in))\s+(.+)/i,
  /\b(?:losing|loss of|outage of|failure of)\s+(.+?)\s+(?:break|affect|impact|take down)\w*\b/i,
  /\b(?:what|which\s+\w+)\s+(?:does|do|is|are)\s+(\S.*?)\s+(?:depend(?:s|ing)?|rel(?:y|ies|ying)|built)\s+(?:on|upon)\s*[?.!]*$/i,
  /\b(?:delete|remove|terminate|decommission|shut ?down|turn off|retire)\s+(.+)/i,
  /\b(?:what|which)(?:'s| is| are)?\s+(?!(?:is|are|was|were|else)\s)(.+?)\s+(?:connected|attached|linked|wired) to\b/i,
  /\b(?:connected|attached|linked|wired) to\s+(.+)/i,
  /\b(?:neighbou?rs?|connections) (?:of|for)\s+(.+)/i,
  /\b(?:fix|remediate|resolve|mitigate|fixing)\s+(.+)/i,
  /\bwhat should (?:i|we) do (?:about|with|for)\s+(.+)/i,
  /\b(?:status|health|details?) (?:of|on|for|about)\s+(.+)/i,
  /\b(?:tell me (?:more )?about|more about|describe|look (?:at|up)|who is)\s+(.+)/i,
  /\b(?:what does|how much does|how much is)\s+(.+?)\s+cost\b/i,
  /\bis\s+(.+?)\s+(?:ok|okay|healthy|fine|safe|secure|alright)\b/i,
  /\b(?:learn(?:ed|t)?|lessons?|know)\s+(?:about|from|on|for)\s+(.+)/i,
  /\b(?:run ?books?|playbooks?)\s+(?:for|on|about|to)\s+(.+)/i,
  /\b(?:incident|outage)\s+(?:on|in|with|of|for|at)\s+(.+)/i,
  /\b(?:who|what)\s+(?:[a-z]+ed(?:\s+(?:off|on|up|down|out))?)\s+(?!(?:on|in|to|at|for|since|over|during|this|last|past|recently|yesterday|today|it|that|them)\b)(.+)/i,
  /\bchanges?\s+(?:to|on|of|in|for)\s+(.+)/i,
  /\b(?:about|on|for|in)\s+(.+)/i,
];

const TRAILING =
  /\s*(?:\b(?:right now|now|today|please|then|again|at the moment|currently|the most)\b\s*)+$/i;

function cleanTarget(text: string): string | undefined {
  let t = text
    .replace(/[?!.,;:]+(\s|$)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  t = t.replace(TRAILING, '').trim();
  t = t.replace(/^(?:the|our|my|this|that|a|an)\s+/i, '').trim();
  t = t.replace(/^["'`]|["'`]$/g, '');
  return t.length ? t : undefined;
}

function targetOf(raw: string): string | undefined {
  for (const re of TARGET_PATTERNS) {
    const m = re.exec(raw);
    if (m?.[1]) {
      const t = cleanTarget(m[1]);
      if (t) return t;
    }
  }
  return undefined;
}

/**
 * Earlier prompts are read again on every turn of a session (the follow-up chain, ./history): their
 * readings are kept, the most recent few hundred, and each caller gets its own copy to refine.
 */
const READ = new Map<string, Parsed>();
const READ_MAX = 500;

/** Reads a prompt (see the module comment); linear in its length (./text readablePrompt). */
export function parsePrompt(prompt: string): Parsed {
  let parsed = READ.get(prompt);
  if (parsed) {
    READ.delete(prompt);
  } else {
    parsed = readPrompt(prompt);
    if (READ.size >= READ_MAX) READ.delete(READ.keys().next().value!);
  }
  READ.set(prompt, parsed);
  return {
    ...parsed,
    facets: { ...parsed.facets },
    ids: parsed.ids.map((i) => ({ ...i })),
    checks: [...parsed.checks],
    reference: parsed.reference && { ...parsed.reference },
  };
}

function readPrompt(prompt: string): Parsed {
  const raw = readablePrompt(prompt);
  const lower = raw.toLowerCase();
  let intent: Intent = INTENTS.find((i) => i.pattern.test(lower))?.intent ?? 'unknown';
  const ids = idsIn(raw);
  const checks = [...lower.matchAll(CHECK_RE)].map((m) => m[0]);
  // "Which change would save us the most?", "what fix saves the most money?": the largest savings, asked
  // with another verb in the way; a pick from an earlier list is a follow-up and stays one.
  if (
    SAVINGS_WORD.test(lower) &&
    SUPERLATIVE.test(lower) &&
    ['changes', 'fix', 'open', 'resource', 'costs', 'unknown', 'count'].includes(intent) &&
    !ids.length &&
    !checks.length
  )
    intent = 'savings';
  // "Is prod-payments-db backed up?", "does sg-web allow SSH?": a yes/no question about one named resource.
  const yesNo = /^(?:is|are|does|do|has|have|can|was)\s+(?:the\s+)?([a-z0-9]+(?:[-_.][a-z0-9]+)+)\b/i.exec(
    raw,
  );
  let forcedTarget: string | undefined;
  if (intent === 'unknown' && yesNo && !checks.length) {
    intent = 'resource';
    forcedTarget = yesNo[1];
  }
  // "how many findings are open" is a question about findings, not about the inventory.
  if (intent === 'count' && /\b(?:findings?|issues?|problems?|open)\b/.test(lower)) intent = 'open';
  // A finding named by id or check, without another intent, is a question about that finding.
  if (
    (intent === 'unknown' || intent === 'open' || intent === 'resource') &&
    (checks.length || ids.some((i) => i.kind === 'finding'))
  )
    intent = 'finding';
  // A resource named by id or ARN, without another intent, is a question about that resource.
  if ((intent === 'unknown' || intent === 'open') && ids.length && !checks.length) intent = 'resource';
  let pick: Parsed['pick'];
  if (intent === 'pick') {
    if (/\b(?:sav(?:e|es|ing|ings))\b/.test(lower)) pick = 'savings';
    else if (/\b(?:severe|urgent|worst|critical|dangerous|risky|riskiest)\b/.test(lower)) pick = 'severe';
    else pick = 'expensive';
  }
  const incidentName =
    /\bincident\s+(?:#\s*|id\s+|number\s+)?([a-z]+-\d+|\d+|#\d+)\b/i.exec(raw)?.[1] ??
    /\b(inc-?\d+)\b/i.exec(raw)?.[1];
  return {
    prompt: raw,
    intent,
    facets: {
      domain: domainOf(lower),
      severity: severityOf(lower),
      service: serviceOf(raw),
      account: accountOf(raw),
    },
    target: forcedTarget ?? targetOf(raw),
    ids,
    checks,
    days: daysOf(lower),
    sortBySavings: /\b(?:by savings|sav(?:e|es|ing|ings) the most|most savings|biggest savings)\b/.test(
      lower,
    ),
    limit: (() => {
      const n = /\b(?:top|first|show(?: me)?)\s+(\d{1,2})\b/.exec(lower);
      return n ? Math.min(50, Math.max(1, Number(n[1]))) : undefined;
    })(),
    pick,
    reference: referenceOf(lower),
    continues:
      /^(?:and|also|plus|what about|how about|same (?:for|but|with)|only|just|now|then|ok(?:ay)?,? (?:and|what about)|but)\b/.test(
        lower,
      ),
    incidentName,
  };
}

/** Whether a target phrase is only filter words (a domain, a severity, "ones", "findings"…). */
export function isOnlyFacets(target: string | undefined, facets: Facets = {}): boolean {
  if (!target) return true;
  let lower = target.toLowerCase();
  for (const v of [facets.service, facets.account]) if (v) lower = lower.split(v.toLowerCase()).join(' ');
  const rest = lower
    .replace(
      /\b(?:finops|cost|costs|money|security|sre|reliability|resilience|availability|critical|high|medium|low|info|severity|sev|ones?|findings?|issues?|problems?|risks?|items?|only|open|all|them|the|of|with|and|or|domain|priority|account|service|side|part|area|front|stuff|things?|anything|something|should|look|at|i|we|me|you|to|need|needs|want|see|check|worth|right|now|currently|today|please|can|could|any|there|are|is|what|which|show|list|give|tell|get|our|my|your|on|in|for|about|regarding|attention|looking|into)\b/g,
      ' ',
    )
    .trim();
  return rest.length === 0;
}

/** Whether a target phrase is a pronoun or an ordinal ("it", "that one", "the first one"). */
export function isReferenceOnly(target: string | undefined): boolean {
  if (!target) return true;
  return /^(?:it|its|that|this|them|those|these|that one|this one|the same|same|(?:the )?(?:first|second|third|fourth|fifth|last|top|1st|2nd|3rd|4th|5th)(?: one| item| finding| resource)?(?: of (?:those|these|them))?|#\d+|number \d+|item \d+)$/i.test(
    target.trim(),
  );
}
