import { describe, expect, it } from 'vitest';
import { expandFlatmap } from './flatmap';
import { normalizeState } from './raw-state';
import { validateTerraformState } from './schema';
import {
  createTerraformStateConnector,
  parseTerraformState,
  REDACTED,
  type TerraformStateReadResult,
} from './index';

const holds = (v: unknown, s: string): boolean => JSON.stringify(v).includes(s);

/** A raw version 4 state around some resources. */
const v4 = (resources: unknown[], extra: Record<string, unknown> = {}) => ({
  version: 4,
  terraform_version: '1.9.5',
  serial: 7,
  lineage: 'lin-1',
  outputs: {},
  resources,
  ...extra,
});

const vpc = (id: string, more: Record<string, unknown> = {}) => ({
  schema_version: 1,
  attributes: {
    arn: `arn:aws:ec2:eu-west-1:111122223333:vpc/${id}`,
    id,
    cidr_block: '10.0.0.0/16',
    owner_id: '111122223333',
    tags: { Name: id },
    tags_all: { Name: id },
  },
  sensitive_attributes: [],
  ...more,
});

/** A managed aws_vpc resource of a version 4 state. */
const vpcs = (name: string, instances: unknown[], more: Record<string, unknown> = {}) => ({
  mode: 'managed',
  type: 'aws_vpc',
  name,
  provider: 'provider["registry.terraform.io/hashicorp/aws"]',
  instances,
  ...more,
});

describe('flatmap expansion (state version 3)', () => {
  it('expands maps, lists, sets and nested blocks', () => {
    expect(
      expandFlatmap({
        id: 'i-1',
        'tags.%': '2',
        'tags.Name': 'web',
        'tags.kubernetes.io/role': 'node',
        'security_groups.#': '2',
        'security_groups.3814588639': 'sg-b',
        'security_groups.1111111111': 'sg-a',
        'root_block_device.#': '1',
        'root_block_device.0.volume_size': '8',
        'root_block_device.0.volume_type': 'gp2',
        'ingress.#': '1',
        'ingress.482069346.from_port': '22',
        'ingress.482069346.cidr_blocks.#': '1',
        'ingress.482069346.cidr_blocks.0': '0.0.0.0/0',
        'ipv6_addresses.#': '0',
        'ebs.#': '2',
        'ebs.1.size': '20',
        'ebs.0.size': '10',
      }),
    ).toEqual({
      id: 'i-1',
      tags: { Name: 'web', 'kubernetes.io/role': 'node' },
      security_groups: ['sg-a', 'sg-b'],
      root_block_device: [{ volume_size: '8', volume_type: 'gp2' }],
      ingress: [{ from_port: '22', cidr_blocks: ['0.0.0.0/0'] }],
      ipv6_addresses: [],
      ebs: [{ size: '10' }, { size: '20' }],
    });
  });

  it('maps a version 3 state: modules by path, count indexes, data sources apart, depends_on in the module', () => {
    const r = parseTerraformState({
      version: 3,
      terraform_version: '0.11.14',
      serial: 4,
      lineage: 'l3',
      modules: [
        {
          path: ['root'],
          resources: {
            'data.aws_caller_identity.me': {
              type: 'aws_caller_identity',
              primary: { id: 'x', attributes: { account_id: '444455556666' } },
            },
          },
        },
        {
          path: ['root', 'net'],
          resources: {
            'aws_subnet.a.0': {
              type: 'aws_subnet',
              depends_on: ['aws_vpc.main'],
              primary: {
                id: 'subnet-0',
                attributes: { id: 'subnet-0', availability_zone: 'eu-west-1a', vpc_id: 'vpc-1' },
              },
            },
            'aws_subnet.a.1': {
              type: 'aws_subnet',
              primary: { id: 'subnet-1', attributes: { availability_zone: 'eu-west-1b', vpc_id: 'vpc-1' } },
            },
            'aws_vpc.main': {
              type: 'aws_vpc',
              primary: {
                id: 'vpc-1',
                attributes: { id: 'vpc-1', cidr_block: '10.0.0.0/16', 'tags.%': '1', 'tags.Name': 'main' },
              },
            },
          },
        },
      ],
    });
    expect(r).toMatchObject({
      format: 'state_v3',
      formatVersion: '3',
      serial: 4,
      lineage: 'l3',
      managedCount: 3,
    });
    const byAddress = Object.fromEntries(r.resources.map((x) => [x.attributes.terraform_address, x]));
    expect(Object.keys(byAddress).sort()).toEqual([
      'module.net.aws_subnet.a[0]',
      'module.net.aws_subnet.a[1]',
      'module.net.aws_vpc.main',
    ]);
    expect(byAddress['module.net.aws_vpc.main']).toMatchObject({
      name: 'main',
      accountId: '444455556666',
      // No region in its values or provider: the default, as for show -json.
      arn: 'arn:aws:ec2:us-east-1:444455556666:vpc/vpc-1',
    });
    // primary.id stands in when the attributes lack one.
    expect(byAddress['module.net.aws_subnet.a[1]']!.nativeId).toBe('subnet-1');
    const subnet0 = byAddress['module.net.aws_subnet.a[0]']!.arn;
    const vpcArn = byAddress['module.net.aws_vpc.main']!.arn;
    expect(r.edges).toContainEqual(
      expect.objectContaining({ from: subnet0, kind: 'depends-on', to: vpcArn }),
    );
  });
});

