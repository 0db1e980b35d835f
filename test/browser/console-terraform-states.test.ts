/// <reference lib="dom" />
// The console's Settings page shows each connected Terraform state: its source, serial, last read,
// and the resource types it skipped, as GET /api/v1/marketplace/tenant/tools answers them. Real API,
// cloned database, real Redis and Debian's headless Chromium; the states are raw terraform.tfstate files.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { RunningApi } from '@opsi/api';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import {
  call,
  createTenantWithUser,
  createTestContext,
  mintTestToken,
  startTestApi,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { launchChromium } from '../support/chromium';
import { open, signIn, type ConsolePage, type ConsoleWorld } from './console-setup';

const state = (serial: number, resources: unknown[]) =>
  JSON.stringify({ version: 4, terraform_version: '1.9.5', serial, lineage: 'l', outputs: {}, resources });
const vpc = {
  mode: 'managed',
  type: 'aws_vpc',
  name: 'main',
  instances: [
    {
      schema_version: 1,
      attributes: {
        id: 'vpc-0a1',
        arn: 'arn:aws:ec2:eu-west-1:123456789012:vpc/vpc-0a1',
        tags: { Name: 'main' },
      },
    },
  ],
};
const zone = {
  mode: 'managed',
  type: 'aws_route53_zone',
  name: 'z',
  instances: [{ attributes: { id: 'Z1' } }],
};

describe('the Terraform states on the console’s Settings page', () => {
  let t: TestContext;
  let api: RunningApi;
  let browser: Browser;
  let member: TestMember;
  let dir: string;
  let cp: ConsolePage;

  beforeAll(async () => {
    t = await createTestContext();
    member = await createTenantWithUser(t, { tier: 'team' });
    dir = await mkdtemp(join(tmpdir(), 'opsi-tf-console-'));
    await writeFile(join(dir, 'network.tfstate'), state(17, [vpc, zone, zone]));
    await writeFile(join(dir, 'empty.tfstate'), state(3, []));
    for (const f of ['network.tfstate', 'empty.tfstate'])
      await connectEnvironment(t.db, member.tenant.id, { kind: 'terraform_state', file: join(dir, f) });
    await runScan(t.db, (await requestScan(t.db, null, member.tenant.id, 'test')).id, { detect: null });
    api = await startTestApi(t);
    browser = await launchChromium();
    cp = await signIn({ browser, base: api.url } as ConsoleWorld, member);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lists each state with the API’s source, serial, last read and skipped types', async () => {
    const token = (await mintTestToken(t, member, 'read')).token;
    const res = await call(api.url, 'GET', '/api/v1/marketplace/tenant/tools', { token });
    const states = res.body.tools.find((x: { id: string }) => x.id === 'terraform_state').settings.states;
    expect(states.map((s: { source: string; serial: number }) => [s.source, s.serial])).toEqual([
      [join(dir, 'network.tfstate'), 17],
      [join(dir, 'empty.tfstate'), 3],
    ]);

    await open(cp.page, '#/settings');
    const rows = cp.page.locator('[data-table=terraform-states] tbody tr');
    expect(await rows.count()).toBe(2);
    const cells = (i: number) => rows.nth(i).locator('td').allTextContents();
    const [network, empty] = [await cells(0), await cells(1)];
    expect(network.slice(0, 2)).toEqual([join(dir, 'network.tfstate'), '17']);
    expect(network[2]).not.toBe('–');
    expect(network.slice(3)).toEqual(['1 of 3 managed', 'aws_route53_zone ×2']);
    expect(empty.slice(0, 2)).toEqual([join(dir, 'empty.tfstate'), '3']);
    expect(empty.slice(3)).toEqual(['0 of 0 managed', 'none']);
    expect(cp.problems).toEqual([]);
  });
});
