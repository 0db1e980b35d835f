import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { call, createTenantWithUser, mintTestToken } from '../support/index';
import { hasRealworld, readRealworld, realworldFiles, REALWORLD_SKIP } from '../support/blackbox-realworld';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of decisions.md "Wave 3", "Plan files, as CI produces them" (issue 26) and of the
// plan parsers' hardening (issue 24), against POST /api/v1/plan-review (api-v1.md "CI"):
// - UTF-16LE with a BOM, UTF-8 with a BOM, CRLF, ANSI colours and hashicorp/setup-terraform's wrapper
//   framing around a plan are reviewed like the plain plan (the same annotations);
// - every plan of ../shared/realworld/tf-plan-json and tf-plan-text is reviewed (no 4xx, no 5xx), and
//   its annotations' addresses exist in the plan;
// - a plan written here flags a security group open to 0.0.0.0/0 on port 22 (inline and as
//   aws_security_group_rule), public-read buckets and an `s3:*` on `*` policy as security risks, and
//   does not flag their safe twins;
// - hostile plans (a 40,000-character line; JSON nested 1,000 deep) answer within a few seconds with a
//   2xx or a 4xx {detail}, while /healthz keeps answering.
// A plan file is sent the way the documented client does (`jq -Rs '{plan: .}' FILE | curl ...`, and the
// CLI reading the file as UTF-8): the file's bytes read as UTF-8. For a UTF-16 file that is two U+FFFD
// for the BOM, then every character followed by a NUL.

let svc: SplitServices;
let base = '';
let tok = '';

const RISK_RANK: Record<string, number> = { low: 0, medium: 1, high: 2, critical: 3 };

const review = (plan: string) => call(base, 'POST', '/api/v1/plan-review', { token: tok, body: { plan } });

/** What `jq -Rs` and a UTF-8 read of the file give for these bytes. */
const asClientSends = (bytes: Buffer) => bytes.toString('utf8');

// ---------------------------------------------------------------------------------------------
// The plan written here (Terraform 1.x text). ASCII only, so that every encoding carries it whole.

