import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  type TestContext,
  type TestMember,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of issue 14 (Terraform plan review, POST /api/v1/plan-review) from the contract
// alone: api-v1.md (CI; Plan-review result; Errors), decisions.md (Tenants, tiers; "Knowledge,
// notifications, plan review") and the issue text. Real API and worker processes, a `small` demo,
// HTTP only. The plans are written here from the live inventory of the tenant (SQL), with CI noise,
// ANSI colours, replacements, drift, heredocs, sensitive values; plus a `terraform show -json` form.

const RISK_RANK: Record<string, number> = { low: 0, medium: 1, high: 2, critical: 3 };

let t: TestContext;
let svc: SplitServices;
let base = '';
let a: TestMember; // team, demo seed 7, scanned
let b: TestMember; // team, demo seed 8, scanned (another tenant)
let free: TestMember; // free tier, demo
let tokA = '';
let tokARead = '';
let tokB = '';
let tokFree = '';

interface Row {
  id: string;
  arn: string;
  native_id: string;
  type: string;
  name: string | null;
  availability_zone: string | null;
  attributes: Record<string, any>;
  tags: Record<string, string>;
}

async function live(tenantId: string, where = sql`true`): Promise<Row[]> {
  const res = await sql<Row>`select id, arn, native_id, type, name, availability_zone, attributes, tags
    from resources where tenant_id = ${tenantId} and deleted_at is null and ${where} order by arn`.execute(
    t.db,
  );
  return res.rows;
}

const admin = (args: string[]) => svc.admin(args);

const review = (body: unknown, token = tokA) => call(base, 'POST', '/api/v1/plan-review', { token, body });

// ---------------------------------------------------------------------------------------------
// Facts about tenant A's demo, from SQL over the inventory.

interface Facts {
  db: Row; // the production database (single-AZ if any)
  dbDependents: Row[]; // resources with an edge pointing at the database
  nat: Row;
  sg: Row; // a security group that is not yet open on 22 to the world, if possible
  vol: Row; // a gp2 volume with an open finding
  volFinding: string; // that finding's id
  findingIds: Set<string>;
}
let facts: Facts;

async function openFindings(tenantId: string) {
  return (
    await sql<{ id: string; check_id: string; title: string; arn: string; type: string }>`
      select f.id, f.check_id, f.title, fr.arn, fr.type from findings f
      join finding_resources fr on fr.finding_id = f.id
      where f.tenant_id = ${tenantId} and f.status = 'open'`.execute(t.db)
  ).rows;
}

async function gatherFacts(tenantId: string): Promise<Facts> {
  const dbs = await live(tenantId, sql`type = 'aws_rds_db_instance'`);
  const prod = dbs.filter((d) => /prod/i.test(JSON.stringify(d.tags)) || /prod/i.test(d.name ?? d.native_id));
  expect(prod.length, 'a production database in the demo').toBeGreaterThan(0);
  const db = prod.find((d) => d.attributes.multi_az === false) ?? prod[0]!;
  const deps = (
    await sql<{ from_arn: string }>`select distinct from_arn from resource_edges
      where tenant_id = ${tenantId} and to_arn = ${db.arn}`.execute(t.db)
  ).rows.map((r) => r.from_arn);
  const all = await live(tenantId);
  const dbDependents = all.filter((r) => deps.includes(r.arn));
  const nats = await live(tenantId, sql`type = 'aws_vpc_nat_gateway'`);
  expect(nats.length, 'a NAT gateway in the demo').toBeGreaterThan(0);
  const sgs = await live(tenantId, sql`type = 'aws_vpc_security_group'`);
  expect(sgs.length).toBeGreaterThan(0);
  const sg =
    sgs.find(
      (s) => !/0\.0\.0\.0\/0|::\/0/.test(JSON.stringify(s.attributes)) && /prod|app|db/i.test(s.name ?? ''),
    ) ??
    sgs.find((s) => !/0\.0\.0\.0\/0|::\/0/.test(JSON.stringify(s.attributes))) ??
    sgs[0]!;
  const open = await openFindings(tenantId);
  const vols = await live(tenantId, sql`type = 'aws_ebs_volume' and attributes->>'volume_type' = 'gp2'`);
  const withFinding = vols
    .map((v) => ({ v, f: open.find((f) => f.arn === v.arn && /gp2|gp3/i.test(`${f.check_id} ${f.title}`)) }))
    .filter((x) => x.f);
  expect(withFinding.length, 'a gp2 volume with an open gp2 finding').toBeGreaterThan(0);
  const allFindings = (
    await sql<{ id: string }>`select id from findings where tenant_id = ${tenantId}`.execute(t.db)
  ).rows.map((r) => r.id);
  return {
    db,
    dbDependents,
    nat: nats[0]!,
    sg,
    vol: withFinding[0]!.v,
    volFinding: withFinding[0]!.f!.id,
    findingIds: new Set(allFindings),
  };
}

// ---------------------------------------------------------------------------------------------
// Plans written here.

