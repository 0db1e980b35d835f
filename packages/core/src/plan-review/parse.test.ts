import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BadRequest } from '../errors';
import { parsePlan } from './parse';
import type { ParsedPlan } from './plan';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

/** What both forms of one plan must agree on. */
const essentials = (p: ParsedPlan) =>
  p.changes.map((c) => ({
    address: c.address,
    action: c.action,
    order: c.replaceOrder,
    moved: c.movedFrom,
    deposed: c.deposed,
  }));

describe('a real plan from Terraform 1.11 (terraform_data, no provider download)', () => {
  const text = parsePlan(fixture('terraform-1.11-local.plan.txt'));
  const json = parsePlan(fixture('terraform-1.11-local.plan.json'));

  it('reads every address with its action through the colours, and agrees with the JSON of the same plan', () => {
    expect(text.format).toBe('text');
    expect(json.format).toBe('json');
    expect(essentials(text)).toEqual(essentials(json));
    expect(text.changes.map((c) => `${c.action} ${c.address}`)).toEqual([
      'replace terraform_data.asked',
      'update terraform_data.doc',
      'replace terraform_data.early',
      'forget terraform_data.forgotten',
      'create terraform_data.fresh[0]',
      'create terraform_data.fresh[1]',
      'delete terraform_data.gone',
      'update terraform_data.keep',
      'no-op terraform_data.new_name',
      'update terraform_data.secret',
      'replace terraform_data.swap',
      'replace terraform_data.tainted',
    ]);
    expect(text.summaryLine).toEqual({ import: 0, add: 6, change: 3, destroy: 5 });
  });

  it('replacement causes and orders, moves, destroy reasons', () => {
    const by = (a: string) => text.changes.find((c) => c.address === a)!;
    expect(by('terraform_data.asked').reason).toBe('replace_by_request');
    expect(by('terraform_data.tainted').reason).toBe('replace_because_tainted');
    expect(by('terraform_data.early').replaceOrder).toBe('create_first');
    expect(by('terraform_data.swap').replaceOrder).toBe('delete_first');
    expect(by('terraform_data.new_name').movedFrom).toBe('terraform_data.old_name');
    expect(by('terraform_data.gone').reason).toBe('delete_because_no_resource_config');
  });

  it('values: old -> new, (known after apply), heredoc diffs, lists and nested maps', () => {
    const by = (a: string) => text.changes.find((c) => c.address === a)!;
    expect(by('terraform_data.keep').before).toMatchObject({ input: 'v1' });
    expect(by('terraform_data.keep').after).toMatchObject({ input: 'v2' });
    expect(by('terraform_data.keep').afterUnknown).toEqual([['output']]);
    expect(by('terraform_data.doc').before!.input).toBe('line one\nline two');
    expect(by('terraform_data.doc').after!.input).toBe('line one\nline 2');
    expect(by('terraform_data.early').after).toMatchObject({ triggers_replace: ['v2'] });
    expect(by('terraform_data.fresh[1]').after).toEqual({ input: { n: 1, tags: { Name: 'fresh-1' } } });
  });

  it('line ranges run from the header comment to the closing brace', () => {
    const lines = fixture('terraform-1.11-local.plan.txt').split('\n');
    for (const c of text.changes) {
      if (c.source.kind !== 'text') throw new Error('text expected');
      expect(lines[c.source.lines.start - 1]).toContain(
        c.movedFrom && c.action === 'no-op' ? c.movedFrom : c.address,
      );
      expect(lines[c.source.lines.end - 1]!.trim()).toBe('}');
    }
  });

  it('a fresh plan from the installed binary parses the same way (skipped where terraform is absent)', (ctx) => {
    let version: string;
    try {
      version = execFileSync('terraform', ['version'], { encoding: 'utf8' });
    } catch {
      ctx.skip();
      return;
    }
    expect(version).toMatch(/Terraform v1\./);
    const dir = mkdtempSync(join(tmpdir(), 'opsi-tf-'));
    writeFileSync(
      join(dir, 'main.tf'),
      'resource "terraform_data" "a" {\n  input = { name = "x", secret = sensitive("s") }\n}\n',
    );
    const env = { ...process.env, TF_IN_AUTOMATION: '1', CHECKPOINT_DISABLE: '1' };
    execFileSync('terraform', ['init', '-input=false'], { cwd: dir, env, stdio: 'ignore' });
    const out = execFileSync('terraform', ['plan', '-input=false'], { cwd: dir, env, encoding: 'utf8' });
    const plan = parsePlan(out);
    expect(plan.changes.map((c) => `${c.action} ${c.address}`)).toEqual(['create terraform_data.a']);
    expect(plan.changes[0]!.after).toEqual({ input: { name: 'x' } });
    expect(plan.changes[0]!.sensitive).toEqual([['input', 'secret']]);
    expect(plan.summaryLine).toMatchObject({ add: 1, change: 0, destroy: 0 });
  });
});