const PLAN_LINES = [
  'Terraform used the selected providers to generate the following execution',
  'plan. Resource actions are indicated with the following symbols:',
  '  + create',
  '',
  'Terraform will perform the following actions:',
  '',
  '  # aws_iam_policy.reader will be created',
  '  + resource "aws_iam_policy" "reader" {',
  '      + arn       = (known after apply)',
  '      + id        = (known after apply)',
  '      + name      = "bb-reader"',
  '      + path      = "/"',
  '      + policy    = jsonencode(',
  '            {',
  '              + Statement = [',
  '                  + {',
  '                      + Action   = "s3:GetObject"',
  '                      + Effect   = "Allow"',
  '                      + Resource = "arn:aws:s3:::bb-reports/*"',
  '                    },',
  '                ]',
  '              + Version   = "2012-10-17"',
  '            }',
  '        )',
  '      + policy_id = (known after apply)',
  '      + tags_all  = (known after apply)',
  '    }',
  '',
  '  # aws_iam_policy.s3_admin will be created',
  '  + resource "aws_iam_policy" "s3_admin" {',
  '      + arn       = (known after apply)',
  '      + id        = (known after apply)',
  '      + name      = "bb-s3-admin"',
  '      + path      = "/"',
  '      + policy    = jsonencode(',
  '            {',
  '              + Statement = [',
  '                  + {',
  '                      + Action   = "s3:*"',
  '                      + Effect   = "Allow"',
  '                      + Resource = "*"',
  '                    },',
  '                ]',
  '              + Version   = "2012-10-17"',
  '            }',
  '        )',
  '      + policy_id = (known after apply)',
  '      + tags_all  = (known after apply)',
  '    }',
  '',
  '  # aws_s3_bucket.private will be created',
  '  + resource "aws_s3_bucket" "private" {',
  '      + acl           = "private"',
  '      + arn           = (known after apply)',
  '      + bucket        = "bb-private-reports"',
  '      + force_destroy = false',
  '      + id            = (known after apply)',
  '    }',
  '',
  '  # aws_s3_bucket.public will be created',
  '  + resource "aws_s3_bucket" "public" {',
  '      + acl           = "public-read"',
  '      + arn           = (known after apply)',
  '      + bucket        = "bb-public-assets"',
  '      + force_destroy = false',
  '      + id            = (known after apply)',
  '    }',
  '',
  '  # aws_s3_bucket_acl.logs will be created',
  '  + resource "aws_s3_bucket_acl" "logs" {',
  '      + acl    = "public-read"',
  '      + bucket = "bb-public-logs"',
  '      + id     = (known after apply)',
  '    }',
  '',
  '  # aws_security_group.bastion will be created',
  '  + resource "aws_security_group" "bastion" {',
  '      + arn         = (known after apply)',
  '      + description = "Bastion hosts"',
  '      + egress      = (known after apply)',
  '      + id          = (known after apply)',
  '      + ingress     = [',
  '          + {',
  '              + cidr_blocks      = [',
  '                  + "0.0.0.0/0",',
  '                ]',
  '              + description      = "ssh"',
  '              + from_port        = 22',
  '              + ipv6_cidr_blocks = []',
  '              + prefix_list_ids  = []',
  '              + protocol         = "tcp"',
  '              + security_groups  = []',
  '              + self             = false',
  '              + to_port          = 22',
  '            },',
  '        ]',
  '      + name        = "bb-bastion"',
  '      + owner_id    = (known after apply)',
  '      + vpc_id      = "vpc-0a1b2c3d4e5f60718"',
  '    }',
  '',
  '  # aws_security_group_rule.https_office will be created',
  '  + resource "aws_security_group_rule" "https_office" {',
  '      + cidr_blocks              = [',
  '          + "10.20.0.0/16",',
  '        ]',
  '      + from_port                = 443',
  '      + id                       = (known after apply)',
  '      + protocol                 = "tcp"',
  '      + security_group_id        = "sg-0123456789abcdef0"',
  '      + self                     = false',
  '      + source_security_group_id = (known after apply)',
  '      + to_port                  = 443',
  '      + type                     = "ingress"',
  '    }',
  '',
  '  # aws_security_group_rule.ssh_world will be created',
  '  + resource "aws_security_group_rule" "ssh_world" {',
  '      + cidr_blocks              = [',
  '          + "0.0.0.0/0",',
  '        ]',
  '      + from_port                = 22',
  '      + id                       = (known after apply)',
  '      + protocol                 = "tcp"',
  '      + security_group_id        = "sg-0123456789abcdef0"',
  '      + self                     = false',
  '      + source_security_group_id = (known after apply)',
  '      + to_port                  = 22',
  '      + type                     = "ingress"',
  '    }',
  '',
  'Plan: 8 to add, 0 to change, 0 to destroy.',
  '',
];
const PLAN = PLAN_LINES.join('\n');

const FLAGGED = [
  'aws_iam_policy.s3_admin',
  'aws_s3_bucket.public',
  'aws_s3_bucket_acl.logs',
  'aws_security_group.bastion',
  'aws_security_group_rule.ssh_world',
];
const SAFE = ['aws_iam_policy.reader', 'aws_s3_bucket.private', 'aws_security_group_rule.https_office'];

