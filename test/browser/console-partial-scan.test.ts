/// <reference lib="dom" />
// The console's overview after a partial AWS scan: a tenant connected to an AWS profile whose
// identity IAM refuses everything, scanned against the local AWS peer (AWS's recorded answers), shows
// "partial: N permissions missing" with the IAM actions the API lists.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import { startAwsPeer, type AwsPeer } from '@opsi/test-support/aws-peer';
import { open, signIn, startConsoleWorld, type ConsolePage, type ConsoleWorld } from './console-setup';

let world: ConsoleWorld | undefined;
let peer: AwsPeer | undefined;
let home = '';
let cp: ConsolePage;

beforeAll(async () => {
  world = await startConsoleWorld();
  peer = await startAwsPeer();
  home = mkdtempSync(join(tmpdir(), 'opsi-aws-console-'));
  writeFileSync(
    join(home, 'credentials'),
    '[opsi-peer]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = x\n',
  );
  writeFileSync(join(home, 'config'), '[profile opsi-peer]\nregion = us-west-2\n');
  // The scan runs in this process, as `scan --wait` without REDIS_URL does.
  process.env.AWS_SHARED_CREDENTIALS_FILE = join(home, 'credentials');
  process.env.AWS_CONFIG_FILE = join(home, 'config');
  process.env.AWS_ENDPOINT_URL = peer.url;
  const tenantId = world.member.tenant.id;
  await connectEnvironment(world.t.db, tenantId, {
    kind: 'aws',
    profile: 'opsi-peer',
    regions: ['us-west-2'],
  });
  peer.fail({ service: 'iam', code: 'AccessDenied', status: 403 });
  const scan = await runScan(world.t.db, (await requestScan(world.t.db, null, tenantId, 'test')).id);
  expect(scan.partial).toBe(true);
  cp = await signIn(world, world.member);
}, 240_000);

afterAll(async () => {
  await world?.close();
  await peer?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('the console after a partial AWS scan', () => {
  it('says how many permissions are missing and which IAM actions to add', async () => {
    const o = await world!.apiGet('/api/v1/pulse/overview');
    const missing = o.coverage.last_scan.missing_permissions as string[];
    expect(missing).toEqual(expect.arrayContaining(['iam:ListUsers', 'iam:ListRoles']));
    await open(cp.page, '#/overview');
    expect(await cp.page.locator('[data-figure=last_scan] .value').textContent()).toBe('partial');
    const notice = cp.page.locator('section.card', { has: cp.page.locator('[data-partial-scan]') });
    expect(await notice.locator('h2').textContent()).toBe(`partial: ${missing.length} permissions missing`);
    expect(await notice.locator('[data-missing-permissions]').textContent()).toBe(missing.join('\n'));
    expect(cp.problems).toEqual([]);
  });
});