const ESC = '\x1b';
const B = (s: string) => `${ESC}[1m${s}${ESC}[0m`;
const R = (s: string) => `${ESC}[31m${s}${ESC}[0m`;
const G = (s: string) => `${ESC}[32m${s}${ESC}[0m`;
const Y = (s: string) => `${ESC}[33m${s}${ESC}[0m`;

/** The main plan: 3 to add, 1 to change, 2 to destroy (one of them a replacement). */
function mainPlanText(f: Facts): { text: string; lines: Record<string, [number, number]> } {
  const db = f.db;
  const natSubnet = String(f.nat.attributes.subnet_id ?? 'subnet-0a1b2c3d4e5f60718');
  const out: string[] = [];
  const lines: Record<string, [number, number]> = {};
  const block = (addr: string, body: string[]) => {
    const start = out.length + 1;
    out.push(...body);
    lines[addr] = [start, out.length];
  };
  out.push(
    '2026-11-24T23:01:12.114Z ##[group]Run terraform plan -no-color=false -input=false',
    '2026-11-24T23:01:12.115Z env:',
    '2026-11-24T23:01:12.115Z   TF_IN_AUTOMATION: true',
    '2026-11-24T23:01:12.116Z   AWS_REGION: us-east-1',
    '##[endgroup]',
    '[command]/home/runner/work/_temp/terraform-bin plan -input=false -lock-timeout=5m',
    `${ESC}[0m${ESC}[1mdata.aws_caller_identity.current: Reading...${ESC}[0m`,
    `${ESC}[0m${ESC}[1maws_db_instance.prod: Refreshing state... [id=${db.native_id}]${ESC}[0m`,
    `${ESC}[0m${ESC}[1maws_nat_gateway.use1a: Refreshing state... [id=${f.nat.native_id}]${ESC}[0m`,
    `${ESC}[0m${ESC}[1maws_ebs_volume.data: Refreshing state... [id=${f.vol.native_id}]${ESC}[0m`,
    `${ESC}[0m${ESC}[1maws_security_group.app: Refreshing state... [id=${f.sg.native_id}]${ESC}[0m`,
    '',
    `${B('Note:')} ${B('Objects have changed outside of Terraform')}`,
    '',
    'Terraform detected the following changes made outside of Terraform since the',
    'last "terraform apply" which may have affected this plan:',
    '',
    `${B('  # aws_security_group.app')} has changed`,
    `  ${Y('~')} resource "aws_security_group" "app" {`,
    `        id                     = "${f.sg.native_id}"`,
    `      ${Y('~')} ingress                = [`,
    `          ${G('+')} {`,
    '              + cidr_blocks      = [',
    '                  + "10.20.0.0/16",',
    '                ]',
    '              + description      = "hotfix by alice"',
    '              + from_port        = 3389',
    '              + protocol         = "tcp"',
    '              + to_port          = 3389',
    '            },',
    '            # (1 unchanged element hidden)',
    '        ]',
    '        name                   = "' + (f.sg.name ?? 'app') + '"',
    '        # (7 unchanged attributes hidden)',
    '    }',
    '',
    'Unless you have made equivalent changes to your configuration, or ignored the',
    'relevant attributes using ignore_changes, the following plan may include',
    'actions to undo or respond to these changes.',
    '',
    '─────────────────────────────────────────────────────────────────────────────',
    '',
    'Terraform used the selected providers to generate the following execution',
    'plan. Resource actions are indicated with the following symbols:',
    `  ${G('+')} create`,
    `  ${Y('~')} update in-place`,
    `  ${R('-')} destroy`,
    `${R('-')}/${G('+')} destroy and then create replacement`,
    ` ${ESC}[36m<=${ESC}[0m read (data resources)`,
    '',
    'Terraform will perform the following actions:',
    '',
  );
  block('data.aws_iam_policy_document.batch', [
    `${B('  # data.aws_iam_policy_document.batch')} will be read during apply`,
    '  # (config refers to values not yet known)',
    ` ${ESC}[36m<=${ESC}[0m data "aws_iam_policy_document" "batch" {`,
    '      + id   = (known after apply)',
    '      + json = (known after apply)',
    '    }',
    '',
  ]);
  block('aws_db_instance.prod', [
    `${B('  # aws_db_instance.prod')} will be ${R(B('destroyed'))}`,
    '  # (because aws_db_instance.prod is not in configuration)',
    `  ${R('-')} resource "aws_db_instance" "prod" {`,
    `      ${R('-')} allocated_storage                     = ${Number(db.attributes.allocated_storage ?? 100)} ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} arn                                   = "${db.arn}" ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} backup_retention_period               = ${Number(db.attributes.backup_retention_period ?? 0)} ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} deletion_protection                   = ${Boolean(db.attributes.deletion_protection)} ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} engine                                = "${db.attributes.engine ?? 'postgres'}" ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} id                                    = "${db.native_id}" ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} identifier                            = "${db.native_id}" ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} instance_class                        = "${db.attributes.db_instance_class ?? db.attributes.class ?? 'db.m5.large'}" ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} multi_az                              = ${Boolean(db.attributes.multi_az)} ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} password                              = (sensitive value) ${ESC}[90m-> null${ESC}[0m`,
    `      ${R('-')} skip_final_snapshot                   = true ${ESC}[90m-> null${ESC}[0m`,
    '      - tags                                  = {',
    '          - "env"     = "prod"',
    '          - "service" = "payments-db"',
    '        } -> null',
    '        # (28 unchanged attributes hidden)',
    '    }',
    '',
  ]);
  block('aws_ebs_volume.data', [
    `${B('  # aws_ebs_volume.data')} will be updated in-place`,
    `  ${Y('~')} resource "aws_ebs_volume" "data" {`,
    `        id                   = "${f.vol.native_id}"`,
    `        arn                  = "${f.vol.arn}"`,
    `      ${Y('~')} type                 = "gp2" ${ESC}[33m->${ESC}[0m "gp3"`,
    '        # (8 unchanged attributes hidden)',
    '    }',
    '',
  ]);
  block('aws_instance.batch', [
    `${B('  # aws_instance.batch')} will be created`,
    `  ${G('+')} resource "aws_instance" "batch" {`,
    '      + ami                          = "ami-0c02fb55956c7d316"',
    '      + arn                          = (known after apply)',
    '      + id                           = (known after apply)',
    '      + instance_type                = "m5.4xlarge"',
    '      + user_data                    = <<-EOT',
    '            #!/bin/bash',
    '            # resource "aws_db_instance" "fake" { will be destroyed',
    '            echo "-/+ not a plan line" > /tmp/x',
    '        EOT',
    '      + tags                         = {',
    '          + "env"     = "prod"',
    '          + "service" = "batch"',
    '        }',
    '    }',
    '',
  ]);
  block('aws_nat_gateway.use1a', [
    `${B('  # aws_nat_gateway.use1a')} must be ${B(R('replaced'))}`,
    `${R('-')}/${G('+')} resource "aws_nat_gateway" "use1a" {`,
    `      ${Y('~')} allocation_id                      = "eipalloc-0f1e2d3c4b5a69788" -> (known after apply)`,
    `      ${Y('~')} id                                 = "${f.nat.native_id}" -> (known after apply)`,
    `      ${Y('~')} subnet_id                          = "${natSubnet}" -> "subnet-0ffeeddccbbaa9988" ${R('# forces replacement')}`,
    '        # (3 unchanged attributes hidden)',
    '    }',
    '',
  ]);
  block('aws_security_group_rule.ssh_world', [
    `${B('  # aws_security_group_rule.ssh_world')} will be created`,
    `  ${G('+')} resource "aws_security_group_rule" "ssh_world" {`,
    '      + cidr_blocks              = [',
    '          + "0.0.0.0/0",',
    '        ]',
    '      + from_port                = 22',
    '      + id                       = (known after apply)',
    '      + protocol                 = "tcp"',
    `      + security_group_id        = "${f.sg.native_id}"`,
    '      + self                     = false',
    '      + to_port                  = 22',
    '      + type                     = "ingress"',
    '    }',
    '',
  ]);
  out.push(
    `${B('Plan:')} 3 to add, 1 to change, 2 to destroy.`,
    '',
    'Changes to Outputs:',
    `  ${Y('~')} db_endpoint = "${db.native_id}.abc123.us-east-1.rds.amazonaws.com:5432" -> null`,
    '',
    '─────────────────────────────────────────────────────────────────────────────',
    '',
    'Saved the plan to: tfplan',
    '',
    '2026-11-24T23:01:19.877Z ##[debug]Finishing: terraform plan',
  );
  return { text: out.join('\n'), lines };
}

