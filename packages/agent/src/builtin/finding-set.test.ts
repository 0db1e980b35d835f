import { describe, expect, it } from 'vitest';
import { findingSetOf } from './finding-set';
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
});
