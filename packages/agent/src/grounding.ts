/**
 * Grounding: every number and resource or finding id in an answer must appear in what the turn's tools
 * returned. Hand-written because it is specific to our ids (UUIDs, ARNs, AWS native ids) and to how we
 * display numbers (money with two decimals, rounding); no library checks claims against tool output.
 */

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const ARN = /\barn:aws[a-z-]*:[^\s"'`,;)]+/g;
const NATIVE =
  /\b(?:vol|i|sg|snap|eipalloc|nat|subnet|vpc|rtb|igw|lt|ami|eni)-[0-9a-f]{8,17}\b|\bAKIA[0-9A-Z]{16}\b/g;
// ISO dates and times, and list markers, are not claims of quantity.
const NOT_NUMBERS = [/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?\b/g, /^\s*\d+[.)]\s/gm];
const NUMBER = /(?<![\w.-])\$?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w-])|(?<![\w.-])\$?\d+(?:\.\d+)?(?![\w-])/g;

export interface Claims {
  ids: string[];
  numbers: string[];
}

/** The ids and numbers an answer states (a check by text: a number that appears in any output grounds it). */
export function extractClaims(text: string): Claims {
  const ids = new Set<string>();
  let rest = text;
  for (const pattern of [ARN, UUID, NATIVE]) {
    for (const m of rest.matchAll(pattern)) ids.add(m[0].replace(/[.:]+$/, ''));
    rest = rest.replace(pattern, ' ');
  }
  for (const pattern of NOT_NUMBERS) rest = rest.replace(pattern, ' ');
  const numbers = [...rest.matchAll(NUMBER)].map((m) => m[0]);
  return { ids: [...ids], numbers };
}

function collect(value: unknown, numbers: number[], strings: string[]): void {
  if (value === null || value === undefined) return;
  if (typeof value === 'number') numbers.push(value);
  else if (typeof value === 'string') {
    strings.push(value);
    for (const m of value.matchAll(/-?\d+(?:\.\d+)?/g)) numbers.push(Number(m[0]));
    // "18,400,000 items" in a tool's text is the number 18400000, as an answer quoting it writes it.
    for (const m of value.matchAll(/-?\d{1,3}(?:,\d{3})+(?:\.\d+)?/g))
      numbers.push(Number(m[0].replace(/,/g, '')));
  } else if (Array.isArray(value)) {
    numbers.push(value.length);
    for (const v of value) collect(v, numbers, strings);
  } else if (typeof value === 'object') {
    if (value instanceof Date) strings.push(value.toISOString());
    else for (const v of Object.values(value)) collect(v, numbers, strings);
  }
}

export interface GroundingReport {
  grounded: boolean;
  ungroundedIds: string[];
  ungroundedNumbers: string[];
}

/**
 * Checks an answer against the tool outputs of its turn. A number is grounded when some output number
 * shows as it does at the answer's precision (322.5 grounds "$322.50" and "322"); an id when it appears
 * in an output.
 */
export function checkGrounding(answer: string, toolOutputs: unknown[]): GroundingReport {
  const numbers: number[] = [];
  const strings: string[] = [];
  for (const output of toolOutputs) collect(output, numbers, strings);
  const haystack = strings.join('\n');
  const claims = extractClaims(answer);
  const ungroundedIds = claims.ids.filter((id) => !haystack.includes(id));
  const ungroundedNumbers = claims.numbers.filter((text) => {
    const clean = text.replace(/[$,]/g, '');
    const value = Number(clean);
    const decimals = clean.includes('.') ? clean.split('.')[1]!.length : 0;
    const scale = 10 ** decimals;
    // Shown rounded or cut at the answer's precision ("$322" for 322.5 is both "about" and a floor).
    return !numbers.some((n) =>
      [Math.round(n * scale), Math.trunc(n * scale)].some((v) => Math.abs(v / scale - value) < 1e-9),
    );
  });
  return {
    grounded: ungroundedIds.length === 0 && ungroundedNumbers.length === 0,
    ungroundedIds,
    ungroundedNumbers,
  };
}