/** The same plan as `terraform show -json tfplan` would print it. */
function mainPlanJson(f: Facts): string {
  const db = f.db;
  const natSubnet = String(f.nat.attributes.subnet_id ?? 'subnet-0a1b2c3d4e5f60718');
  const doc = {
    format_version: '1.2',
    terraform_version: '1.9.8',
    resource_drift: [
      {
        address: 'aws_security_group.app',
        mode: 'managed',
        type: 'aws_security_group',
        name: 'app',
        provider_name: 'registry.terraform.io/hashicorp/aws',
        change: {
          actions: ['update'],
          before: { id: f.sg.native_id, name: f.sg.name, ingress: [] },
          after: {
            id: f.sg.native_id,
            name: f.sg.name,
            ingress: [{ from_port: 3389, to_port: 3389, protocol: 'tcp', cidr_blocks: ['10.20.0.0/16'] }],
          },
          after_unknown: {},
        },
      },
    ],
    resource_changes: [
      {
        address: 'data.aws_iam_policy_document.batch',
        mode: 'data',
        type: 'aws_iam_policy_document',
        name: 'batch',
        change: { actions: ['read'], before: null, after: {}, after_unknown: { id: true, json: true } },
        action_reason: 'read_because_config_unknown',
      },
      {
        address: 'aws_db_instance.prod',
        mode: 'managed',
        type: 'aws_db_instance',
        name: 'prod',
        change: {
          actions: ['delete'],
          before: {
            arn: db.arn,
            id: db.native_id,
            identifier: db.native_id,
            engine: db.attributes.engine ?? 'postgres',
            multi_az: Boolean(db.attributes.multi_az),
            deletion_protection: Boolean(db.attributes.deletion_protection),
            backup_retention_period: Number(db.attributes.backup_retention_period ?? 0),
            password: 'hunter2',
            skip_final_snapshot: true,
            tags: { env: 'prod', service: 'payments-db' },
          },
          after: null,
          after_unknown: {},
          before_sensitive: { password: true },
          after_sensitive: false,
        },
        action_reason: 'delete_because_no_resource_config',
      },
      {
        address: 'aws_ebs_volume.data',
        mode: 'managed',
        type: 'aws_ebs_volume',
        name: 'data',
        change: {
          actions: ['update'],
          before: { id: f.vol.native_id, arn: f.vol.arn, type: 'gp2', size: f.vol.attributes.size ?? 100 },
          after: { id: f.vol.native_id, arn: f.vol.arn, type: 'gp3', size: f.vol.attributes.size ?? 100 },
          after_unknown: {},
        },
      },
      {
        address: 'aws_instance.batch',
        mode: 'managed',
        type: 'aws_instance',
        name: 'batch',
        change: {
          actions: ['create'],
          before: null,
          after: {
            ami: 'ami-0c02fb55956c7d316',
            instance_type: 'm5.4xlarge',
            user_data: '#!/bin/bash\necho hi\n',
            tags: { env: 'prod', service: 'batch' },
          },
          after_unknown: { arn: true, id: true },
        },
      },
      {
        address: 'aws_nat_gateway.use1a',
        mode: 'managed',
        type: 'aws_nat_gateway',
        name: 'use1a',
        change: {
          actions: ['delete', 'create'],
          before: { id: f.nat.native_id, subnet_id: natSubnet, allocation_id: 'eipalloc-0f1e2d3c4b5a69788' },
          after: { subnet_id: 'subnet-0ffeeddccbbaa9988' },
          after_unknown: { id: true, allocation_id: true },
          replace_paths: [['subnet_id']],
        },
        action_reason: 'replace_because_cannot_update',
      },
      {
        address: 'aws_security_group_rule.ssh_world',
        mode: 'managed',
        type: 'aws_security_group_rule',
        name: 'ssh_world',
        change: {
          actions: ['create'],
          before: null,
          after: {
            cidr_blocks: ['0.0.0.0/0'],
            from_port: 22,
            to_port: 22,
            protocol: 'tcp',
            security_group_id: f.sg.native_id,
            self: false,
            type: 'ingress',
          },
          after_unknown: { id: true },
        },
      },
    ],
    output_changes: {
      db_endpoint: {
        actions: ['delete'],
        before: `${db.native_id}.abc123.us-east-1.rds.amazonaws.com:5432`,
        after: null,
      },
    },
  };
  return JSON.stringify(doc, null, 2);
}