/** The same plan as `terraform show -json` would give it (format 1.2). */
function planJson(): string {
  const rc = (
    type: string,
    name: string,
    after: Record<string, unknown>,
    unknown: Record<string, unknown>,
  ) => ({
    address: `${type}.${name}`,
    mode: 'managed',
    type,
    name,
    provider_name: 'registry.terraform.io/hashicorp/aws',
    change: {
      actions: ['create'],
      before: null,
      after,
      after_unknown: unknown,
      before_sensitive: false,
      after_sensitive: {},
    },
  });
  const policy = (action: string, resource: string) =>
    JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Action: action, Effect: 'Allow', Resource: resource }],
    });
  const rule = (port: number, cidr: string) => ({
    cidr_blocks: [cidr],
    from_port: port,
    to_port: port,
    protocol: 'tcp',
    security_group_id: 'sg-0123456789abcdef0',
    self: false,
    type: 'ingress',
    ipv6_cidr_blocks: null,
    prefix_list_ids: null,
    description: null,
  });
  const changes = [
    rc(
      'aws_iam_policy',
      'reader',
      { name: 'bb-reader', path: '/', policy: policy('s3:GetObject', 'arn:aws:s3:::bb-reports/*') },
      { arn: true, id: true },
    ),
    rc(
      'aws_iam_policy',
      's3_admin',
      { name: 'bb-s3-admin', path: '/', policy: policy('s3:*', '*') },
      { arn: true, id: true },
    ),
    rc(
      'aws_s3_bucket',
      'private',
      { acl: 'private', bucket: 'bb-private-reports', force_destroy: false },
      { arn: true, id: true },
    ),
    rc(
      'aws_s3_bucket',
      'public',
      { acl: 'public-read', bucket: 'bb-public-assets', force_destroy: false },
      { arn: true, id: true },
    ),
    rc('aws_s3_bucket_acl', 'logs', { acl: 'public-read', bucket: 'bb-public-logs' }, { id: true }),
    rc(
      'aws_security_group',
      'bastion',
      {
        description: 'Bastion hosts',
        name: 'bb-bastion',
        vpc_id: 'vpc-0a1b2c3d4e5f60718',
        ingress: [
          {
            cidr_blocks: ['0.0.0.0/0'],
            description: 'ssh',
            from_port: 22,
            to_port: 22,
            protocol: 'tcp',
            ipv6_cidr_blocks: [],
            prefix_list_ids: [],
            security_groups: [],
            self: false,
          },
        ],
      },
      { arn: true, id: true, egress: true, owner_id: true },
    ),
    rc('aws_security_group_rule', 'https_office', rule(443, '10.20.0.0/16'), {
      id: true,
      source_security_group_id: true,
    }),
    rc('aws_security_group_rule', 'ssh_world', rule(22, '0.0.0.0/0'), {
      id: true,
      source_security_group_id: true,
    }),
  ];
  return JSON.stringify(
    { format_version: '1.2', terraform_version: '1.6.6', resource_changes: changes },
    null,
    2,
  );
}

// ---------------------------------------------------------------------------------------------
// The forms CI produces.

const ESC = '\x1b';
function withAnsi(text: string): string {
  return text
    .split('\n')
    .map((l) =>
      l
        .replace(
          /^(\s*)# (\S+) will be created$/,
          `$1${ESC}[1m# $2${ESC}[0m will be ${ESC}[1m${ESC}[32mcreated${ESC}[0m`,
        )
        .replace(/^(\s*)\+ /, `$1${ESC}[32m+${ESC}[0m `)
        .replace(/^Plan: (.*)$/, `${ESC}[1mPlan:${ESC}[0m $1`)
        .replace(/^Terraform will perform the following actions:$/, `${ESC}[1m$&${ESC}[0m`),
    )
    .join('\n');
}

/** hashicorp/setup-terraform's wrapper: the command line, the output, then the ::debug:: and ::set-output lines. */
function withSetupTerraformWrapper(text: string, command = 'plan -input=false'): string {
  const escaped = text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  return [
    `[command]/home/runner/work/_temp/${randomUUID()}/terraform-bin ${command}`,
    text,
    '::debug::Terraform exited with code 0.',
    `::debug::stdout: ${escaped}`,
    '::debug::stderr: ',
    '::debug::exitcode: 0',
    `::set-output name=stdout::${escaped}`,
    '::set-output name=stderr::',
    '::set-output name=exitcode::0',
    '',
  ].join('\n');
}

const utf16leWithBom = (text: string) =>
  Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
const utf8WithBom = (text: string) =>
  Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
const crlf = (text: string) => text.replace(/\n/g, '\r\n');

