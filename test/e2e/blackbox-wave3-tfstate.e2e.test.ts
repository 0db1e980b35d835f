import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenantWithUser, mintTestToken } from '../support/index';
import { runAdmin } from '../support/processes';
import {
  hasRealworld,
  readRealworld,
  realworldFiles,
  realworldPath,
  REALWORLD_SKIP,
} from '../support/blackbox-realworld';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of decisions.md "Wave 3", "Terraform state, as users keep it" (issue 26): the
// operator command `env connect --terraform-state FILE` (decisions.md "Operator commands"; README)
// takes a raw terraform.tfstate (versions 3 and 4) or `terraform show -json` output (any format_version
// from 0.1). Every state of ../shared/realworld/tf-state connects, and the command exits by itself with
// --json printing {connection}. For a few states, a scan then holds their EC2 instances, found by id
// through GET /api/v1/graph/search. Real API and worker processes; the command as the operator runs it.

const HAS_CORPUS = hasRealworld('tf-state');
const BOUND_MS = 120_000;

let svc: SplitServices;

/** The EC2 instance ids a state holds: raw v4 (resources[].instances[]), raw v3 (modules[].resources), show -json (values). */
function instanceIds(file: string): string[] {
  const doc = JSON.parse(readRealworld('tf-state', file).toString('utf8'));
  const ids = new Set<string>();
  for (const r of doc.resources ?? [])
    if (r.type === 'aws_instance' && r.mode === 'managed')
      for (const i of r.instances ?? []) if (i.attributes?.id) ids.add(i.attributes.id);
  for (const m of doc.modules ?? [])
    for (const r of Object.values<any>(m.resources ?? {}))
      if (r.type === 'aws_instance' && r.primary?.id) ids.add(r.primary.id);
  const walk = (v: any) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      if (v.type === 'aws_instance' && v.mode === 'managed' && v.values?.id) ids.add(v.values.id);
      Object.values(v).forEach(walk);
    }
  };
  if (doc.values) walk(doc.values);
  return [...ids];
}

beforeAll(async () => {
  if (!HAS_CORPUS) return;
  svc = await startSplitServices();
}, 300_000);

afterAll(async () => {
  await svc?.stop();
});

describe.skipIf(!HAS_CORPUS)(
  'env connect --terraform-state, every state of ../shared/realworld/tf-state',
  () => {
    const files = HAS_CORPUS ? realworldFiles('tf-state') : [];

    it.each(files)(
      '%s: connects; the command exits by itself with 0 and prints one JSON object {connection}',
      async (file) => {
        const m = await createTenantWithUser(svc.t, { tier: 'team' });
        const args = [
          'env',
          'connect',
          '--tenant',
          m.tenant.slug,
          '--terraform-state',
          realworldPath('tf-state', file),
        ];
        const r = await runAdmin(args, svc.env, { timeoutMs: BOUND_MS });
        const what = `${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr.slice(-2000)}`;
        expect(r.timedOut, `did not exit by itself within ${BOUND_MS} ms: ${what}`).toBe(false);
        expect(r.code, what).toBe(0);
        const parsed = JSON.parse(r.stdout.trim()); // one JSON object and nothing else
        expect(parsed, what).not.toHaveProperty('detail');
        expect(parsed.connection, what).toBeTruthy();
        expect(parsed.connection.kind, what).toBe('terraform_state');
      },
      BOUND_MS + 30_000,
    );
  },
);

describe.skipIf(!HAS_CORPUS)(
  'a scan of a connected state holds its EC2 instances (raw v4, raw v3, show -json 0.1)',
  () => {
    const cases = [
      'driftctl-aws_ec2_instance.tfstate',
      '10xdev-launch-ec2-v3.tfstate',
      'infracost-terraform_v0.14_state.json',
    ];

    it.each(cases)(
      '%s: after `scan --wait`, GET /api/v1/graph/search finds each instance by its id',
      async (file) => {
        const ids = instanceIds(file);
        expect(ids.length, `${file} holds EC2 instances`).toBeGreaterThan(0);
        const m = await createTenantWithUser(svc.t, { tier: 'team' });
        const token = (await mintTestToken(svc.t, m, 'read')).token;
        await svc.admin([
          'env',
          'connect',
          '--tenant',
          m.tenant.slug,
          '--terraform-state',
          realworldPath('tf-state', file),
        ]);
        const scan = await svc.admin(['scan', '--tenant', m.tenant.slug, '--wait'], 240_000);
        expect(scan.scan?.status, JSON.stringify(scan)).toBe('completed');
        for (const id of ids) {
          const res = await call(base(), 'GET', `/api/v1/graph/search?q=${encodeURIComponent(id)}&limit=50`, {
            token,
          });
          expect(res.status, res.text).toBe(200);
          expect(
            res.body.results.some((n: any) => n.native_id === id || String(n.arn ?? '').endsWith(id)),
            `${file}: instance ${id} in the inventory: ${res.text.slice(0, 500)}`,
          ).toBe(true);
        }
      },
      300_000,
    );
  },
);

const base = () => svc.base;

if (!HAS_CORPUS) {
  describe('Terraform state, as users keep it', () => {
    it.skip(REALWORLD_SKIP, () => undefined);
  });
}