// Written here in the shapes of the public fixtures the reference names (skluck/terraform-plan-parser
// 1.0 and 0.12 sets, borchero/terraform-plan-comment, lifeomic 0.11 set): our own resources and values.
const DRIFT_AND_JSONENCODE = `Note: Objects have changed outside of Terraform

Terraform detected the following changes made outside of Terraform since the
last "terraform apply":

  # aws_s3_bucket_policy.site has been changed
  ~ resource "aws_s3_bucket_policy" "site" {
        id     = "site-bucket"
      ~ policy = jsonencode(
          ~ {
              ~ Statement = [
                  + {
                      + Action    = "s3:GetObject"
                      + Effect    = "Allow"
                      + Principal = "*"
                      + Resource  = "arn:aws:s3:::site-bucket/*"
                    },
                    # (1 unchanged element hidden)
                ]
                # (1 unchanged attribute hidden)
            }
        )
    }
  # aws_instance.gone has been deleted
  - resource "aws_instance" "gone" {
      - id = "i-0123456789abcdef0" -> null
    }

Unless you have made equivalent changes to your configuration, or ignored the
relevant attributes using ignore_changes, the following plan may include
actions to undo or respond to these changes.

Terraform will perform the following actions:

  # module.edge.aws_wafv2_ip_set.block["eu west"] must be replaced
+/- resource "aws_wafv2_ip_set" "block" {
      ~ addresses          = [
          - "10.0.0.1/32",
          + "10.0.0.2/32",
        ]
      ~ arn                = "arn:aws:wafv2:us-east-1:111122223333:global/ipset/block/abc" -> (known after apply)
      ~ name               = "block-old" -> "block-new" # forces replacement
        tags               = {}
        # (3 unchanged attributes hidden)

      ~ timeouts {
          ~ create = "5m" -> "10m" # forces replacement
        }
    }

  # aws_s3_bucket_policy.site will be updated in-place
  ~ resource "aws_s3_bucket_policy" "site" {
        id     = "site-bucket"
      ~ policy = jsonencode(
          ~ {
              ~ Statement = [
                  - {
                      - Action    = "s3:GetObject"
                      - Effect    = "Allow"
                      - Principal = "*"
                      - Resource  = "arn:aws:s3:::site-bucket/*"
                    },
                    # (1 unchanged element hidden)
                ]
                # (1 unchanged attribute hidden)
            }
        )
    }

  # aws_launch_template.web (deposed object 4a5b6c7d) will be destroyed
  # (left over from a partially-failed replacement of this instance)
  - resource "aws_launch_template" "web" {
      - id   = "lt-0abc" -> null
      - name = "web" -> null
    }

  # aws_iam_role.ci will be updated in-place
  # (imported from "ci-role")
  ~ resource "aws_iam_role" "ci" {
        id                 = "ci-role"
      ~ assume_role_policy = <<-EOT
            {
          -   "Version": "2008-10-17"
          +   "Version": "2012-10-17"
            }
        EOT
      + password           = (sensitive value)
    }

  # aws_instance.web[0] will be updated in-place
  # (moved from aws_instance.web_old)
  ~ resource "aws_instance" "web" {
        id            = "i-0aaa"
      ~ instance_type = "t3.micro" -> "t3.large"
    }

  # aws_eip.ip will be imported
    resource "aws_eip" "ip" {
        id = "eipalloc-0abc"
    }

Plan: 1 to import, 1 to add, 3 to change, 2 to destroy.

Changes to Outputs:
  ~ site_url = "a" -> "b"
  + new_out  = (known after apply)
`;

