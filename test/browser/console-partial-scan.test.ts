/// <reference lib="dom" />
// The console's overview after a partial AWS scan: a tenant connected to an AWS profile whose
// identity IAM refuses everything, scanned against the local AWS peer (AWS's recorded answers), shows
// "partial: N permissions missing" with the IAM actions the API lists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import { startAwsPeer, writePeerProfile, type AwsPeer, type PeerProfile } from '@opsi/test-support/aws-peer';
import { open, signIn, startConsoleWorld, type ConsolePage, type ConsoleWorld } from './console-setup';

let world: ConsoleWorld | undefined;
let peer: AwsPeer | undefined;
let profile: PeerProfile | undefined;
let cp: ConsolePage;

beforeAll(async () => {
  world = await startConsoleWorld();
  peer = await startAwsPeer();
  profile = writePeerProfile(peer.url);
  // The scan runs in this process, as `scan --wait` without REDIS_URL does.
  Object.assign(process.env, profile.env);
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
  profile?.remove();
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
