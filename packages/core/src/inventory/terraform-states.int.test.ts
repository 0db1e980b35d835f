import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@opsi/db';
import { MAPPED_TERRAFORM_TYPES, SUPPORTED_TERRAFORM_TYPES } from '@opsi/inventory/terraform';
import {
  createTenantWithUser,
  createTestContext,
  REALWORLD_ABSENT,
  realworldPaths,
  type TestContext,
} from '@opsi/test-support';
import { startS3Peer, type S3Peer } from '@opsi/test-support/s3';
import { graphDrift } from '../graph';
import { listTenantTools } from '../integrations';
import { connectEnvironment, requestScan, runScan } from './scans';
import { listTerraformStates } from './terraform-states';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t?.close());

/** Connects, scans (sync only), and answers the tenant's live resources by Terraform address. */
async function scanTenant(tenantId: string) {
  const scan = await requestScan(t.db, null, tenantId, 'test');
  const done = await runScan(t.db, scan.id, { detect: null });
  const rows = await t.db
    .selectFrom('resources')
    .select(['arn', 'type', 'native_id', 'attributes'])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .execute();
  return { scan: done, rows };
}

interface Instance {
  address: string;
  type: string;
  /** What the object is in AWS: its id (or ARN), the same whichever address names it. */
  identity: string;
}

/**
 * Every managed, current (not deposed) instance of a state, read straight from the file: a second
 * reader written for the test, so the expectation does not come from the connector under test.
 */
function managedInstances(doc: any): Instance[] {
  const out: Instance[] = [];
  const key = (k: unknown) =>
    k === undefined || k === null ? '' : typeof k === 'number' ? `[${k}]` : `[${JSON.stringify(k)}]`;
  const identity = (type: string, v: any, fallback: string) => `${type}|${v?.id || v?.arn || fallback}`;
  if (doc.version === 4) {
    for (const r of doc.resources) {
      if (r.mode !== 'managed') continue;
      for (const i of r.instances) {
        if (i.deposed) continue;
        const address = `${r.module ? `${r.module}.` : ''}${r.type}.${r.name}${key(i.index_key)}`;
        out.push({ address, type: r.type, identity: identity(r.type, i.attributes, address) });
      }
    }
  } else if (doc.version === 3) {
    for (const m of doc.modules) {
      const mod = m.path
        .slice(1)
        .map((p: string) => `module.${p}.`)
        .join('');
      for (const [k, r] of Object.entries<any>(m.resources)) {
        if (k.startsWith('data.') || !r.primary) continue;
        const [type, name, index] = k.split('.');
        const address = `${mod}${type}.${name}${index === undefined ? '' : `[${index}]`}`;
        out.push({
          address,
          type: r.type,
          identity: identity(r.type, { id: r.primary.id, ...r.primary.attributes }, address),
        });
      }
    }
  } else {
    const walk = (m: any) => {
      for (const r of m?.resources ?? [])
        if (r.mode === 'managed' && !r.deposed_key)
          out.push({ address: r.address, type: r.type, identity: identity(r.type, r.values, r.address) });
      for (const c of m?.child_modules ?? []) walk(c);
    };
    walk(doc.values?.root_module);
  }
  return out;
}

const corpus = realworldPaths('tf-state');