describe('hand-written fixtures in the public shapes', () => {
  const p = parsePlan(DRIFT_AND_JSONENCODE);

  it('the drift section: changed and deleted objects, apart from the actions', () => {
    expect(p.drift.map((d) => `${d.change} ${d.address}`)).toEqual([
      'update aws_s3_bucket_policy.site',
      'delete aws_instance.gone',
    ]);
    const policy = p.drift[0]!;
    expect((policy.after!.policy as { Statement: unknown[] }).Statement).toEqual([
      { Action: 's3:GetObject', Effect: 'Allow', Principal: '*', Resource: 'arn:aws:s3:::site-bucket/*' },
    ]);
  });

  it('addresses with modules and keys with spaces, +/- and forces replacement in attributes and blocks', () => {
    const waf = p.changes[0]!;
    expect(waf).toMatchObject({
      address: 'module.edge.aws_wafv2_ip_set.block["eu west"]',
      type: 'aws_wafv2_ip_set',
      name: 'block',
      action: 'replace',
      replaceOrder: 'create_first',
    });
    expect(waf.replacePaths).toEqual([['name'], ['timeouts', 0, 'create']]);
    expect(waf.before!.addresses).toEqual(['10.0.0.1/32']);
    expect(waf.after!.addresses).toEqual(['10.0.0.2/32']);
    expect(waf.after!.timeouts).toEqual([{ create: '10m' }]);
    expect(waf.afterUnknown).toEqual([['arn']]);
  });

  it('jsonencode diffs, deposed objects, imports, moves, heredocs and sensitive values', () => {
    const by = (a: string) => p.changes.filter((c) => c.address === a);
    const site = by('aws_s3_bucket_policy.site')[0]!;
    expect((site.before!.policy as { Statement: unknown[] }).Statement).toHaveLength(1);
    expect((site.after!.policy as { Statement: unknown[] }).Statement).toHaveLength(0);
    const lt = by('aws_launch_template.web')[0]!;
    expect(lt).toMatchObject({ action: 'delete', deposed: '4a5b6c7d', reason: 'deposed' });
    const role = by('aws_iam_role.ci')[0]!;
    expect(role.importing).toBe('ci-role');
    expect(role.after!.assume_role_policy).toContain('"Version": "2012-10-17"');
    expect(role.before!.assume_role_policy).toContain('"Version": "2008-10-17"');
    expect(role.sensitive).toEqual([['password']]);
    expect(role.after).not.toHaveProperty('password');
    expect(by('aws_instance.web[0]')[0]!.movedFrom).toBe('aws_instance.web_old');
    expect(by('aws_eip.ip')[0]).toMatchObject({ action: 'no-op', importing: '' });
    expect(p.summaryLine).toEqual({ import: 1, add: 1, change: 3, destroy: 2 });
    expect(p.outputs).toEqual([
      { name: 'site_url', action: 'update' },
      { name: 'new_out', action: 'create' },
    ]);
  });

  it('Terraform 0.11 output is tolerated: addresses, actions and forced attributes', () => {
    const legacy = parsePlan(`Refreshing Terraform state in-memory prior to plan...

An execution plan has been generated and is shown below.

Terraform will perform the following actions:

  ~ aws_security_group.app
      ingress.#:                 "1" => "2"

-/+ aws_instance.db (new resource required)
      id:                        "i-0abc" => <computed> (forces new resource)
      ami:                       "ami-1" => "ami-2" (forces new resource)
      instance_type:             "t2.medium" => "t3.medium"

  + module.net.aws_eip.nat.0
      id:                        <computed>

  - aws_s3_bucket.old

 <= data.aws_ami.latest


Plan: 2 to add, 1 to change, 2 to destroy.
`);
    expect(legacy.format).toBe('legacy_text');
    expect(legacy.changes.map((c) => `${c.action} ${c.address}`)).toEqual([
      'update aws_security_group.app',
      'replace aws_instance.db',
      'create module.net.aws_eip.nat[0]',
      'delete aws_s3_bucket.old',
      'read data.aws_ami.latest',
    ]);
    const db = legacy.changes[1]!;
    expect(db.replacePaths).toEqual([['id'], ['ami']]);
    expect(db.after).toMatchObject({ ami: 'ami-2', instance_type: 't3.medium' });
  });

  it('Terraform 0.11 flattened attributes become the structured values the 1.x parser gives', () => {
    const legacy = parsePlan(`Terraform will perform the following actions:

  + aws_security_group_rule.ssh_world
      id:                       <computed>
      cidr_blocks.#:            "1"
      cidr_blocks.0:            "0.0.0.0/0"
      from_port:                "22"
      protocol:                 "tcp"
      security_group_id:        "sg-0123"
      to_port:                  "22"
      type:                     "ingress"

  ~ aws_security_group.app
      ingress.#:                            "1" => "2"
      ingress.2541437006.cidr_blocks.#:     "" => "1"
      ingress.2541437006.cidr_blocks.0:     "" => "10.0.0.0/8"
      ingress.2541437006.from_port:         "" => "443"
      ingress.2541437006.to_port:           "" => "443"
      tags.%:                               "1" => "2"
      tags.Name:                            "app" => "app"
      tags.kubernetes.io/role:              "" => "elb" (forces new resource)
      vpc_security_group_ids.#:             <computed>

Plan: 1 to add, 1 to change, 0 to destroy.
`);
    const [rule, sg] = legacy.changes;
    expect(rule!.after).toEqual({
      cidr_blocks: ['0.0.0.0/0'],
      from_port: '22',
      protocol: 'tcp',
      security_group_id: 'sg-0123',
      to_port: '22',
      type: 'ingress',
    });
    expect(rule!.afterUnknown).toEqual([['id']]);
    expect(sg!.after).toEqual({
      ingress: [{ cidr_blocks: ['10.0.0.0/8'], from_port: '443', to_port: '443' }],
      tags: { Name: 'app', 'kubernetes.io/role': 'elb' },
    });
    // `"" => "x"` is an attribute that appears; the count of a list shown without its elements says
    // nothing of what it held: left out.
    expect(sg!.before).toEqual({ tags: { Name: 'app' } });
    expect(sg!.replacePaths).toEqual([['tags', 'kubernetes', 'io/role']]);
    expect(sg!.afterUnknown).toEqual([['vpc_security_group_ids']]);
  });

  it('CI noise: GitHub timestamps, Terragrunt prefixes and colours around the plan', () => {
    const noisy = [
      '2026-01-01T00:00:00.0000000Z Run terraform plan',
      '[infra/app] terraform: \x1b[1m  # aws_instance.web[0]\x1b[0m will be updated in-place',
      '[infra/app] terraform: \x1b[0m  \x1b[33m~\x1b[0m resource "aws_instance" "web" {',
      '[infra/app] terraform:         id            = "i-0aaa"',
      '[infra/app] terraform:       \x1b[33m~\x1b[0m instance_type = "t3.micro" \x1b[33m->\x1b[0m "t3.large"',
      '[infra/app] terraform:     }',
      '2026-01-01T00:00:01.0000000Z Plan: 0 to add, 1 to change, 0 to destroy.',
      'Post job cleanup.',
    ].join('\r\n');
    const plan = parsePlan(noisy);
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]).toMatchObject({
      address: 'aws_instance.web[0]',
      action: 'update',
      before: { id: 'i-0aaa', instance_type: 't3.micro' },
      after: { id: 'i-0aaa', instance_type: 't3.large' },
      source: { kind: 'text', lines: { start: 2, end: 6 } },
    });
  });

  it('refuses what is not a plan with a 400 that says what was expected', () => {
    for (const bad of ['', '   ', 'just some words', '{"a": 1}', '{not json', '[1,2]']) {
      expect(() => parsePlan(bad)).toThrow(BadRequest);
    }
    expect(() => parsePlan('hello')).toThrow(/Expected the output of `terraform plan`/);
    expect(parsePlan('No changes. Your infrastructure matches the configuration.').noChanges).toBe(true);
  });

  it('a quoted key that is not valid JSON is kept as written, not a crash (it was a 500)', () => {
    const plan = [
      '  # aws_instance.a will be updated in-place',
      '  ~ resource "aws_instance" "a" {',
      '      ~ tags = {',
      '          ~ "a\\q" = "x" -> "y"',
      '        }',
      '    }',
      '',
      'Plan: 0 to add, 1 to change, 0 to destroy.',
    ].join('\n');
    const change = parsePlan(plan).changes[0]!;
    expect(change.address).toBe('aws_instance.a');
    expect(change.after).toMatchObject({ tags: { 'a\\q': 'y' } });
    expect(change.before).toMatchObject({ tags: { 'a\\q': 'x' } });
  });
});