describe('raw state version 4', () => {
  it('addresses count and for_each instances, modules with keys, and leaves data sources out', () => {
    const r = parseTerraformState(
      v4([
        vpcs(
          'by_az',
          [
            { index_key: 'eu-west-1a', ...vpc('vpc-a') },
            { index_key: 'with "quotes"', ...vpc('vpc-q') },
          ],
          { each: 'map' },
        ),
        vpcs(
          'counted',
          [
            { index_key: 0, ...vpc('vpc-0') },
            { index_key: 1, ...vpc('vpc-1') },
          ],
          { module: 'module.env["prod"]', each: 'list' },
        ),
        vpcs('looked_up', [vpc('vpc-data')], { mode: 'data' }),
      ]),
    );
    expect(r.resources.map((x) => x.attributes.terraform_address).sort()).toEqual([
      'aws_vpc.by_az["eu-west-1a"]',
      'aws_vpc.by_az["with \\"quotes\\""]',
      'module.env["prod"].aws_vpc.counted[0]',
      'module.env["prod"].aws_vpc.counted[1]',
    ]);
    expect(r).toMatchObject({ format: 'state_v4', serial: 7, lineage: 'lin-1', managedCount: 4 });
  });

  it('keeps a tainted object (marked) and leaves a deposed one out, saying so', () => {
    const r = parseTerraformState(
      v4([
        vpcs('main', [
          { status: 'tainted', ...vpc('vpc-new') },
          { deposed: '00000001', ...vpc('vpc-old') },
        ]),
      ]),
    );
    expect(r.resources).toHaveLength(1);
    expect(r.resources[0]).toMatchObject({ nativeId: 'vpc-new', attributes: { terraform_tainted: true } });
    expect(r.taintedCount).toBe(1);
    expect(r.skipped).toEqual([
      { address: 'aws_vpc.main (deposed 00000001)', type: 'aws_vpc', reason: 'deposed' },
    ]);
    const v3 = parseTerraformState({
      version: 3,
      serial: 1,
      modules: [
        {
          path: ['root'],
          resources: {
            'aws_vpc.main': {
              type: 'aws_vpc',
              primary: { id: 'vpc-new', attributes: { id: 'vpc-new' }, tainted: true },
              deposed: [{ id: 'vpc-old', attributes: { id: 'vpc-old' } }],
            },
          },
        },
      ],
    });
    expect(v3.resources.map((x) => [x.nativeId, x.attributes.terraform_tainted])).toEqual([
      ['vpc-new', true],
    ]);
    expect(v3.skipped.map((s) => s.reason)).toEqual(['deposed']);
  });

  it('expands attributes_flat (objects no provider has upgraded yet)', () => {
    const r = parseTerraformState(
      v4([
        vpcs('old', [
          { schema_version: 0, attributes_flat: { id: 'vpc-f', 'tags.%': '1', 'tags.Name': 'flat' } },
        ]),
      ]),
    );
    expect(r.resources[0]).toMatchObject({ nativeId: 'vpc-f', name: 'flat' });
  });
});