/** The annotations as a comparable list (citations aside: line numbers move with framing). */
function shape(body: any) {
  return {
    overall_risk: body.overall_risk,
    annotations: (body.annotations as any[])
      .map((a) => `${a.risk}|${a.category}|${a.address}|${a.title}`)
      .sort(),
  };
}

function expectFlagged(body: any, what: string) {
  const anns = body.annotations as any[];
  const risky = (a: any) => ['security', 'iam'].includes(a.category) && RISK_RANK[a.risk]! >= RISK_RANK.high!;
  const problems: string[] = [];
  for (const address of FLAGGED) {
    const hit = anns.find((a) => a.address === address && risky(a));
    if (!hit || !(hit.citations?.length > 0))
      problems.push(
        `${address} not flagged as a security risk (high or critical, cited); got ${JSON.stringify(anns.filter((a) => a.address === address).map((a) => [a.risk, a.category, a.title]))}`,
      );
  }
  for (const address of SAFE) {
    const wrong = anns.filter((a) => a.address === address && risky(a));
    if (wrong.length)
      problems.push(`${address} is safe but flagged: ${JSON.stringify(wrong.map((a) => a.title))}`);
  }
  // All at once, so that one run says everything that is missing.
  expect(problems, `${what}:\n${problems.join('\n')}`).toEqual([]);
  expect(RISK_RANK[body.overall_risk]!, what).toBeGreaterThanOrEqual(RISK_RANK.high!);
}

beforeAll(async () => {
  svc = await startSplitServices();
  base = svc.base;
  const m = await createTenantWithUser(svc.t, { tier: 'team' });
  tok = (await mintTestToken(svc.t, m, 'read_write')).token;
}, 300_000);

afterAll(async () => {
  await svc?.stop();
});

describe('security risks in a plan written here (issue 26: "Plan checks as detector conditions on the after-state")', () => {
  it('the text plan: SSH open to 0.0.0.0/0 (inline and as aws_security_group_rule), public-read buckets (inline acl and aws_s3_bucket_acl), s3:* on * are flagged; their safe twins are not', async () => {
    const res = await review(PLAN);
    expect(res.status, res.text).toBe(200);
    expect(res.body.read_only).toBe(true);
    expectFlagged(res.body, 'text plan');
  });

  it('the same plan as `terraform show -json`: the same resources flagged', async () => {
    const res = await review(planJson());
    expect(res.status, res.text).toBe(200);
    expectFlagged(res.body, 'JSON plan');
  });
});

describe('plan files as CI produces them are reviewed like the plain plan (decisions.md Wave 3)', () => {
  let plain: ReturnType<typeof shape>;

  beforeAll(async () => {
    const res = await review(PLAN);
    expect(res.status, res.text).toBe(200);
    plain = shape(res.body);
    expect(plain.annotations.length).toBeGreaterThan(0);
  });

  const variants: Array<[string, () => string]> = [
    [
      'UTF-16LE with a BOM (PowerShell `terraform plan > plan.txt`)',
      () => asClientSends(utf16leWithBom(PLAN)),
    ],
    ['UTF-16LE with a BOM, CRLF and ANSI colours', () => asClientSends(utf16leWithBom(crlf(withAnsi(PLAN))))],
    ['UTF-8 with a BOM', () => asClientSends(utf8WithBom(PLAN))],
    ['CRLF line ends', () => crlf(PLAN)],
    ['ANSI colours', () => withAnsi(PLAN)],
    ["hashicorp/setup-terraform's wrapper framing", () => withSetupTerraformWrapper(PLAN)],
    ['the wrapper framing around a coloured plan', () => withSetupTerraformWrapper(withAnsi(PLAN))],
  ];

  it.each(variants)('%s: 200 with the same overall risk and annotations', async (what, make) => {
    const res = await review(make());
    expect(res.status, `${what}: ${res.text.slice(0, 500)}`).toBe(200);
    expect(shape(res.body), what).toEqual(plain);
  });

  it('the JSON plan in UTF-16LE with a BOM and in the wrapper framing of `terraform show -json`: the same annotations as the plain JSON', async () => {
    const json = planJson();
    const res = await review(json);
    expect(res.status, res.text).toBe(200);
    const ref = shape(res.body);
    for (const [what, text] of [
      ['UTF-16LE JSON', asClientSends(utf16leWithBom(json))],
      ['UTF-8 BOM JSON', asClientSends(utf8WithBom(json))],
      ['wrapped JSON', withSetupTerraformWrapper(JSON.stringify(JSON.parse(json)), 'show -json plan.tfplan')],
    ] as const) {
      const r = await review(text);
      expect(r.status, `${what}: ${r.text.slice(0, 500)}`).toBe(200);
      expect(shape(r.body), what).toEqual(ref);
    }
  });
});