/** A small plan: multi_az false -> true on the single-AZ production database (0 add, 1 change). */
function multiAzPlan(f: Facts): string {
  return [
    'Terraform will perform the following actions:',
    '',
    '  # aws_db_instance.prod will be updated in-place',
    '  ~ resource "aws_db_instance" "prod" {',
    `        arn                 = "${f.db.arn}"`,
    `        id                  = "${f.db.native_id}"`,
    `        identifier          = "${f.db.native_id}"`,
    '      ~ multi_az            = false -> true',
    '        # (40 unchanged attributes hidden)',
    '    }',
    '',
    'Plan: 0 to add, 1 to change, 0 to destroy.',
  ].join('\n');
}

/** The NAT replacement and the SSH rule in the Terraform 0.11 format. */
function legacyPlan(): string {
  return [
    'Refreshing Terraform state in-memory prior to plan...',
    '',
    'An execution plan has been generated and is shown below.',
    'Resource actions are indicated with the following symbols:',
    '  + create',
    '  - destroy',
    '-/+ destroy and then create replacement',
    '',
    'Terraform will perform the following actions:',
    '',
    '-/+ aws_nat_gateway.use1a (new resource required)',
    `      id:            "${facts.nat.native_id}" => <computed> (forces new resource)`,
    '      subnet_id:     "subnet-0a1b2c3d" => "subnet-0ffeeddc" (forces new resource)',
    '',
    '  + aws_security_group_rule.ssh_world',
    '      id:                       <computed>',
    '      cidr_blocks.#:            "1"',
    '      cidr_blocks.0:            "0.0.0.0/0"',
    '      from_port:                "22"',
    '      protocol:                 "tcp"',
    `      security_group_id:        "${facts.sg.native_id}"`,
    '      to_port:                  "22"',
    '      type:                     "ingress"',
    '',
    '',
    'Plan: 2 to add, 0 to change, 1 to destroy.',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------

function summaryCounts(s: any): { add: number; change: number; destroy: number; replace: number } {
  const pick = (re: RegExp) => {
    const k = Object.keys(s ?? {}).find((x) => re.test(x));
    return k === undefined ? undefined : s[k];
  };
  return {
    add: pick(/^(to_)?(add|create)/),
    change: pick(/^(to_)?(change|update)/),
    destroy: pick(/^(to_)?(destroy|delete)/),
    replace: pick(/^(to_)?replace/),
  };
}

function expectShape(body: any) {
  expect(Object.keys(RISK_RANK)).toContain(body.overall_risk);
  expect(body.read_only).toBe(true);
  expect(Array.isArray(body.annotations)).toBe(true);
  for (const an of body.annotations) {
    for (const k of ['risk', 'category', 'address', 'title', 'detail', 'citations'])
      expect(an, `annotation.${k}`).toHaveProperty(k);
    expect(Object.keys(RISK_RANK)).toContain(an.risk);
    expect(typeof an.title).toBe('string');
    expect(typeof an.detail).toBe('string');
    expect(Array.isArray(an.citations)).toBe(true);
    for (const c of an.citations) {
      expect(['plan_line', 'resource', 'finding']).toContain(c.kind);
      expect(c).toHaveProperty('ref');
    }
  }
}

/** A list named like `re` at the top of the answer or one level down (e.g. findings.fixes). */
function findList(body: any, re: RegExp): unknown {
  for (const [k, v] of Object.entries(body ?? {})) {
    if (re.test(k)) return v;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k2, v2] of Object.entries(v)) if (re.test(k2)) return v2;
    }
  }
  return undefined;
}