describe('redaction before anything is stored', () => {
  const SECRET = 'hunter2-very-secret';

  it('redacts the paths of sensitive_attributes (get_attr and cty-JSON index steps)', () => {
    const r = parseTerraformState(
      v4([
        vpcs('main', [
          vpc('vpc-s', {
            attributes: {
              ...vpc('vpc-s').attributes,
              tags: { Name: 'ok', Owner: SECRET },
              tags_all: { Name: 'ok', Owner: SECRET },
            },
            sensitive_attributes: [
              [
                { type: 'get_attr', value: 'tags' },
                { type: 'index', value: { value: 'Owner', type: 'string' } },
              ],
              [
                { type: 'get_attr', value: 'tags_all' },
                { type: 'index', value: { value: 'Owner', type: 'string' } },
              ],
            ],
          }),
        ]),
      ]),
    );
    expect(holds(r, SECRET)).toBe(false);
    expect(r.resources[0]!.tags).toEqual({ Name: 'ok', Owner: REDACTED });
  });

  it("redacts show -json's sensitive_values", () => {
    const r = parseTerraformState({
      format_version: '0.1',
      terraform_version: '0.14.11',
      values: {
        root_module: {
          resources: [
            {
              address: 'aws_vpc.main',
              mode: 'managed',
              type: 'aws_vpc',
              name: 'main',
              values: { id: 'vpc-s', tags: { Name: SECRET } },
              sensitive_values: { tags: { Name: true } },
            },
          ],
        },
      },
    });
    expect(r).toMatchObject({ format: 'show_json', formatVersion: '0.1', serial: null });
    expect(holds(r, SECRET)).toBe(false);
    expect(r.resources[0]!.name).toBe(REDACTED);
  });

  it('redacts secret attribute names that nothing marked (version 3, old providers)', async () => {
    const text = JSON.stringify({
      version: 3,
      serial: 1,
      modules: [
        {
          path: ['root'],
          resources: {
            'aws_iam_access_key.ci': {
              type: 'aws_iam_access_key',
              primary: {
                id: 'AKIAEXAMPLE',
                attributes: { id: 'AKIAEXAMPLE', user: 'ci', secret: SECRET, ses_smtp_password_v4: SECRET },
              },
            },
            'aws_db_instance.db': {
              type: 'aws_db_instance',
              primary: {
                id: 'db',
                attributes: { id: 'db', identifier: 'db', password: SECRET, engine: 'postgres' },
              },
            },
          },
        },
      ],
    });
    const inv = await createTerraformStateConnector({ json: text }).collect({});
    expect(inv.resources.map((x) => x.type).sort()).toEqual(['aws_iam_access_key', 'aws_rds_db_instance']);
    expect(holds(inv, SECRET)).toBe(false);
    // The mappers copy only what they name; the values they are handed are already redacted.
    const tree = normalizeState(validateTerraformState(text)).root;
    expect(holds(tree, SECRET)).toBe(false);
    expect(holds(tree, 'AKIAEXAMPLE')).toBe(true);
    expect(tree.resources!.find((r) => r.type === 'aws_db_instance')!.values).toMatchObject({
      password: REDACTED,
      engine: 'postgres',
    });
  });
});

describe('several states', () => {
  it('counts a resource two states hold once, the first state’s, and reports per state', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'tfstates-'));
    const a = join(dir, 'a.tfstate');
    const b = join(dir, 'b.tfstate');
    await writeFile(
      a,
      JSON.stringify(v4([{ mode: 'managed', type: 'aws_vpc', name: 'x', instances: [vpc('vpc-shared')] }])),
    );
    await writeFile(
      b,
      JSON.stringify(
        v4(
          [
            {
              mode: 'managed',
              type: 'aws_vpc',
              name: 'y',
              instances: [vpc('vpc-shared'), vpc('vpc-b')].map((v, i) => ({ ...v, index_key: i })),
            },
            { mode: 'managed', type: 'random_id', name: 'r', instances: [{ attributes: { id: 'r' } }] },
          ],
          { serial: 12 },
        ),
      ),
    );
    const reads: TerraformStateReadResult[] = [];
    const inv = await createTerraformStateConnector({
      sources: [
        { kind: 'file', path: a },
        { kind: 'file', path: b },
      ],
      onStateRead: (r) => reads.push(r),
    }).collect({});
    expect(inv.resources.map((r) => r.nativeId).sort()).toEqual(['vpc-b', 'vpc-shared']);
    expect(inv.resources.find((r) => r.nativeId === 'vpc-shared')!.attributes.terraform_address).toBe(
      'aws_vpc.x',
    );
    expect(
      reads.map((r) => [r.source, r.serial, r.managed, r.resources, r.unsupportedByType, r.skippedByReason]),
    ).toEqual([
      [a, 7, 1, 1, {}, {}],
      [b, 12, 3, 1, { random_id: 1 }, { duplicate: 1 }],
    ]);
  });
});