// ---------------------------------------------------------------------------------------------

const HAS_PLANS = hasRealworld('tf-plan-json') && hasRealworld('tf-plan-text');

/** The plan's text as a reader sees it: UTF-16 decoded, BOM, CR and ANSI escapes gone. */
function readable(bytes: Buffer): string {
  let text =
    bytes[0] === 0xff && bytes[1] === 0xfe ? bytes.subarray(2).toString('utf16le') : bytes.toString('utf8');
  text = text.replace(/^\uFEFF/, '');
  // eslint-disable-next-line no-control-regex
  return text.replace(/\r/g, '').replace(/\x1b\[[0-9;]*m/g, '');
}

/** Every address a JSON plan names (resource_changes, resource_drift, planned values, prior state). */
function jsonAddresses(text: string): Set<string> {
  const out = new Set<string>();
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  let doc: unknown;
  try {
    doc = JSON.parse(text.slice(start, end + 1));
  } catch {
    // the wrapper's framing: the JSON is the line after [command]
    const line = text.split('\n').find((l) => l.startsWith('{'));
    doc = line ? JSON.parse(line) : {};
  }
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if ((k === 'address' || k === 'previous_address') && typeof x === 'string') out.add(x);
        walk(x);
      }
    }
  };
  walk(doc);
  return out;
}

describe.skipIf(!HAS_PLANS)('every plan of ../shared/realworld/tf-plan-json and tf-plan-text', () => {
  const files = HAS_PLANS
    ? [
        ...realworldFiles('tf-plan-json').map((f) => ['tf-plan-json', f] as const),
        ...realworldFiles('tf-plan-text').map((f) => ['tf-plan-text', f] as const),
      ]
    : [];

  it.each(files)(
    '%s/%s: reviewed (no 4xx, no 5xx); each annotation names an address of the plan',
    async (dir, file) => {
      const bytes = readRealworld(dir, file);
      const res = await review(asClientSends(bytes));
      expect(res.status, `${dir}/${file}: ${res.text.slice(0, 800)}`).toBeGreaterThanOrEqual(200);
      expect(res.status, `${dir}/${file}: ${res.text.slice(0, 800)}`).toBeLessThan(300);
      expect(Array.isArray(res.body.annotations)).toBe(true);
      expect(Object.keys(RISK_RANK)).toContain(res.body.overall_risk);
      const text = readable(bytes);
      const known = dir === 'tf-plan-json' ? jsonAddresses(text) : undefined;
      for (const a of res.body.annotations as any[]) {
        if (a.address === null || a.address === undefined || a.address === '') continue;
        const there = known ? known.has(a.address) : text.includes(a.address);
        expect(there, `${dir}/${file}: annotation address ${a.address} is not in the plan`).toBe(true);
      }
    },
  );
});

if (!HAS_PLANS) {
  describe('every plan of the real-world corpus', () => {
    it.skip(REALWORLD_SKIP, () => undefined);
  });
}

// ---------------------------------------------------------------------------------------------
// Hostile plans (issue 24): each answers within a few seconds, 2xx or 4xx {detail}; /healthz answers
// throughout, and the API process is still there afterwards.

const ANSWER_BOUND_MS = 5_000;
const HEALTHZ_BOUND_MS = 1_000;