const annFor = (body: any, addr: string) => (body.annotations as any[]).filter((x) => x.address === addr);
const cites = (anns: any[], kind: string) =>
  anns.flatMap((x) => x.citations.filter((c: any) => c.kind === kind).map((c: any) => String(c.ref)));

beforeAll(async () => {
  svc = await startSplitServices();
  ({ t, base } = svc);
  a = await createTenantWithUser(t, { tier: 'team' });
  b = await createTenantWithUser(t, { tier: 'team' });
  free = await createTenantWithUser(t, { tier: 'free' });
  tokA = (await mintTestToken(t, a, 'read_write')).token;
  tokARead = (await mintTestToken(t, a, 'read')).token;
  tokB = (await mintTestToken(t, b, 'read_write')).token;
  tokFree = (await mintTestToken(t, free, 'read_write')).token;
  await admin(['env', 'connect', '--tenant', a.tenant.slug, '--demo', '--size', 'small', '--seed', '7']);
  await admin(['env', 'connect', '--tenant', b.tenant.slug, '--demo', '--size', 'small', '--seed', '8']);
  await admin(['scan', '--tenant', a.tenant.slug, '--wait']);
  await admin(['scan', '--tenant', b.tenant.slug, '--wait']);
  facts = await gatherFacts(a.tenant.id);
}, 600_000);

afterAll(async () => {
  await svc?.stop();
});

