/// <reference lib="dom" />
// Black-box check of issue 27's console promise, from docs/operations.md ("the console says 'partial: N
// permissions missing'") and docs/api.md (`last_scan.missing_permissions`): an AWS scan where IAM, S3 and
// the other services refuse every call while EC2 answers (our own wire peer, test/support/
// blackbox-aws-peer.ts) completes partial, and the signed-in owner's overview says how many permissions are
// missing and which. Headless Chromium against real API and worker processes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenantWithUser, mintTestToken, type TestMember } from '../support/index';
import { CHROMIUM_ARGS, CHROMIUM_EXECUTABLE } from '../support/chromium';
import { hasRealworld, realworldPath, REALWORLD_SKIP } from '../support/blackbox-realworld';
import { startBlackboxAwsPeer, type BlackboxAwsPeer } from '../support/blackbox-aws-peer';
import { startSplitServices, type SplitServices } from '../support/split';

const HAS_CORPUS = hasRealworld('aws-api/botocore-ec2-describe-instances.xml');

let peer: BlackboxAwsPeer;
let svc: SplitServices;
let ctx: BrowserContext | undefined;
let dir = '';
let m: TestMember;
let missing: string[] = [];

beforeAll(async () => {
  if (!HAS_CORPUS) return;
  peer = await startBlackboxAwsPeer({
    instancesXmlPath: realworldPath('aws-api', 'botocore-ec2-describe-instances.xml'),
    throttle: 0,
  });
  peer.setMode({ ec2AnswersAll: true });
  svc = await startSplitServices({ env: peer.env });
  m = await createTenantWithUser(svc.t, { tier: 'team' });
  await svc.admin([
    'env',
    'connect',
    '--tenant',
    m.tenant.slug,
    '--aws-profile',
    peer.profile,
    '--regions',
    'us-east-1',
  ]);
  const scan = await svc.admin(['scan', '--tenant', m.tenant.slug, '--wait'], 240_000);
  expect(scan.scan?.partial, JSON.stringify(scan)).toBe(true);
  const token = (await mintTestToken(svc.t, m, 'read')).token;
  const ov = await call(svc.base, 'GET', '/api/v1/pulse/overview', { token });
  missing = ov.body.coverage.last_scan.missing_permissions;
  expect(missing.length, ov.text).toBeGreaterThan(0);
  dir = await mkdtemp(join(tmpdir(), 'bb-aws-console-'));
}, 400_000);

afterAll(async () => {
  await ctx?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  await svc?.stop();
  await peer?.close();
});

describe.skipIf(!HAS_CORPUS)('the console after a partial AWS scan', () => {
  it('the overview says "partial: N permissions missing" with N the missing permissions, and names them', async () => {
    ctx = await chromium.launchPersistentContext(dir, {
      executablePath: CHROMIUM_EXECUTABLE,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1366, height: 900 },
    });
    const p = ctx.pages()[0] ?? (await ctx.newPage());
    await p.goto(`${svc.base}/`);
    await p.getByLabel('Email').fill(m.user.email);
    await p.getByLabel('Password').fill(m.password);
    await Promise.all([
      p.waitForURL((u) => u.pathname === '/'),
      p.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await p.goto(`${svc.base}/overview`);
    const banner = p.getByText(new RegExp(`partial: ${missing.length} permissions? missing`, 'i')).first();
    await banner.waitFor({ timeout: 30_000 });
    const text = await p.locator('body').innerText();
    for (const a of missing) expect(text, `${a} on the overview`).toContain(a);
  }, 120_000);
});

if (!HAS_CORPUS) {
  describe('the console after a partial AWS scan', () => {
    it.skip(REALWORLD_SKIP, () => undefined);
  });
}
