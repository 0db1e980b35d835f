import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { call, REPO_ROOT } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// Issue 26: every plan of the public corpus (../shared/realworld, provenance in its SOURCES.md) is
// reviewed, and what a reviewer must flag in it is flagged at the stated risk
// (fixtures/plan-corpus-expectations.json, written by reading each plan; every plan has an entry, an
// empty one when it creates or changes nothing a reviewer must flag).

const CORPUS = `${REPO_ROOT}../shared/realworld`;
const present = existsSync(`${CORPUS}/tf-plan-json`) && existsSync(`${CORPUS}/tf-plan-text`);
if (!present) console.warn('plan-review corpus tests skipped: ../shared/realworld is absent');

interface Expectation {
  address: string;
  risk: 'low' | 'medium' | 'high' | 'critical';
  check: string;
  why: string;
}
const EXPECTED = JSON.parse(
  readFileSync(new URL('./fixtures/plan-corpus-expectations.json', import.meta.url), 'utf8'),
) as Record<string, Expectation[]>;

const files = present
  ? ['tf-plan-json', 'tf-plan-text'].flatMap((dir) =>
      readdirSync(`${CORPUS}/${dir}`)
        .sort()
        .map((f) => `${dir}/${f}`),
    )
  : [];

// Tenant A's owner's read_write token reviews every plan.
const it = apiTest;

interface Review {
  resources: Array<{ address: string }>;
  annotations: Array<{ address: string; risk: string; title: string; category: string }>;
  findings: { introduces: Array<{ check_id: string; address: string; severity: string }> };
}

describe.skipIf(!present)('the public plan corpus (../shared/realworld)', () => {
  // The file as a naive client sends it: read as UTF-8 whatever its encoding (UTF-16 files included).
  it.for(files)(
    '%s is reviewed, its annotations on addresses of the plan, its must-flags flagged',
    async (file, { api, aWrite: token }) => {
      const plan = readFileSync(`${CORPUS}/${file}`, 'utf8');
      const res = await call(api.url, 'POST', '/api/v1/plan-review', { token, body: { plan } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const review = res.body as Review;
      const addresses = new Set(review.resources.map((r) => r.address));
      for (const a of review.annotations) expect(addresses, `${a.title}`).toContain(a.address);
      for (const want of EXPECTED[file.split('/')[1]!] ?? []) {
        const got = review.findings.introduces.find(
          (x) => x.address === want.address && x.check_id === want.check,
        );
        expect(got, `${want.address}: ${want.why}`).toBeDefined();
        const annotation = review.annotations.find(
          (a) => a.address === want.address && a.risk === want.risk && a.title.startsWith('Introduces: '),
        );
        expect(annotation, `${want.address}: an annotation at ${want.risk}`).toBeDefined();
        expect(got!.severity, `${want.address}: ${want.why}`).toBe(want.risk);
      }
    },
  );

  it('the expectations name every file of the corpus and only those (an empty list: read, nothing to flag)', () => {
    const names = files.map((f) => f.split('/')[1]!);
    expect(Object.keys(EXPECTED).sort()).toEqual([...names].sort());
  });
});