function textPlanAround(line: string): string {
  return [
    'Terraform will perform the following actions:',
    '',
    '  # aws_s3_bucket.x will be created',
    '  + resource "aws_s3_bucket" "x" {',
    '      + bucket = "bb-hostile"',
    line,
    '    }',
    '',
    'Plan: 1 to add, 0 to change, 0 to destroy.',
    '',
  ].join('\n');
}

function deepJsonPlan(depth: number, leavesPerLevel: number): string {
  let unknown = 'true';
  for (let i = 0; i < depth; i++) {
    const leaves = Array.from({ length: leavesPerLevel }, (_, j) => `"l${j}":true`).join(',');
    unknown = `{"n":${unknown}${leaves ? `,${leaves}` : ''}}`;
  }
  return (
    '{"format_version":"1.2","terraform_version":"1.6.6","resource_changes":[{"address":"aws_s3_bucket.x",' +
    '"mode":"managed","type":"aws_s3_bucket","name":"x","provider_name":"registry.terraform.io/hashicorp/aws",' +
    `"change":{"actions":["create"],"before":null,"after":{"bucket":"bb-deep"},"after_unknown":${unknown}}}]}`
  );
}

const HOSTILE: Array<[string, () => string]> = [
  ['a 40,000-character line of spaces', () => textPlanAround(' '.repeat(40_000))],
  ['a 40,000-character line of spaces ending in a character', () => textPlanAround(`${' '.repeat(40_000)}x`)],
  [
    'an attribute line padded with 40,000 spaces',
    () => textPlanAround(`      + tags${' '.repeat(40_000)}= {}`),
  ],
  ['a 40,000-character line of ESC ]', () => textPlanAround('\x1b]'.repeat(20_000))],
  ['a 40,000-character line of ESC [', () => textPlanAround('\x1b['.repeat(20_000))],
  ['JSON with after_unknown nested 1,000 deep', () => deepJsonPlan(1_000, 0)],
  ['JSON nested 1,000 deep with 60 leaves a level (~0.7 MB)', () => deepJsonPlan(1_000, 60)],
];

describe('hostile plans (issue 24)', () => {
  it.each(HOSTILE)(
    '%s: 2xx or 4xx {detail} within a few seconds; /healthz keeps answering',
    async (what, make) => {
      const plan = make();
      const probes: Array<{ status: number; ms: number }> = [];
      let done = false;
      const poller = (async () => {
        while (!done) {
          const t0 = performance.now();
          let status: number;
          try {
            const r = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(30_000) });
            status = r.status;
            await r.text();
          } catch {
            status = -1;
          }
          probes.push({ status, ms: performance.now() - t0 });
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const t0 = performance.now();
      let answer: Awaited<ReturnType<typeof review>> | undefined;
      try {
        answer = await review(plan);
      } finally {
        done = true;
        await poller;
      }
      const elapsed = performance.now() - t0;
      const res = answer!;
      expect(
        res.status < 300 || (res.status >= 400 && res.status < 500),
        `${what}: ${res.status} ${res.text.slice(0, 300)}`,
      ).toBe(true);
      if (res.status >= 400) expect(typeof res.body?.detail, res.text.slice(0, 300)).toBe('string');
      expect(elapsed, `${what}: answered in ${Math.round(elapsed)} ms`).toBeLessThan(ANSWER_BOUND_MS);
      expect(probes.length).toBeGreaterThan(0);
      const slowest = Math.max(...probes.map((p) => p.ms));
      expect(
        probes.every((p) => p.status === 200),
        JSON.stringify(probes),
      ).toBe(true);
      expect(slowest, `${what}: slowest /healthz ${Math.round(slowest)} ms during the review`).toBeLessThan(
        HEALTHZ_BOUND_MS,
      );
      expect(svc.api.child.exitCode, svc.api.output().slice(-2000)).toBeNull();
      const after = await fetch(`${base}/healthz`);
      expect(after.status).toBe(200);
    },
  );
});