describe('plan review: errors and access', () => {
  it('no token is 401', async () => {
    const res = await call(base, 'POST', '/api/v1/plan-review', { body: { plan: multiAzPlan(facts) } });
    expect(res.status).toBe(401);
  });
  it('a read token is 403 (read_write endpoint)', async () => {
    const res = await review({ plan: multiAzPlan(facts) }, tokARead);
    expect(res.status, res.text).toBe(403);
    expect(typeof res.body?.detail).toBe('string');
  });
  it('a free-tier tenant is 403 (no API access for plan review)', async () => {
    const res = await review({ plan: multiAzPlan(facts) }, tokFree);
    expect(res.status, res.text).toBe(403);
    expect(typeof res.body?.detail).toBe('string');
  });
  it('missing plan, empty plan, blank plan and non-string plan are 400 {detail}', async () => {
    const bodies: unknown[] = [
      {},
      { plan: '' },
      { plan: '   \n  ' },
      { plan: 42 },
      { plan: null },
      { plan: ['x'] },
      { plan: { a: 1 } },
    ];
    for (const body of bodies) {
      const res = await review(body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(typeof res.body?.detail, JSON.stringify(body)).toBe('string');
    }
    const raw = await call(base, 'POST', '/api/v1/plan-review', { token: tokA, rawBody: '' });
    expect(raw.status, raw.text).toBe(400);
  });
  it('garbage that is no Terraform plan is 400 with a detail saying what was expected', async () => {
    const garbage = [
      'hello world, this is not a plan\nlorem ipsum dolor sit amet\n',
      '{"foo": "bar", "resource_changes_not": []}',
      '<html><body>502 Bad Gateway</body></html>',
    ];
    for (const g of garbage) {
      const res = await review({ plan: g });
      expect(res.status, `${g}: ${res.text}`).toBe(400);
      expect(typeof res.body?.detail).toBe('string');
      expect(res.body.detail, 'says what was expected').toMatch(/terraform|plan/i);
    }
  });
  it('a body over the documented limit (10 MiB) is 413', async () => {
    const big = 'x'.repeat(11 * 1024 * 1024);
    const res = await review({ plan: `Terraform will perform the following actions:\n${big}` });
    expect(res.status).toBe(413);
  });
});

describe('plan review: the demo-aligned plan (tenant A)', () => {
  let text: string;
  let lines: Record<string, [number, number]>;
  let res: Awaited<ReturnType<typeof review>>;
  let findingsBefore: { n: number; statuses: string };
  beforeAll(async () => {
    findingsBefore = await findingsState(a.tenant.id);
    ({ text, lines } = mainPlanText(facts));
    res = await review({ plan: text });
  }, 60_000);

  it('answers 200 with overall_risk, annotations (cited) and read_only true', () => {
    expect(res.status, res.text).toBe(200);
    expectShape(res.body);
    expect(res.body.annotations.length).toBeGreaterThan(0);
  });
  it('annotations are sorted from the highest risk down; overall_risk is at least the highest', () => {
    const ranks = (res.body.annotations as any[]).map((x) => RISK_RANK[x.risk]!);
    expect(ranks).toEqual([...ranks].sort((x, y) => y - x));
    expect(RISK_RANK[res.body.overall_risk]).toBeGreaterThanOrEqual(Math.max(...ranks));
    expect(['high', 'critical']).toContain(res.body.overall_risk);
  });
  it('summary counts match the plan: 3 add, 1 change, 2 destroy, 1 replace', () => {
    expect(res.body.summary, 'summary present').toBeDefined();
    expect(summaryCounts(res.body.summary)).toEqual({ add: 3, change: 1, destroy: 2, replace: 1 });
  });
  it('destroying the production database is high or critical and cites the live resource', () => {
    const anns = annFor(res.body, 'aws_db_instance.prod');
    expect(anns.length, 'annotated').toBeGreaterThan(0);
    expect(['high', 'critical']).toContain(anns[0].risk);
    const refs = cites(anns, 'resource');
    expect(
      refs.some((r) => r === facts.db.id || r === facts.db.arn),
      `resource citations ${refs}`,
    ).toBe(true);
  });
  it('the database annotation cites the plan lines of its block', () => {
    const anns = annFor(res.body, 'aws_db_instance.prod');
    const refs = cites(anns, 'plan_line');
    expect(refs.length).toBeGreaterThan(0);
    const [s, e] = lines['aws_db_instance.prod']!;
    const ok = refs.some((r) => {
      const n = Number(/\d+/.exec(r)?.[0]);
      return n >= s - 1 && n <= e;
    });
    expect(ok, `plan_line refs ${refs} within ${s}-${e}`).toBe(true);
  });
  it('the database annotation names its dependents from the graph', () => {
    expect(facts.dbDependents.length, 'the demo has dependents of the prod database').toBeGreaterThan(0);
    const anns = annFor(res.body, 'aws_db_instance.prod');
    const hay = JSON.stringify(anns);
    const named = facts.dbDependents.filter((d) => hay.includes(d.id) || hay.includes(d.arn));
    expect(named.length, `dependents ${facts.dbDependents.map((d) => d.arn)} in ${hay}`).toBeGreaterThan(0);
  });
  it('the database annotation reports live protection (deletion protection / backups / Multi-AZ)', () => {
    const anns = annFor(res.body, 'aws_db_instance.prod');
    const text2 = anns.map((x) => `${x.title} ${x.detail}`).join(' ');
    expect(text2).toMatch(/deletion protection|backup|multi-?az/i);
  });
  it('the NAT gateway replacement is annotated and cites the live NAT gateway', () => {
    const anns = annFor(res.body, 'aws_nat_gateway.use1a');
    expect(anns.length).toBeGreaterThan(0);
    const refs = cites(anns, 'resource');
    expect(
      refs.some((r) => r === facts.nat.id || r === facts.nat.arn),
      `refs ${refs}`,
    ).toBe(true);
    expect(RISK_RANK[anns[0].risk]).toBeGreaterThanOrEqual(RISK_RANK.medium!);
  });
  it('the gp2 -> gp3 change lists the open finding as fixed (the finding id of this tenant)', () => {
    const anns = annFor(res.body, 'aws_ebs_volume.data');
    expect(anns.length).toBeGreaterThan(0);
    expect(cites(anns, 'finding'), 'annotation cites the fixed finding').toContain(facts.volFinding);
    const fixed = findList(res.body, /fix/i);
    expect(fixed, 'a list of fixed findings in the answer').toBeDefined();
    expect(JSON.stringify(fixed)).toContain(facts.volFinding);
  });
  it('opening SSH (22) to 0.0.0.0/0 is an introduced risk (high or critical, security/exposure)', () => {
    const anns = annFor(res.body, 'aws_security_group_rule.ssh_world');
    expect(anns.length).toBeGreaterThan(0);
    expect(['high', 'critical']).toContain(anns[0].risk);
    expect(anns.map((x) => x.category).join(' ')).toMatch(/secur|expos|network|misconf|iam/i);
    const sgRefs = cites(anns, 'resource');
    expect(
      sgRefs.some((r) => r === facts.sg.id || r === facts.sg.arn),
      `cites the live SG: ${sgRefs}`,
    ).toBe(true);
    const introduced = findList(res.body, /introduc/i);
    expect(introduced, 'a list of introduced findings in the answer').toBeDefined();
    expect(JSON.stringify(introduced)).toMatch(/ssh_world/);
    expect(JSON.stringify(introduced)).not.toContain(facts.volFinding);
  });
  it('the monthly cost delta is present and positive (an m5.4xlarge added, a database removed aside)', () => {
    const k = Object.keys(res.body).find((x) => /cost/i.test(x));
    expect(k, 'a monthly cost delta in the answer').toBeDefined();
    const delta = JSON.stringify(res.body[k!]).match(/"monthly[a-z_]*delta[a-z_]*":(-?[\d.]+)/)?.[1];
    expect(delta, `monthly delta in ${JSON.stringify(res.body[k!])}`).toBeDefined();
    // m5.4xlarge at the public $0.768/h (730 h) is +$560.64; the database and gp2 savings take some off
    expect(Number(delta)).toBeGreaterThan(0);
    expect(Number(delta)).toBeLessThan(560.64);
    const batch = annFor(res.body, 'aws_instance.batch');
    expect(batch.length, 'the new m5.4xlarge is annotated (cost)').toBeGreaterThan(0);
    expect(JSON.stringify(batch)).toMatch(/560\.64/);
  });
  it('the heredoc content is not parsed as plan lines (no annotation for aws_db_instance.fake)', () => {
    expect(annFor(res.body, 'aws_db_instance.fake')).toEqual([]);
  });
  it('the data source read and the drift-only object are not counted as changes', () => {
    expect(annFor(res.body, 'data.aws_iam_policy_document.batch').every((x) => x.risk === 'low')).toBe(true);
  });
  it('the drift section is recognised: the plan would revert a change made outside Terraform', () => {
    expect(JSON.stringify(res.body)).toMatch(/drift|outside (of )?terraform/i);
  });
  it('every citation is of this tenant: resource refs in A, finding refs in A', async () => {
    const rows = await live(a.tenant.id);
    const ids = new Set(rows.flatMap((r) => [r.id, r.arn]));
    for (const an of res.body.annotations) {
      for (const c of an.citations) {
        if (c.kind === 'resource') expect(ids.has(String(c.ref)), `resource ${c.ref}`).toBe(true);
        if (c.kind === 'finding') expect(facts.findingIds.has(String(c.ref)), `finding ${c.ref}`).toBe(true);
      }
    }
  });
  it('the same plan as `terraform show -json` gives the same summary, risk and annotated addresses', async () => {
    const j = await review({ plan: mainPlanJson(facts) });
    expect(j.status, j.text).toBe(200);
    expectShape(j.body);
    const counts = (x: any) =>
      Object.fromEntries(Object.entries(x ?? {}).filter(([, v]) => typeof v === 'number'));
    expect(counts(j.body.summary)).toEqual(counts(res.body.summary));
    expect(summaryCounts(j.body.summary)).toEqual({ add: 3, change: 1, destroy: 2, replace: 1 });
    expect(j.body.overall_risk).toBe(res.body.overall_risk);
    const addrs = (x: any) => [...new Set((x.annotations as any[]).map((an) => an.address))].sort();
    expect(addrs(j.body)).toEqual(addrs(res.body));
    expect(cites(annFor(j.body, 'aws_ebs_volume.data'), 'finding')).toContain(facts.volFinding);
  });
  it('nothing is written to findings (count and statuses unchanged)', async () => {
    await review({ plan: multiAzPlan(facts) });
    expect(await findingsState(a.tenant.id)).toEqual(findingsBefore);
  });
  it('an audit entry records the review', async () => {
    const au = await call(base, 'GET', '/api/v1/audit?limit=50', { token: tokA });
    expect(au.status).toBe(200);
    expect(JSON.stringify(au.body.entries.map((e: any) => e.action))).toMatch(/plan[_.-]?review/i);
  });
});

async function findingsState(tenantId: string) {
  const rows = (
    await sql<{
      id: string;
      status: string;
    }>`select id, status from findings where tenant_id = ${tenantId} order by id`.execute(t.db)
  ).rows;
  return { n: rows.length, statuses: rows.map((r) => `${r.id}:${r.status}`).join(',') };
}

describe('plan review: setting multi_az on the single-AZ database', () => {
  it('summary 0/1/0/0, the database is cited, and an open Multi-AZ finding of it is listed as fixed', async () => {
    const res = await review({ plan: multiAzPlan(facts) });
    expect(res.status, res.text).toBe(200);
    expectShape(res.body);
    expect(summaryCounts(res.body.summary)).toEqual({ add: 0, change: 1, destroy: 0, replace: 0 });
    const anns = annFor(res.body, 'aws_db_instance.prod');
    expect(anns.length).toBeGreaterThan(0);
    const refs = cites(anns, 'resource');
    expect(refs.some((r) => r === facts.db.id || r === facts.db.arn)).toBe(true);
    const maz = (await openFindings(a.tenant.id)).filter(
      (f) => f.arn === facts.db.arn && /multi.?az|single.?az/i.test(`${f.check_id} ${f.title}`),
    );
    if (facts.db.attributes.multi_az === false) {
      expect(maz.length, 'the demo has an open Multi-AZ finding on the prod database').toBeGreaterThan(0);
      expect(JSON.stringify(findList(res.body, /fix/i)), 'listed as fixed').toContain(maz[0]!.id);
    }
  });
});

describe('plan review: tenant isolation', () => {
  it("tenant B reviewing A's plan cites only B's resources and findings", async () => {
    const res = await review({ plan: mainPlanText(facts).text }, tokB);
    expect(res.status, res.text).toBe(200);
    expectShape(res.body);
    const bRows = await live(b.tenant.id);
    const bIds = new Set(bRows.flatMap((r) => [r.id, r.arn]));
    const bFindings = new Set(
      (
        await sql<{ id: string }>`select id from findings where tenant_id = ${b.tenant.id}`.execute(t.db)
      ).rows.map((r) => r.id),
    );
    const hay = JSON.stringify(res.body);
    expect(hay).not.toContain(facts.db.id);
    expect(hay).not.toContain(facts.volFinding);
    for (const id of facts.findingIds) expect(hay.includes(id), `A's finding ${id}`).toBe(false);
    for (const an of res.body.annotations) {
      for (const c of an.citations) {
        if (c.kind === 'resource') expect(bIds.has(String(c.ref)), `resource ${c.ref}`).toBe(true);
        if (c.kind === 'finding') expect(bFindings.has(String(c.ref)), `finding ${c.ref}`).toBe(true);
      }
    }
    // the same summary, since the plan is the same
    expect(summaryCounts(res.body.summary)).toEqual({ add: 3, change: 1, destroy: 2, replace: 1 });
  });
});

describe('plan review: other plan forms', () => {
  it('create-before-destroy (+/-), tainted, moved and imported objects: counts as Terraform states them', async () => {
    const plan = [
      'Terraform will perform the following actions:',
      '',
      '  # aws_nat_gateway.use1a is tainted, so must be replaced',
      '+/- resource "aws_nat_gateway" "use1a" {',
      `      ~ id        = "${facts.nat.native_id}" -> (known after apply)`,
      '        # (4 unchanged attributes hidden)',
      '    }',
      '',
      '  # aws_instance.old has moved to aws_instance.new',
      '    resource "aws_instance" "new" {',
      '        id            = "i-0123456789abcdef0"',
      '        # (30 unchanged attributes hidden)',
      '    }',
      '',
      '  # aws_s3_bucket.logs will be imported',
      '    resource "aws_s3_bucket" "logs" {',
      '        bucket = "acme-logs-2026"',
      '        id     = "acme-logs-2026"',
      '    }',
      '',
      'Plan: 1 to import, 1 to add, 0 to change, 1 to destroy.',
    ].join('\n');
    const res = await review({ plan });
    expect(res.status, res.text).toBe(200);
    expectShape(res.body);
    expect(summaryCounts(res.body.summary)).toEqual({ add: 1, change: 0, destroy: 1, replace: 1 });
    expect(res.body.summary.import).toBe(1);
    expect(res.body.summary.move).toBe(1);
    const nat = annFor(res.body, 'aws_nat_gateway.use1a');
    expect(nat.length).toBeGreaterThan(0);
    expect(cites(nat, 'resource').some((r) => r === facts.nat.arn || r === facts.nat.id)).toBe(true);
  });
  it('the legacy (Terraform 0.11) format is tolerated: counts and the replaced NAT gateway', async () => {
    const res = await review({ plan: legacyPlan() });
    expect(res.status, res.text).toBe(200);
    expectShape(res.body);
    expect(summaryCounts(res.body.summary)).toEqual({ add: 2, change: 0, destroy: 1, replace: 1 });
    expect(annFor(res.body, 'aws_nat_gateway.use1a').length).toBeGreaterThan(0);
  });
  it('the legacy (Terraform 0.11) format: the rule opening 22 to 0.0.0.0/0 is annotated as introduced', async () => {
    const res = await review({ plan: legacyPlan() });
    expect(res.status, res.text).toBe(200);
    const anns = annFor(res.body, 'aws_security_group_rule.ssh_world');
    expect(anns.length, JSON.stringify(res.body.annotations.map((x: any) => x.address))).toBeGreaterThan(0);
    expect(['high', 'critical']).toContain(anns[0].risk);
    expect(JSON.stringify(findList(res.body, /introduc/i))).toMatch(/ssh_world/);
  });
  it('a JSON plan with only no-op changes is low risk with zero counts', async () => {
    const doc = {
      format_version: '1.2',
      terraform_version: '1.9.8',
      resource_changes: [
        {
          address: 'aws_ebs_volume.data',
          mode: 'managed',
          type: 'aws_ebs_volume',
          name: 'data',
          change: {
            actions: ['no-op'],
            before: { id: facts.vol.native_id },
            after: { id: facts.vol.native_id },
          },
        },
      ],
    };
    const res = await review({ plan: JSON.stringify(doc) });
    expect(res.status, res.text).toBe(200);
    expectShape(res.body);
    expect(res.body.overall_risk).toBe('low');
    expect(summaryCounts(res.body.summary)).toEqual({ add: 0, change: 0, destroy: 0, replace: 0 });
  });
});
