import type { ConversationMessage } from './engine';
import { resolveRequest } from './builtin/history';
import { INTENTS } from './builtin/parse';
import { scopeOf } from './builtin/scope';

/**
 * Pathological prompts for the built-in engine's parser (issue 24), for the linearity test and the
 * hostile drill's fuzzing pass: long runs of what its patterns backtrack on (whitespace of every kind,
 * the words its patterns start or end with, id-like chains, quotes and punctuation), and seeded random
 * mixes of its own vocabulary. Deterministic for a seed.
 */

/** Units repeated to length: each is what some family of patterns matches again and again. */
const UNITS = [
  ' ',
  '\t',
  '\n',
  '\u00a0',
  '\u2003',
  'a ',
  'a-',
  'a.',
  'a_',
  '-',
  "'",
  '"a',
  '`a ',
  'x',
  '1',
  '0-',
  'is ',
  'if x ',
  'what ',
  'which a ',
  'what is ',
  'the ',
  'service ',
  'account ',
  'tagged ',
  'who ',
  'fix ',
  'losing x ',
  'if we lose ',
  'when was ',
  'tenant ',
  'ignore ',
  'incident ',
  'sg-',
  'arn:aws:',
  'i-0123456789abcdef0 ',
  'finops.',
  'security.a_',
  '#1 ',
  'a.b-c_',
  'and ',
  'depends on ',
  'connected to ',
  'blast radius ',
  "'s ",
];

/** Words of the engine's own patterns: literal words of its intent table, for the random mixes. */
function vocabulary(): string[] {
  const words = new Set<string>();
  for (const { pattern } of INTENTS)
    for (const m of pattern.source.matchAll(/[a-z][a-z' -]{1,20}[a-z]/g))
      for (const w of m[0].split(/\s+/)) if (w.length > 1) words.add(w);
  for (const w of ['the', 'what', 'which', 'is', 'are', 'of', 'on', 'service', 'account', 'all', 'open'])
    words.add(w);
  return [...words];
}

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/** The pathological prompts of `length` characters: every unit repeated, then `mixes` random mixes. */
export function pathologicalPrompts(
  length: number,
  seed = 1,
  mixes = 8,
): Array<{ what: string; prompt: string }> {
  const out: Array<{ what: string; prompt: string }> = [];
  const fill = (unit: string) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
  for (const unit of UNITS) {
    out.push({ what: `${JSON.stringify(unit)}×n`, prompt: fill(unit) });
    // Bracketed by a question's opening and close, so the patterns that need them get that far.
    out.push({
      what: `what ${JSON.stringify(unit)}×n ?`,
      prompt: `what ${fill(unit).slice(0, Math.max(0, length - 7))} ?`,
    });
  }
  const words = vocabulary();
  const next = rng(seed);
  const seps = [' ', '  ', '-', '.', ', ', '\t', "'s ", ' the '];
  for (let i = 0; i < mixes; i++) {
    let p = '';
    while (p.length < length)
      p += words[Math.floor(next() * words.length)]! + seps[Math.floor(next() * seps.length)]!;
    out.push({ what: `mix #${i + 1} (seed ${seed})`, prompt: p.slice(0, length) });
  }
  return out;
}

/**
 * What the built-in engine reads of a turn before any tool: the scope check and the request, resolved
 * against the conversation (earlier prompts included). For measuring the parser; the engine makes the
 * same two calls.
 */
export function parseTurn(prompt: string, history: ConversationMessage[] = []) {
  return { scope: scopeOf(prompt), request: resolveRequest(prompt, history) };
}
