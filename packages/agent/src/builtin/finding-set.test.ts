import { describe, expect, it } from 'vitest';
import { findingSetOf, moneyOf } from './finding-set';
import { wordsMatch } from './text';
import { resolveRequest } from './history';

const securityList = [
  { role: 'user' as const, content: 'Which security findings are open on the payments service?' },
  {
    role: 'assistant' as const,
    content: [
      'There are 2 open security findings on resources tagged service=payments.',
      '1. [critical · security] RDS instance prod-payments-db is publicly accessible — finding 11111111-1111-4111-8111-111111111111',
      '2. [high · security] Port 22 open on sg-bastion — finding 22222222-2222-4222-8222-222222222222',
    ].join('\n'),
  },
];
const resourceAnswer = [
  { role: 'user' as const, content: "What's wrong with prod-payments-db?" },
  {
    role: 'assistant' as const,
    content:
      'prod-payments-db is an aws_rds_db_instance.\nIt has 1 open finding:\n1. [critical · security] Every port open to the Internet — finding 33333333-3333-4333-8333-333333333333',
  },
];

describe('which findings a question is about', () => {
  it('names all open findings, or no subset: all of them', () => {
    for (const p of [
      'How much would we save if we fixed all of the open findings?',
      'Total savings if we fix everything that’s open?',
      'What would fixing every open finding save, all together?',
      'How much could we save in total?',
      'What is the overall monthly savings potential across all the open findings?',
      'What would it save to fix all of the open findings, not just these?',
      'If we fixed every finding, by how much would the monthly bill go down?',
    ])
      expect(findingSetOf(p).kind, p).toBe('all');
  });

  it('points back at the previous list, or describes a subset', () => {
    expect(findingSetOf('How much would fixing those save?')).toEqual({ kind: 'prior' });
    expect(findingSetOf('what would fixing them all save in total?')).toEqual({ kind: 'prior' });
    expect(findingSetOf('Add up what deleting all the old EBS snapshots would save.')).toEqual({
      kind: 'described',
      words: ['old', 'ebs', 'snapshots'],
    });
    // Facet words and the named service narrow, they do not describe.
    expect(
      findingSetOf('what would fixing all open security findings on the payments service save?', {
        domain: 'security',
        service: 'payments',
      }),
    ).toEqual({ kind: 'all', explicit: true });
  });

  it('a question that names all open findings takes neither the previous list nor its filters', () => {
    for (const history of [securityList, resourceAnswer]) {
      for (const p of [
        'How much would we save if we fixed all of the open findings?',
        'How much would fixing all open findings save in total?',
        'Total savings if we fix everything that is open?',
        "Across everything that's open, how much money is on the table?",
        'and across all open findings, how much would we save?',
      ]) {
        const r = resolveRequest(p, history);
        expect(r.intent, p).toBe('savings');
        expect(r.set.kind, p).toBe('all');
        // ("savings" reads as the finops domain, which holds every saving; never the list's security.)
        expect(r.facets.domain, p).not.toBe('security');
        expect(r.facets.service, p).toBeUndefined();
        expect(r.reference, p).toBeUndefined();
      }
    }
  });

  it('"them all" after a list that had no room for every finding means the previous question’s set', () => {
    const r = resolveRequest('what would fixing them all save in total?', securityList);
    expect(r).toMatchObject({ intent: 'savings', set: { kind: 'all' } });
    expect(r.facets).toMatchObject({ domain: 'security', service: 'payments' });
    // …while a pick stays a pick among the listed items.
    expect(resolveRequest('which of those is the most urgent?', securityList).intent).toBe('pick');
  });

  it('words asking for a total that name no set and point back at nothing name every open finding', () => {
    for (const p of ['and altogether?', 'Overall, how many do we have open?', 'in all, how many are open?'])
      expect(findingSetOf(p), p).toEqual({ kind: 'all', explicit: true });
    // Pointing back still wins: "those … in total" is the previous list's total.
    expect(findingSetOf('what do those come to in total?')).toEqual({ kind: 'prior' });
    expect(findingSetOf('How much would we save?')).toEqual({ kind: 'all', explicit: false });
  });

  it('an elliptical total after a narrowed list asks the previous question about everything', () => {
    for (const p of ['and altogether?', 'And how many are open overall?', 'and in total, how many?']) {
      const r = resolveRequest(p, securityList);
      expect(r.intent, p).toBe('open');
      expect(r.facets, p).toEqual({});
      expect(r.target === undefined || r.understoodAs !== undefined, p).toBe(true);
    }
  });

  it('an elliptical supposed fix carries the previous kind of question; a fix asked for does not', () => {
    const savings = [
      { role: 'user' as const, content: 'What would removing the old snapshots save?' },
      { role: 'assistant' as const, content: 'Fixing these 4 findings would save $96.80 a month in total.' },
    ];
    for (const p of [
      'And if we were to fix every open finding?',
      'what about fixing everything that is open?',
    ])
      expect(resolveRequest(p, savings), p).toMatchObject({ intent: 'savings', set: { kind: 'all' } });
    expect(resolveRequest('and how do I fix every open finding?', savings).intent).not.toBe('savings');
  });

  it('ordinary words around a reference or a subset do not read as its description', () => {
    expect(findingSetOf('How much would fixing both of them save?')).toEqual({ kind: 'prior' });
    expect(findingSetOf('How much of that comes from them?')).toEqual({ kind: 'prior' });
    expect(findingSetOf('How much would we get back by deleting the unattached EBS volumes?')).toEqual({
      kind: 'described',
      words: ['unattached', 'ebs', 'volumes'],
    });
    expect(findingSetOf('Counting every open finding, how many are there?')).toEqual({
      kind: 'all',
      explicit: true,
    });
  });

  it('reads which money an amount is about, or takes the previous question’s', () => {
    expect(moneyOf('what would deleting the old snapshots save?')).toBe('savings');
    expect(moneyOf('how much would releasing the unused elastic ips bring?')).toBe('savings');
    expect(moneyOf('how much do the databases cost?')).toBe('cost');
    expect(moneyOf('how much of that comes from the unattached volumes?')).toBeUndefined();
    const total = [
      { role: 'user' as const, content: 'How much could we save in total each month?' },
      { role: 'assistant' as const, content: 'Fixing the open findings could save $902.80 a month.' },
    ];
    const r = resolveRequest('How much of that comes from the unattached volumes?', total);
    expect(r).toMatchObject({
      money: 'savings',
      set: { kind: 'described', words: ['unattached', 'volumes'] },
    });
    const costs = [
      { role: 'user' as const, content: 'What do our databases cost a month?' },
      { role: 'assistant' as const, content: 'They cost $900.00 a month.' },
    ];
    expect(resolveRequest('how much of that is the old ones?', costs).money).toBe('cost');
  });

  it('matches a word and its plural, short ones included', () => {
    expect(wordsMatch('ips', 'ip')).toBe(true);
    expect(wordsMatch('eip', 'eips')).toBe(true);
    expect(wordsMatch('ip', 'iops')).toBe(false);
  });

  it('a count over the previous list counts the previous question’s findings, narrowed', () => {
    expect(resolveRequest('How many of them are critical?', securityList)).toMatchObject({
      intent: 'open',
      facets: { domain: 'security', service: 'payments', severity: 'critical' },
      set: { kind: 'all' },
    });
    // "in total" after a pointer back is still the list's count, not every open finding's.
    expect(resolveRequest('and how many of those are there in total?', securityList)).toMatchObject({
      intent: 'open',
      facets: { domain: 'security', service: 'payments' },
    });
    // A count of a kind of resource is not about the list.
    expect(resolveRequest('how many instances do we run?', securityList).intent).toBe('count');
  });
});