describe.skipIf(!corpus)(
  `every real-world state connects and scans whole (${corpus ? 'tf-state' : REALWORLD_ABSENT})`,
  () => {
    it.each((corpus ?? []).map((f) => [basename(f), f]))('%s', async (_name, file) => {
      const raw = JSON.parse(readFileSync(file, 'utf8'));
      const member = await createTenantWithUser(t);
      const tenantId = member.tenant.id;
      await connectEnvironment(t.db, tenantId, { kind: 'terraform_state', file });
      const { scan, rows } = await scanTenant(tenantId);
      expect(scan.status).toBe('completed');

      const all = managedInstances(raw);
      const modelled = all.filter((i) => MAPPED_TERRAFORM_TYPES.includes(i.type));
      const held = new Map(rows.map((r) => [String(r.attributes.terraform_address), r]));
      // Each modelled object is held once: under its address, or under another address naming the
      // same object (two modules reading one default VPC are one VPC).
      const groups = new Map<string, string[]>();
      for (const i of modelled) groups.set(i.identity, [...(groups.get(i.identity) ?? []), i.address]);
      for (const [id, addresses] of groups) {
        const present = addresses.filter((a) => held.has(a));
        expect(present, `${id} (${addresses.join(', ')})`).toHaveLength(1);
      }
      const ownRows = rows.filter((r) => modelled.some((i) => i.address === r.attributes.terraform_address));
      expect(ownRows).toHaveLength(groups.size);

      // The connection says what it read and what it left out; an empty state is an honest zero.
      const unsupported: Record<string, number> = {};
      for (const i of all)
        if (!SUPPORTED_TERRAFORM_TYPES.includes(i.type)) unsupported[i.type] = (unsupported[i.type] ?? 0) + 1;
      const [state] = await listTerraformStates(t.db, tenantId);
      expect(state).toMatchObject({
        source: file,
        kind: 'file',
        serial: raw.serial ?? null,
        managed: all.length,
        skipped_unsupported: unsupported,
        last_error: null,
      });
      expect(state!.last_read_at).toBeInstanceOf(Date);
      // Its count includes resources made from another's block (an instance's root volume).
      expect(state!.resources).toBe(rows.length);
      expect(scan.counts).toMatchObject({ collected: rows.length });
      if (all.length === 0) expect(rows).toHaveLength(0);
    });

    it('keeps the plaintext password of a real state out of every stored row', async () => {
      const file = corpus!.find((f) => basename(f) === 'driftctl-aws_db_instance.tfstate')!;
      const raw = JSON.parse(readFileSync(file, 'utf8'));
      const password = raw.resources[0].instances[0].attributes.password as string;
      expect(password.length).toBeGreaterThan(3);
      const member = await createTenantWithUser(t);
      await connectEnvironment(t.db, member.tenant.id, { kind: 'terraform_state', file });
      await scanTenant(member.tenant.id);
      for (const table of [
        'resources',
        'resource_history',
        'terraform_states',
        'cloud_connections',
      ] as const) {
        const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.table(table)} t
        where tenant_id = ${member.tenant.id} and row_to_json(t)::text like ${`%${password}%`}`.execute(t.db);
        expect(rows[0]!.n, table).toBe(0);
      }
    });
  },
);

const vpcState = (serial: number, resources: unknown[]) =>
  JSON.stringify({
    version: 4,
    terraform_version: '1.10.2',
    serial,
    lineage: 'lin-s3',
    outputs: {},
    resources,
  });
const vpc = (tags: Record<string, string>) => ({
  mode: 'managed',
  type: 'aws_vpc',
  name: 'main',
  provider: 'provider["registry.terraform.io/hashicorp/aws"]',
  instances: [
    {
      schema_version: 1,
      attributes: {
        arn: 'arn:aws:ec2:eu-west-1:123456789012:vpc/vpc-0abc',
        id: 'vpc-0abc',
        cidr_block: '10.0.0.0/16',
        owner_id: '123456789012',
        tags,
        tags_all: tags,
      },
      sensitive_attributes: [],
    },
  ],
});
const subnet = {
  mode: 'managed',
  type: 'aws_subnet',
  name: 'a',
  provider: 'provider["registry.terraform.io/hashicorp/aws"]',
  instances: [
    {
      index_key: 'eu-west-1a',
      schema_version: 1,
      attributes: {
        arn: 'arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-0aaa',
        id: 'subnet-0aaa',
        vpc_id: 'vpc-0abc',
        availability_zone: 'eu-west-1a',
        cidr_block: '10.0.1.0/24',
        tags: {},
      },
      sensitive_attributes: [],
      dependencies: ['aws_vpc.main'],
    },
  ],
};

describe('an S3 backend, read at every scan', () => {
  let peer: S3Peer;
  let s3: S3Client;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    peer = await startS3Peer(['tfstate-prod']);
    for (const [k, v] of Object.entries(peer.env)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    s3 = new S3Client({ region: 'eu-west-1' });
  });
  afterAll(async () => {
    s3?.destroy();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await peer?.close();
  });
  const put = (key: string, body: string) =>
    s3.send(new PutObjectCommand({ Bucket: 'tfstate-prod', Key: key, Body: body }));

  it('shows a state changed between two scans as drift in the second', async () => {
    const key = 'env/prod/terraform.tfstate';
    await put(key, vpcState(5, [vpc({ Name: 'prod', Team: 'core' })]));
    const member = await createTenantWithUser(t);
    const tenantId = member.tenant.id;
    await connectEnvironment(t.db, tenantId, {
      kind: 'terraform_state',
      s3: `s3://tfstate-prod/${key}`,
      region: 'eu-west-1',
    });
    const first = await scanTenant(tenantId);
    expect(first.rows.map((r) => r.native_id)).toEqual(['vpc-0abc']);

    await put(key, vpcState(6, [vpc({ Name: 'prod', Team: 'platform' }), subnet]));
    const second = await scanTenant(tenantId);
    expect(second.rows.map((r) => r.native_id).sort()).toEqual(['subnet-0aaa', 'vpc-0abc']);
    expect(second.scan.counts).toMatchObject({ created: 1, updated: 1 });

    const drift = await graphDrift(t.db, tenantId, { days: 1 });
    expect(drift.added.map((a) => a.native_id)).toEqual(['subnet-0aaa']);
    expect(drift.changed.map((c) => [c.native_id, c.fields.find((f) => f.path === 'tags.Team')])).toEqual([
      ['vpc-0abc', { path: 'tags.Team', before: 'core', after: 'platform' }],
    ]);

    const [state] = await listTerraformStates(t.db, tenantId);
    expect(state).toMatchObject({
      source: `s3://tfstate-prod/${key}`,
      kind: 's3',
      region: 'eu-west-1',
      serial: 6,
      resources: 2,
    });
    const tools = await listTenantTools(t.db, tenantId);
    expect(tools.find((x) => x.id === 'terraform_state')!.settings).toMatchObject({
      states: [{ source: `s3://tfstate-prod/${key}`, serial: 6 }],
    });
  });

  it('refuses a missing key at connect, and a scan that cannot read fails without touching the inventory', async () => {
    const member = await createTenantWithUser(t);
    const tenantId = member.tenant.id;
    await expect(
      connectEnvironment(t.db, tenantId, { kind: 'terraform_state', s3: 's3://tfstate-prod/nope.tfstate' }),
    ).rejects.toMatchObject({
      status: 400,
      detail: expect.stringMatching(/s3:\/\/tfstate-prod\/nope\.tfstate: no such key/),
    });
    expect(await listTerraformStates(t.db, tenantId)).toEqual([]);

    const key = 'env/stage/terraform.tfstate';
    await put(key, vpcState(1, [vpc({ Name: 'stage' })]));
    await connectEnvironment(t.db, tenantId, { kind: 'terraform_state', s3: `s3://tfstate-prod/${key}` });
    await scanTenant(tenantId);
    await s3.send(new DeleteObjectCommand({ Bucket: 'tfstate-prod', Key: key }));
    const scan = await requestScan(t.db, null, tenantId, 'test');
    await expect(runScan(t.db, scan.id, { detect: null })).rejects.toThrow(/no such key/);
    const live = await t.db
      .selectFrom('resources')
      .select('native_id')
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .execute();
    expect(live.map((r) => r.native_id)).toEqual(['vpc-0abc']);
    const [state] = await listTerraformStates(t.db, tenantId);
    expect(state).toMatchObject({ serial: 1, last_error: expect.stringMatching(/no such key/) });
  });

  it('addresses a store on a hostname path-style when asked, as the backend’s use_path_style', async () => {
    await put('host.tfstate', vpcState(3, [vpc({ Name: 'host' })]));
    const member = await createTenantWithUser(t);
    const endpoint = process.env.AWS_ENDPOINT_URL_S3!;
    // Virtual-hosted style would ask for tfstate-prod.localhost, a name that does not resolve here.
    process.env.AWS_ENDPOINT_URL_S3 = endpoint.replace('127.0.0.1', 'localhost');
    try {
      await connectEnvironment(t.db, member.tenant.id, {
        kind: 'terraform_state',
        s3: 's3://tfstate-prod/host.tfstate',
        pathStyle: true,
      });
      const { rows } = await scanTenant(member.tenant.id);
      expect(rows.map((r) => r.native_id)).toEqual(['vpc-0abc']);
    } finally {
      process.env.AWS_ENDPOINT_URL_S3 = endpoint;
    }
  });

  it('reads several states of a tenant, counting a resource two of them hold once', async () => {
    await put('a.tfstate', vpcState(1, [vpc({ Name: 'a' })]));
    await put('b.tfstate', vpcState(2, [vpc({ Name: 'b' }), subnet]));
    const member = await createTenantWithUser(t);
    const tenantId = member.tenant.id;
    await connectEnvironment(t.db, tenantId, { kind: 'terraform_state', s3: 's3://tfstate-prod/a.tfstate' });
    await connectEnvironment(t.db, tenantId, { kind: 'terraform_state', s3: 's3://tfstate-prod/b.tfstate' });
    const { rows } = await scanTenant(tenantId);
    expect(rows.map((r) => [r.native_id, r.attributes.tags]).sort()).toEqual([
      ['subnet-0aaa', {}],
      ['vpc-0abc', { Name: 'a' }],
    ]);
    const states = await listTerraformStates(t.db, tenantId);
    expect(states.map((s) => [s.source, s.serial, s.resources, s.skipped_other])).toEqual([
      ['s3://tfstate-prod/a.tfstate', 1, 1, {}],
      ['s3://tfstate-prod/b.tfstate', 2, 1, { duplicate: 1 }],
    ]);
    // Connecting another kind replaces the connection and its states.
    await connectEnvironment(t.db, tenantId, { kind: 'aws', profile: 'p', regions: ['eu-west-1'] });
    expect(await listTerraformStates(t.db, tenantId)).toEqual([]);
  });
});
