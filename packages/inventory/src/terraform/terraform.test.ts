import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { InventoryResource } from '../model';
import {
  countSkippedByType,
  createTerraformStateConnector,
  parseTerraformState,
  SUPPORTED_TERRAFORM_TYPES,
  TerraformStateError,
  type TerraformStateImport,
} from './index';

const FIXTURE = fileURLToPath(new URL('./fixtures/show.json', import.meta.url));
const fixture = (): any => JSON.parse(readFileSync(FIXTURE, 'utf8'));

const byTuple = (a: string[], b: string[]) => {
  const x = a.join('\u0000');
  const y = b.join('\u0000');
  return x < y ? -1 : x > y ? 1 : 0;
};

function find(r: TerraformStateImport, nativeId: string): InventoryResource {
  const hit = r.resources.find((x) => x.nativeId === nativeId);
  if (!hit) throw new Error(`no resource ${nativeId}`);
  return hit;
}

function edgeTuples(r: TerraformStateImport): string[][] {
  const byArn = new Map(r.resources.map((x) => [x.arn, x.nativeId]));
  return r.edges.map((e) => [byArn.get(e.from)!, e.kind, byArn.get(e.to)!]).sort(byTuple);
}

/** A minimal state document around some resources. */
const state = (resources: unknown[], extra: Record<string, unknown> = {}) => ({
  format_version: '1.0',
  terraform_version: '1.9.5',
  values: { root_module: { resources } },
  ...extra,
});

const managed = (address: string, values: Record<string, unknown>, more: Record<string, unknown> = {}) => {
  const [type, name] = address
    .replace(/\[.*\]$/, '')
    .split('.')
    .slice(-2) as [string, string];
  return {
    address,
    mode: 'managed',
    type,
    name,
    provider_name: 'registry.terraform.io/hashicorp/aws',
    schema_version: 0,
    values,
    sensitive_values: {},
    ...more,
  };
};

const EXPECTED_RESOURCES = [
  ['aws_cloudwatch_alarm', 'prod-db-cpu-high'],
  ['aws_cloudwatch_log_group', '/aws/vpc/prod-vpc/flow-logs'],
  ['aws_ebs_volume', 'vol-0a1b2c3d4e5f60001'],
  ['aws_ebs_volume', 'vol-0b2c3d4e5f6a70002'],
  ['aws_ebs_volume', 'vol-0c3d4e5f6a7b80003'],
  ['aws_ebs_volume', 'vol-0d4e5f6a7b8c90004'],
  ['aws_ec2_application_load_balancer', 'prod-web'],
  ['aws_ec2_autoscaling_group', 'prod-web-asg'],
  ['aws_ec2_instance', 'i-0a1b2c3d4e5f67890'],
  ['aws_ec2_instance', 'i-0b2c3d4e5f6a78901'],
  ['aws_ec2_launch_template', 'lt-0a1b2c3d4e5f6a7b8'],
  ['aws_ec2_target_group', 'prod-web-tg'],
  ['aws_iam_instance_profile', 'prod-bastion-profile'],
  ['aws_iam_role', 'prod-bastion'],
  ['aws_rds_db_instance', 'prod'],
  ['aws_s3_bucket', 'opsi-prod-customer-exports-9f3c2a1b'],
  ['aws_vpc', 'vpc-0a3f5c1e7b2d94e60'],
  ['aws_vpc_eip', 'eipalloc-0b8e3f6c9d2a54701'],
  ['aws_vpc_eip', 'eipalloc-0c1d2e3f4a5b60789'],
  ['aws_vpc_internet_gateway', 'igw-0a7d2e5b8c1f43690'],
  ['aws_vpc_nat_gateway', 'nat-0e1b6c9f2a5d87034'],
  ['aws_vpc_route_table', 'rtb-0a2c7d0e3b6f98145'],
  ['aws_vpc_route_table', 'rtb-0b3d8e1f4c7a09256'],
  ['aws_vpc_route_table', 'rtb-0c4e9f2a5d8b10367'],
  ['aws_vpc_route_table', 'rtb-0d5f0a3b6e9c21478'],
  ['aws_vpc_security_group', 'sg-0a1b2c3d4e5f60718'],
  ['aws_vpc_security_group', 'sg-0b2c3d4e5f6071829'],
  ['aws_vpc_security_group', 'sg-0c3d4e5f60718293a'],
  ['aws_vpc_security_group', 'sg-0d4e5f60718293a4b'],
  ['aws_vpc_subnet', 'subnet-0b1e4d7a2c5f80931'],
  ['aws_vpc_subnet', 'subnet-0c2f5e8b3d6a91042'],
  ['aws_vpc_subnet', 'subnet-0d3a6f9c4e7b02153'],
  ['aws_vpc_subnet', 'subnet-0e4b7a0d5f8c13264'],
  ['aws_vpc_subnet', 'subnet-0f5c8b1e6a9d24375'],
];

const EXPECTED_EDGES = [
  ['eipalloc-0b8e3f6c9d2a54701', 'attached-to', 'nat-0e1b6c9f2a5d87034'],
  ['eipalloc-0b8e3f6c9d2a54701', 'depends-on', 'igw-0a7d2e5b8c1f43690'],
  ['eipalloc-0b8e3f6c9d2a54701', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['eipalloc-0c1d2e3f4a5b60789', 'attached-to', 'i-0a1b2c3d4e5f67890'],
  ['eipalloc-0c1d2e3f4a5b60789', 'depends-on', 'i-0a1b2c3d4e5f67890'],
  ['eipalloc-0c1d2e3f4a5b60789', 'depends-on', 'prod-bastion'],
  ['eipalloc-0c1d2e3f4a5b60789', 'depends-on', 'prod-bastion-profile'],
  ['eipalloc-0c1d2e3f4a5b60789', 'depends-on', 'sg-0a1b2c3d4e5f60718'],
  ['eipalloc-0c1d2e3f4a5b60789', 'depends-on', 'subnet-0b1e4d7a2c5f80931'],
  ['eipalloc-0c1d2e3f4a5b60789', 'depends-on', 'subnet-0c2f5e8b3d6a91042'],
  ['eipalloc-0c1d2e3f4a5b60789', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['i-0a1b2c3d4e5f67890', 'depends-on', 'prod-bastion'],
  ['i-0a1b2c3d4e5f67890', 'depends-on', 'prod-bastion-profile'],
  ['i-0a1b2c3d4e5f67890', 'depends-on', 'sg-0a1b2c3d4e5f60718'],
  ['i-0a1b2c3d4e5f67890', 'depends-on', 'subnet-0b1e4d7a2c5f80931'],
  ['i-0a1b2c3d4e5f67890', 'depends-on', 'subnet-0c2f5e8b3d6a91042'],
  ['i-0a1b2c3d4e5f67890', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['i-0a1b2c3d4e5f67890', 'member-of', 'subnet-0b1e4d7a2c5f80931'],
  ['i-0a1b2c3d4e5f67890', 'protected-by', 'sg-0a1b2c3d4e5f60718'],
  ['i-0a1b2c3d4e5f67890', 'uses-role', 'prod-bastion'],
  ['i-0b2c3d4e5f6a78901', 'depends-on', 'sg-0a1b2c3d4e5f60718'],
  ['i-0b2c3d4e5f6a78901', 'depends-on', 'sg-0b2c3d4e5f6071829'],
  ['i-0b2c3d4e5f6a78901', 'depends-on', 'sg-0c3d4e5f60718293a'],
  ['i-0b2c3d4e5f6a78901', 'depends-on', 'subnet-0d3a6f9c4e7b02153'],
  ['i-0b2c3d4e5f6a78901', 'depends-on', 'subnet-0e4b7a0d5f8c13264'],
  ['i-0b2c3d4e5f6a78901', 'depends-on', 'subnet-0f5c8b1e6a9d24375'],
  ['i-0b2c3d4e5f6a78901', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['i-0b2c3d4e5f6a78901', 'member-of', 'subnet-0e4b7a0d5f8c13264'],
  ['i-0b2c3d4e5f6a78901', 'protected-by', 'sg-0c3d4e5f60718293a'],
  ['igw-0a7d2e5b8c1f43690', 'attached-to', 'vpc-0a3f5c1e7b2d94e60'],
  ['igw-0a7d2e5b8c1f43690', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['lt-0a1b2c3d4e5f6a7b8', 'depends-on', 'sg-0a1b2c3d4e5f60718'],
  ['lt-0a1b2c3d4e5f6a7b8', 'depends-on', 'sg-0b2c3d4e5f6071829'],
  ['lt-0a1b2c3d4e5f6a7b8', 'depends-on', 'sg-0c3d4e5f60718293a'],
  ['lt-0a1b2c3d4e5f6a7b8', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['nat-0e1b6c9f2a5d87034', 'depends-on', 'eipalloc-0b8e3f6c9d2a54701'],
  ['nat-0e1b6c9f2a5d87034', 'depends-on', 'igw-0a7d2e5b8c1f43690'],
  ['nat-0e1b6c9f2a5d87034', 'depends-on', 'subnet-0b1e4d7a2c5f80931'],
  ['nat-0e1b6c9f2a5d87034', 'depends-on', 'subnet-0c2f5e8b3d6a91042'],
  ['nat-0e1b6c9f2a5d87034', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['nat-0e1b6c9f2a5d87034', 'member-of', 'subnet-0b1e4d7a2c5f80931'],
  ['prod', 'depends-on', 'sg-0d4e5f60718293a4b'],
  ['prod', 'depends-on', 'subnet-0d3a6f9c4e7b02153'],
  ['prod', 'depends-on', 'subnet-0e4b7a0d5f8c13264'],
  ['prod', 'depends-on', 'subnet-0f5c8b1e6a9d24375'],
  ['prod', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['prod', 'protected-by', 'sg-0d4e5f60718293a4b'],
  ['prod-bastion-profile', 'depends-on', 'prod-bastion'],
  ['prod-bastion-profile', 'uses-role', 'prod-bastion'],
  ['prod-db-cpu-high', 'depends-on', 'prod'],
  ['prod-db-cpu-high', 'depends-on', 'sg-0d4e5f60718293a4b'],
  ['prod-db-cpu-high', 'depends-on', 'subnet-0d3a6f9c4e7b02153'],
  ['prod-db-cpu-high', 'depends-on', 'subnet-0e4b7a0d5f8c13264'],
  ['prod-db-cpu-high', 'depends-on', 'subnet-0f5c8b1e6a9d24375'],
  ['prod-db-cpu-high', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['prod-db-cpu-high', 'monitors', 'prod'],
  ['prod-web', 'depends-on', 'sg-0b2c3d4e5f6071829'],
  ['prod-web', 'depends-on', 'subnet-0b1e4d7a2c5f80931'],
  ['prod-web', 'depends-on', 'subnet-0c2f5e8b3d6a91042'],
  ['prod-web', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['prod-web', 'member-of', 'subnet-0b1e4d7a2c5f80931'],
  ['prod-web', 'member-of', 'subnet-0c2f5e8b3d6a91042'],
  ['prod-web', 'protected-by', 'sg-0b2c3d4e5f6071829'],
  ['prod-web', 'routes-to', 'prod-web-tg'],
  ['prod-web-asg', 'depends-on', 'lt-0a1b2c3d4e5f6a7b8'],
  ['prod-web-asg', 'depends-on', 'prod-web-tg'],
  ['prod-web-asg', 'depends-on', 'sg-0a1b2c3d4e5f60718'],
  ['prod-web-asg', 'depends-on', 'sg-0b2c3d4e5f6071829'],
  ['prod-web-asg', 'depends-on', 'sg-0c3d4e5f60718293a'],
  ['prod-web-asg', 'depends-on', 'subnet-0d3a6f9c4e7b02153'],
  ['prod-web-asg', 'depends-on', 'subnet-0e4b7a0d5f8c13264'],
  ['prod-web-asg', 'depends-on', 'subnet-0f5c8b1e6a9d24375'],
  ['prod-web-asg', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['prod-web-asg', 'member-of', 'subnet-0d3a6f9c4e7b02153'],
  ['prod-web-tg', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['prod-web-tg', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['prod-web-tg', 'targets', 'prod-web-asg'],
  ['rtb-0a2c7d0e3b6f98145', 'depends-on', 'igw-0a7d2e5b8c1f43690'],
  ['rtb-0a2c7d0e3b6f98145', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['rtb-0a2c7d0e3b6f98145', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['rtb-0a2c7d0e3b6f98145', 'routes-to', 'igw-0a7d2e5b8c1f43690'],
  ['rtb-0b3d8e1f4c7a09256', 'depends-on', 'eipalloc-0b8e3f6c9d2a54701'],
  ['rtb-0b3d8e1f4c7a09256', 'depends-on', 'igw-0a7d2e5b8c1f43690'],
  ['rtb-0b3d8e1f4c7a09256', 'depends-on', 'nat-0e1b6c9f2a5d87034'],
  ['rtb-0b3d8e1f4c7a09256', 'depends-on', 'subnet-0b1e4d7a2c5f80931'],
  ['rtb-0b3d8e1f4c7a09256', 'depends-on', 'subnet-0c2f5e8b3d6a91042'],
  ['rtb-0b3d8e1f4c7a09256', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['rtb-0b3d8e1f4c7a09256', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['rtb-0b3d8e1f4c7a09256', 'routes-to', 'nat-0e1b6c9f2a5d87034'],
  ['rtb-0c4e9f2a5d8b10367', 'depends-on', 'eipalloc-0b8e3f6c9d2a54701'],
  ['rtb-0c4e9f2a5d8b10367', 'depends-on', 'igw-0a7d2e5b8c1f43690'],
  ['rtb-0c4e9f2a5d8b10367', 'depends-on', 'nat-0e1b6c9f2a5d87034'],
  ['rtb-0c4e9f2a5d8b10367', 'depends-on', 'subnet-0b1e4d7a2c5f80931'],
  ['rtb-0c4e9f2a5d8b10367', 'depends-on', 'subnet-0c2f5e8b3d6a91042'],
  ['rtb-0c4e9f2a5d8b10367', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['rtb-0c4e9f2a5d8b10367', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['rtb-0c4e9f2a5d8b10367', 'routes-to', 'nat-0e1b6c9f2a5d87034'],
  ['rtb-0d5f0a3b6e9c21478', 'depends-on', 'eipalloc-0b8e3f6c9d2a54701'],
  ['rtb-0d5f0a3b6e9c21478', 'depends-on', 'igw-0a7d2e5b8c1f43690'],
  ['rtb-0d5f0a3b6e9c21478', 'depends-on', 'nat-0e1b6c9f2a5d87034'],
  ['rtb-0d5f0a3b6e9c21478', 'depends-on', 'subnet-0b1e4d7a2c5f80931'],
  ['rtb-0d5f0a3b6e9c21478', 'depends-on', 'subnet-0c2f5e8b3d6a91042'],
  ['rtb-0d5f0a3b6e9c21478', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['rtb-0d5f0a3b6e9c21478', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['rtb-0d5f0a3b6e9c21478', 'routes-to', 'nat-0e1b6c9f2a5d87034'],
  ['sg-0a1b2c3d4e5f60718', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['sg-0a1b2c3d4e5f60718', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['sg-0b2c3d4e5f6071829', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['sg-0b2c3d4e5f6071829', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['sg-0c3d4e5f60718293a', 'depends-on', 'sg-0a1b2c3d4e5f60718'],
  ['sg-0c3d4e5f60718293a', 'depends-on', 'sg-0b2c3d4e5f6071829'],
  ['sg-0c3d4e5f60718293a', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['sg-0c3d4e5f60718293a', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['sg-0d4e5f60718293a4b', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['sg-0d4e5f60718293a4b', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0b1e4d7a2c5f80931', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0b1e4d7a2c5f80931', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0b1e4d7a2c5f80931', 'routes-to', 'rtb-0a2c7d0e3b6f98145'],
  ['subnet-0c2f5e8b3d6a91042', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0c2f5e8b3d6a91042', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0c2f5e8b3d6a91042', 'routes-to', 'rtb-0a2c7d0e3b6f98145'],
  ['subnet-0d3a6f9c4e7b02153', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0d3a6f9c4e7b02153', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0d3a6f9c4e7b02153', 'routes-to', 'rtb-0b3d8e1f4c7a09256'],
  ['subnet-0e4b7a0d5f8c13264', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0e4b7a0d5f8c13264', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0e4b7a0d5f8c13264', 'routes-to', 'rtb-0c4e9f2a5d8b10367'],
  ['subnet-0f5c8b1e6a9d24375', 'depends-on', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0f5c8b1e6a9d24375', 'member-of', 'vpc-0a3f5c1e7b2d94e60'],
  ['subnet-0f5c8b1e6a9d24375', 'routes-to', 'rtb-0d5f0a3b6e9c21478'],
  ['vol-0a1b2c3d4e5f60001', 'attached-to', 'i-0a1b2c3d4e5f67890'],
  ['vol-0b2c3d4e5f6a70002', 'attached-to', 'i-0b2c3d4e5f6a78901'],
  ['vol-0c3d4e5f6a7b80003', 'attached-to', 'i-0b2c3d4e5f6a78901'],
];

describe('parseTerraformState on the committed fixture', () => {
  const result = parseTerraformState(fixture());

  it('imports exactly the managed AWS resources, across the root module and nested child modules', () => {
    expect(result.resources.map((r) => [r.type, r.nativeId]).sort(byTuple)).toEqual(EXPECTED_RESOURCES);
    // Every ARN is distinct: it is the inventory's key.
    expect(new Set(result.resources.map((r) => r.arn)).size).toBe(result.resources.length);
    expect(result.terraformVersion).toBe('1.9.5');
  });

  it('derives exactly the expected edges, all stated by Terraform', () => {
    expect(edgeTuples(result)).toEqual(EXPECTED_EDGES);
    expect(result.edges.every((e) => e.source === 'terraform' && e.confidence === 1)).toBe(true);
    expect(new Set(result.edges.map((e) => `${e.from}|${e.kind}|${e.to}`)).size).toBe(result.edges.length);
  });

  it('maps security groups to one rule row per source, with sg-bastion open on 22 to the world', () => {
    const bastion = find(result, 'sg-0a1b2c3d4e5f60718');
    expect(bastion.type).toBe('aws_vpc_security_group');
    expect(bastion.name).toBe('sg-bastion');
    expect(bastion.attributes).toMatchObject({ group_id: 'sg-0a1b2c3d4e5f60718', group_name: 'sg-bastion' });
    expect(bastion.attributes.rules).toEqual([
      {
        type: 'ingress',
        ip_protocol: 'tcp',
        from_port: 22,
        to_port: 22,
        cidr_ipv4: '0.0.0.0/0',
        cidr_ipv6: null,
        referenced_group_id: null,
        prefix_list_id: null,
        description: 'ssh from anywhere (temporary)',
        security_group_rule_id: null,
      },
      {
        type: 'egress',
        ip_protocol: '-1',
        from_port: null,
        to_port: null,
        cidr_ipv4: '0.0.0.0/0',
        cidr_ipv6: null,
        referenced_group_id: null,
        prefix_list_id: null,
        description: 'all outbound',
        security_group_rule_id: null,
      },
    ]);

    // One inline block with an IPv4 and an IPv6 CIDR gives two rows.
    const alb = find(result, 'sg-0b2c3d4e5f6071829');
    const https = (alb.attributes.rules as any[]).filter((r) => r.from_port === 443);
    expect(https.map((r) => [r.cidr_ipv4, r.cidr_ipv6])).toEqual([
      ['0.0.0.0/0', null],
      [null, '::/0'],
    ]);
  });

  it('merges aws_security_group_rule and aws_vpc_security_group_ingress_rule into their group, once each', () => {
    const db = find(result, 'sg-0d4e5f60718293a4b');
    // The group's refreshed ingress list repeats the rule managed by aws_security_group_rule.db_from_app.
    expect(
      (db.attributes.rules as any[]).map((r) => [
        r.type,
        r.from_port,
        r.referenced_group_id,
        r.security_group_rule_id,
      ]),
    ).toEqual([
      ['ingress', 3306, 'sg-0c3d4e5f60718293a', 'sgr-0a1b2c3d4e5f67890'],
      ['ingress', 3306, 'sg-0a1b2c3d4e5f60718', 'sgr-0b2c3d4e5f6789012'],
    ]);
  });

  it('maps the prod RDS instance with its single-AZ, no-backup settings', () => {
    const db = find(result, 'prod');
    expect(db).toMatchObject({
      type: 'aws_rds_db_instance',
      arn: 'arn:aws:rds:us-east-1:111122223333:db:prod',
      availabilityZone: 'us-east-1a',
      sizeValue: 100,
      sizeUnit: 'GiB',
    });
    expect(db.attributes).toMatchObject({
      db_instance_identifier: 'prod',
      class: 'db.m5.large',
      engine: 'mysql',
      engine_version: '8.0.35',
      multi_az: false,
      backup_retention_period: 0,
      deletion_protection: false,
      publicly_accessible: true,
      storage_encrypted: false,
      storage_type: 'gp2',
      allocated_storage: 100,
      iops: null,
    });
  });

  it('records the volume attachment on the volume and the instance, and leaves the gp2 data volume available', () => {
    const logs = find(result, 'vol-0c3d4e5f6a7b80003');
    expect(logs.attributes).toMatchObject({
      volume_type: 'gp3',
      size: 50,
      iops: 3000,
      throughput: 125,
      state: 'in-use',
    });
    expect(logs.attributes.attachments).toEqual([
      {
        volume_id: 'vol-0c3d4e5f6a7b80003',
        instance_id: 'i-0b2c3d4e5f6a78901',
        device: '/dev/sdf',
        delete_on_termination: false,
        state: 'attached',
      },
    ]);
    const batch = find(result, 'i-0b2c3d4e5f6a78901');
    expect(
      (batch.attributes.block_device_mappings as any[]).map((m) => [m.device_name, m.volume_id]),
    ).toEqual([
      ['/dev/xvda', 'vol-0b2c3d4e5f6a70002'],
      ['/dev/sdf', 'vol-0c3d4e5f6a7b80003'],
    ]);

    const data = find(result, 'vol-0d4e5f6a7b8c90004');
    expect(data).toMatchObject({
      name: 'prod-data',
      sizeValue: 200,
      sizeUnit: 'GiB',
      availabilityZone: 'us-east-1a',
    });
    expect(data.attributes).toMatchObject({
      volume_type: 'gp2',
      size: 200,
      iops: 600,
      throughput: null,
      encrypted: false,
      state: 'available',
      attachments: [],
    });

    // An instance's root volume is a real volume Terraform tracks inside the instance.
    const root = find(result, 'vol-0b2c3d4e5f6a70002');
    expect(root).toMatchObject({ type: 'aws_ebs_volume', sizeValue: 100, availabilityZone: 'us-east-1b' });
    expect(root.attributes).toMatchObject({
      volume_type: 'gp2',
      state: 'in-use',
      terraform_address: 'aws_instance.batch[0].root_block_device',
    });
  });

  it('maps instances with Steampipe-style attributes', () => {
    const bastion = find(result, 'i-0a1b2c3d4e5f67890');
    expect(bastion).toMatchObject({
      type: 'aws_ec2_instance',
      name: 'prod-bastion',
      region: 'us-east-1',
      availabilityZone: 'us-east-1a',
      accountId: '111122223333',
      sizeValue: 2,
      sizeUnit: 'vCPU',
    });
    expect(bastion.attributes).toMatchObject({
      instance_id: 'i-0a1b2c3d4e5f67890',
      instance_type: 't3.micro',
      instance_state: 'running',
      subnet_id: 'subnet-0b1e4d7a2c5f80931',
      vpc_id: 'vpc-0a3f5c1e7b2d94e60',
      security_groups: [{ group_id: 'sg-0a1b2c3d4e5f60718', group_name: 'sg-bastion' }],
      iam_instance_profile: 'prod-bastion-profile',
      iam_instance_profile_arn: 'arn:aws:iam::111122223333:instance-profile/prod-bastion-profile',
      public_ip_address: '52.70.141.33',
      metadata_options: { http_tokens: 'optional' },
      terraform_address: 'aws_instance.bastion',
    });
    expect(bastion.tags).toMatchObject({ Name: 'prod-bastion', env: 'prod', service: 'bastion' });
  });

  it('places resources without an ARN or zone through what they reference', () => {
    // The NAT gateway has no ARN and no zone of its own: its subnet gives both.
    const nat = find(result, 'nat-0e1b6c9f2a5d87034');
    expect(nat).toMatchObject({
      arn: 'arn:aws:ec2:us-east-1:111122223333:natgateway/nat-0e1b6c9f2a5d87034',
      availabilityZone: 'us-east-1a',
      region: 'us-east-1',
    });
    expect(nat.attributes).toMatchObject({
      subnet_id: 'subnet-0b1e4d7a2c5f80931',
      vpc_id: 'vpc-0a3f5c1e7b2d94e60',
    });
    const eip = find(result, 'eipalloc-0c1d2e3f4a5b60789');
    expect(eip.arn).toBe('arn:aws:ec2:us-east-1:111122223333:elastic-ip/eipalloc-0c1d2e3f4a5b60789');
    expect(eip.attributes).toMatchObject({
      allocation_id: 'eipalloc-0c1d2e3f4a5b60789',
      public_ip: '52.70.141.33',
      association_id: 'eipassoc-0d2e3f4a5b6c70890',
      instance_id: 'i-0a1b2c3d4e5f67890',
    });
    const role = find(result, 'prod-bastion');
    expect(role).toMatchObject({ type: 'aws_iam_role', region: 'global', availabilityZone: null });
  });

  it('maps the network, load balancing and monitoring resources', () => {
    const priv = find(result, 'rtb-0c4e9f2a5d8b10367');
    expect(priv.attributes.routes).toMatchObject([
      { destination_cidr_block: '0.0.0.0/0', nat_gateway_id: 'nat-0e1b6c9f2a5d87034', gateway_id: null },
    ]);
    expect(priv.attributes.associations).toEqual([
      {
        route_table_association_id: 'rtbassoc-0b2c3d4e5f6a70801',
        subnet_id: 'subnet-0e4b7a0d5f8c13264',
        gateway_id: null,
        main: false,
      },
    ]);
    expect(find(result, 'subnet-0e4b7a0d5f8c13264').attributes).toMatchObject({
      availability_zone: 'us-east-1b',
      route_table_id: 'rtb-0c4e9f2a5d8b10367',
      map_public_ip_on_launch: false,
    });

    const lb = find(result, 'prod-web');
    expect(lb.attributes).toMatchObject({
      type: 'application',
      scheme: 'internet-facing',
      availability_zones: [
        { subnet_id: 'subnet-0b1e4d7a2c5f80931', zone_name: 'us-east-1a' },
        { subnet_id: 'subnet-0c2f5e8b3d6a91042', zone_name: 'us-east-1b' },
      ],
    });
    expect(lb.attributes.load_balancer_attributes).toContainEqual({
      key: 'deletion_protection.enabled',
      value: 'false',
    });
    expect(lb.attributes.listeners).toMatchObject([{ port: 80, protocol: 'HTTP' }]);

    expect(find(result, 'prod-web-asg').attributes).toMatchObject({
      min_size: 1,
      max_size: 1,
      desired_capacity: 1,
      availability_zones: ['us-east-1a'],
      vpc_zone_identifier: 'subnet-0d3a6f9c4e7b02153',
      launch_template: { launch_template_id: 'lt-0a1b2c3d4e5f6a7b8', version: '$Latest' },
    });

    const bucket = find(result, 'opsi-prod-customer-exports-9f3c2a1b');
    expect(bucket).toMatchObject({
      arn: 'arn:aws:s3:::opsi-prod-customer-exports-9f3c2a1b',
      region: 'us-east-1',
    });
    expect(bucket.tags.DataClassification).toBe('Sensitive');
    expect(bucket.attributes).toMatchObject({
      block_public_acls: true,
      block_public_policy: true,
      ignore_public_acls: true,
      restrict_public_buckets: true,
      bucket_policy_is_public: false,
      versioning_enabled: false,
    });

    expect(find(result, 'prod-db-cpu-high').attributes).toMatchObject({
      namespace: 'AWS/RDS',
      metric_name: 'CPUUtilization',
      dimensions: [{ name: 'DBInstanceIdentifier', value: 'prod' }],
      alarm_actions: [],
    });
    // 0 in Terraform means "never expire": AWS reports no retention.
    expect(find(result, '/aws/vpc/prod-vpc/flow-logs').attributes.retention_in_days).toBeNull();

    const role = find(result, 'prod-bastion');
    expect(role.attributes.inline_policies).toMatchObject([
      {
        name: 'read-customer-exports',
        policy: { Statement: [{ Action: ['s3:GetObject', 's3:ListBucket'] }] },
      },
    ]);
  });

  it('gives for_each and count instances distinct ARNs and addresses', () => {
    const subnets = result.resources.filter((r) =>
      r.attributes.terraform_address?.toString().includes('aws_subnet.'),
    );
    expect(subnets.map((s) => s.attributes.terraform_address).sort()).toEqual([
      'module.network.aws_subnet.private["us-east-1a"]',
      'module.network.aws_subnet.private["us-east-1b"]',
      'module.network.aws_subnet.private["us-east-1c"]',
      'module.network.aws_subnet.public[0]',
      'module.network.aws_subnet.public[1]',
    ]);
    expect(new Set(subnets.map((s) => s.arn)).size).toBe(5);
  });

  it('skips data sources, and reports unsupported types', () => {
    expect(result.resources.some((r) => r.nativeId === 'ami-0fff1b9a61dec8a5f')).toBe(false);
    expect(result.resources.some((r) => r.attributes.terraform_address?.toString().startsWith('data.'))).toBe(
      false,
    );
    expect(result.skipped).toEqual([
      { address: 'random_id.suffix', type: 'random_id', reason: 'unsupported_type' },
      { address: 'aws_db_subnet_group.prod', type: 'aws_db_subnet_group', reason: 'unsupported_type' },
      {
        address: 'module.network.module.flow_logs.aws_flow_log.this',
        type: 'aws_flow_log',
        reason: 'unsupported_type',
      },
    ]);
    expect(countSkippedByType(result.skipped)).toEqual([
      { type: 'aws_db_subnet_group', count: 1 },
      { type: 'aws_flow_log', count: 1 },
      { type: 'random_id', count: 1 },
    ]);
  });

  it('never copies secrets the state holds (the RDS password, sensitive outputs)', () => {
    expect(JSON.stringify(result)).not.toContain('not-a-real-password');
  });
});

describe('count instances', () => {
  it('keep distinct ARNs and addresses, with or without ids', () => {
    const doc = fixture();
    const root = doc.values.root_module.resources as any[];
    const batch0 = root.find((r) => r.address === 'aws_instance.batch[0]');
    const batch1 = structuredClone(batch0);
    Object.assign(batch1, { address: 'aws_instance.batch[1]', index: 1 });
    Object.assign(batch1.values, { id: 'i-0c3d4e5f6a7b89012', arn: null, private_ip: '10.20.11.85' });
    batch1.values.root_block_device[0].volume_id = 'vol-0e5f6a7b8c9d00005';
    root.push(batch1);

    const withIds = parseTerraformState(doc);
    const batches = withIds.resources.filter(
      (r) => r.type === 'aws_ec2_instance' && r.name === 'prod-batch-0',
    );
    expect(batches.map((b) => [b.nativeId, b.arn, b.attributes.terraform_address])).toEqual([
      [
        'i-0b2c3d4e5f6a78901',
        'arn:aws:ec2:us-east-1:111122223333:instance/i-0b2c3d4e5f6a78901',
        'aws_instance.batch[0]',
      ],
      [
        'i-0c3d4e5f6a7b89012',
        'arn:aws:ec2:us-east-1:111122223333:instance/i-0c3d4e5f6a7b89012',
        'aws_instance.batch[1]',
      ],
    ]);
    // depends_on of a resource that names aws_instance.batch reaches every instance of it.
    const tuples = edgeTuples(withIds);
    expect(tuples).toContainEqual(['vol-0e5f6a7b8c9d00005', 'attached-to', 'i-0c3d4e5f6a7b89012']);

    // Without ids (a state written by hand, or an import mid-apply) the address keeps them apart.
    for (const r of root) if (r.type === 'aws_instance') Object.assign(r.values, { id: null, arn: null });
    const noIds = parseTerraformState(doc);
    const arns = noIds.resources.filter((r) => r.type === 'aws_ec2_instance').map((r) => r.arn);
    expect(new Set(arns).size).toBe(3);
    expect(arns).toContain('arn:aws:ec2:us-east-1:111122223333:instance/aws_instance.batch[1]');
  });
});

describe('malformed input', () => {
  it.each([
    [null, /expected a JSON object, got null/],
    [[1, 2], /expected a JSON object, got an array/],
    ['{not json', /the text is not JSON/],
    [{}, /format_version: missing/],
    [{ format_version: 1 }, /format_version: must be a string/],
    [{ format_version: 'one' }, /format_version: must be a version like "0\.1"/],
    [{ format_version: '1.2', planned_values: {}, resource_changes: [] }, /this is a plan/],
    [
      { version: 2, terraform_version: '0.7.0', serial: 3, lineage: 'x', modules: [] },
      /terraform\.tfstate version 2 is not read \(versions 3 and 4 are\)/,
    ],
    [
      { version: 4, serial: 3, resources: [{ mode: 'managed', type: 'aws_vpc', name: 'a' }] },
      /version 4\): resources\[0\]\.instances/,
    ],
    [
      { version: 3, serial: 3, modules: [{ path: 'root', resources: {} }] },
      /version 3\): modules\[0\]\.path/,
    ],
    [
      state([{ address: 'aws_instance.a', mode: 'resource', type: 'aws_instance', name: 'a', values: {} }]),
      /values\.root_module\.resources\[0\]\.mode/,
    ],
    [state([{ mode: 'managed', type: 'aws_instance', name: 'a', values: {} }]), /resources\[0\]\.address/],
    [
      { format_version: '1.0', values: { root_module: { child_modules: [{ resources: 'x' }] } } },
      /child_modules\[0\]\.resources/,
    ],
  ])('rejects %j with a clear message', (input, message) => {
    expect(() => parseTerraformState(input)).toThrow(TerraformStateError);
    expect(() => parseTerraformState(input)).toThrow(message);
  });

  it('accepts the JSON text itself, and an empty state', () => {
    expect(parseTerraformState(readFileSync(FIXTURE, 'utf8')).resources).toHaveLength(
      EXPECTED_RESOURCES.length,
    );
    const empty = parseTerraformState(
      { format_version: '1.0' },
      { now: () => new Date('2026-01-02T03:04:05Z') },
    );
    expect(empty).toMatchObject({ resources: [], edges: [], skipped: [] });
    expect(empty.observedAt.toISOString()).toBe('2026-01-02T03:04:05.000Z');
  });
});

describe('placement', () => {
  const volume = managed('aws_ebs_volume.v', { id: 'vol-1', type: 'gp3', size: 10 });

  it('uses the options and the state timestamp when the state has no ARN to go by', () => {
    const r = parseTerraformState(state([volume], { timestamp: '2026-03-04T05:06:07Z' }), {
      accountId: '999988887777',
      defaultRegion: 'eu-west-1',
    });
    expect(r.resources[0]).toMatchObject({
      arn: 'arn:aws:ec2:eu-west-1:999988887777:volume/vol-1',
      region: 'eu-west-1',
      accountId: '999988887777',
    });
    expect(r.observedAt.toISOString()).toBe('2026-03-04T05:06:07.000Z');
  });

  it('takes the region from the zone and the account from any ARN in the state', () => {
    const r = parseTerraformState(
      state([
        { ...volume, values: { ...volume.values, availability_zone: 'eu-central-1b' } },
        managed('aws_iam_role.r', { name: 'r', arn: 'arn:aws:iam::123412341234:role/r' }),
      ]),
      { defaultRegion: 'us-west-2' },
    );
    expect(find(r, 'vol-1')).toMatchObject({
      arn: 'arn:aws:ec2:eu-central-1:123412341234:volume/vol-1',
      region: 'eu-central-1',
      availabilityZone: 'eu-central-1b',
    });
  });
});

describe('merged resources', () => {
  const TG = 'arn:aws:elasticloadbalancing:us-east-1:111122223333:targetgroup/tg/abc';
  const LB = 'arn:aws:elasticloadbalancing:us-east-1:111122223333:loadbalancer/app/web/123';
  const doc = state([
    managed('aws_s3_bucket.site', { bucket: 'site', arn: 'arn:aws:s3:::site', region: 'us-east-1' }),
    managed('aws_s3_bucket_policy.site', {
      bucket: 'site',
      policy: JSON.stringify({ Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject' }] }),
    }),
    managed('aws_s3_bucket_acl.site', { bucket: 'site', acl: 'public-read', access_control_policy: [] }),
    managed('aws_s3_bucket_versioning.site', {
      bucket: 'site',
      versioning_configuration: [{ status: 'Enabled' }],
    }),
    managed('aws_instance.web', { id: 'i-1', arn: 'arn:aws:ec2:us-east-1:111122223333:instance/i-1' }),
    managed('aws_eip.web', {
      id: 'eipalloc-1',
      allocation_id: 'eipalloc-1',
      public_ip: '1.2.3.4',
      instance: '',
    }),
    managed('aws_eip_association.web', { id: 'eipassoc-1', allocation_id: 'eipalloc-1', instance_id: 'i-1' }),
    managed('aws_route_table.rt', { id: 'rtb-1', vpc_id: 'vpc-1', route: [] }),
    managed('aws_route.egress', {
      route_table_id: 'rtb-1',
      destination_cidr_block: '0.0.0.0/0',
      gateway_id: 'igw-1',
    }),
    managed('aws_internet_gateway.gw', { id: 'igw-1', vpc_id: 'vpc-1' }),
    managed('aws_lb.web', { arn: LB, name: 'web', load_balancer_type: 'application' }),
    managed('aws_lb_target_group.tg', { arn: TG, name: 'tg', load_balancer_arns: [] }),
    managed('aws_lb_target_group_attachment.web', { target_group_arn: TG, target_id: 'i-1', port: 80 }),
    managed('aws_cloudwatch_metric_alarm.lb5xx', {
      alarm_name: 'web-5xx',
      dimensions: { LoadBalancer: 'app/web/123' },
      alarm_actions: ['arn:aws:sns:us-east-1:111122223333:oncall'],
    }),
    managed('aws_iam_role.app', {
      name: 'app',
      arn: 'arn:aws:iam::111122223333:role/app',
      inline_policy: [],
    }),
    managed('aws_iam_policy.read', {
      name: 'read',
      arn: 'arn:aws:iam::111122223333:policy/read',
      policy: '{}',
    }),
    managed('aws_iam_role_policy_attachment.app', {
      role: 'app',
      policy_arn: 'arn:aws:iam::111122223333:policy/read',
    }),
    managed('aws_security_group_rule.orphan', {
      security_group_id: 'sg-elsewhere',
      type: 'ingress',
      protocol: 'tcp',
    }),
  ]);
  const r = parseTerraformState(doc);

  it('folds S3, EIP, route, target and policy sub-resources into their parents', () => {
    expect(find(r, 'site').attributes).toMatchObject({
      bucket_policy_is_public: true,
      versioning_enabled: true,
      acl: {
        grants: [
          {
            grantee: { type: 'Group', uri: 'http://acs.amazonaws.com/groups/global/AllUsers' },
            permission: 'READ',
          },
        ],
      },
      block_public_acls: null,
    });
    expect(find(r, 'eipalloc-1').attributes).toMatchObject({
      association_id: 'eipassoc-1',
      instance_id: 'i-1',
    });
    expect(find(r, 'rtb-1').attributes.routes).toMatchObject([
      { destination_cidr_block: '0.0.0.0/0', gateway_id: 'igw-1' },
    ]);
    expect(find(r, 'tg').attributes.target_health_descriptions).toMatchObject([
      { target: { id: 'i-1', port: 80 } },
    ]);
    expect(find(r, 'app').attributes.attached_policy_arns).toEqual(['arn:aws:iam::111122223333:policy/read']);
    expect(edgeTuples(r)).toEqual([
      ['eipalloc-1', 'attached-to', 'i-1'],
      ['read', 'attached-to', 'app'],
      ['rtb-1', 'routes-to', 'igw-1'],
      ['tg', 'targets', 'i-1'],
      ['web-5xx', 'monitors', 'web'],
    ]);
  });

  it('reports a sub-resource whose parent is not in the state', () => {
    expect(r.skipped).toEqual([
      {
        address: 'aws_security_group_rule.orphan',
        type: 'aws_security_group_rule',
        reason: 'parent_not_in_state',
      },
    ]);
  });
});

describe('the other supported types', () => {
  it('maps each to its type with its key attributes and references', () => {
    const r = parseTerraformState(
      state([
        managed('aws_dynamodb_table.orders', {
          name: 'orders',
          billing_mode: 'PAY_PER_REQUEST',
          point_in_time_recovery: [{ enabled: false }],
          deletion_protection_enabled: false,
        }),
        managed('aws_elasticache_replication_group.cache', {
          id: 'prod-cache',
          replication_group_id: 'prod-cache',
          node_type: 'cache.r6g.large',
          automatic_failover_enabled: false,
          multi_az_enabled: false,
          security_group_ids: ['sg-cache'],
        }),
        managed('aws_security_group.cache', { id: 'sg-cache', name: 'cache', ingress: [], egress: [] }),
        managed('aws_iam_user.alice', { name: 'alice', arn: 'arn:aws:iam::111122223333:user/alice' }),
        managed('aws_iam_access_key.alice', {
          id: 'AKIAEXAMPLE',
          user: 'alice',
          status: 'Active',
          secret: 'very-secret',
          create_date: '2025-05-01T00:00:00Z',
        }),
        managed('aws_lambda_function.fn', {
          function_name: 'fn',
          runtime: 'nodejs20.x',
          role: 'arn:aws:iam::111122223333:role/fn',
        }),
        managed('aws_iam_role.fn', { name: 'fn', arn: 'arn:aws:iam::111122223333:role/fn' }),
        managed('aws_cloudtrail.main', { name: 'main', is_multi_region_trail: false, enable_logging: true }),
        managed('aws_lb.web', {
          arn: 'arn:aws:elasticloadbalancing:us-east-1:111122223333:loadbalancer/app/web/1',
          name: 'web',
          dns_name: 'web-1.us-east-1.elb.amazonaws.com',
        }),
        managed('aws_route53_record.www', {
          id: 'Z1_www.example.com_A',
          fqdn: 'www.example.com',
          type: 'A',
          zone_id: 'Z1',
          alias: [{ name: 'dualstack.web-1.us-east-1.elb.amazonaws.com.', zone_id: 'Z35' }],
        }),
        managed('aws_launch_template.lt', {
          id: 'lt-1',
          name: 'lt',
          metadata_options: [{ http_tokens: 'optional' }],
        }),
        managed('aws_ebs_snapshot.snap', { id: 'snap-1', volume_id: 'vol-gone', volume_size: 8 }),
        managed('aws_db_snapshot.snap', {
          id: 'manual-1',
          db_snapshot_identifier: 'manual-1',
          allocated_storage: 20,
        }),
        managed('aws_iam_policy.p', { name: 'p', policy: '{"Statement":[]}' }),
      ]),
      { accountId: '111122223333', defaultRegion: 'us-east-1' },
    );
    expect(r.resources.map((x) => [x.type, x.nativeId]).sort(byTuple)).toEqual([
      ['aws_cloudtrail_trail', 'main'],
      ['aws_dynamodb_table', 'orders'],
      ['aws_ebs_snapshot', 'snap-1'],
      ['aws_ec2_application_load_balancer', 'web'],
      ['aws_ec2_launch_template', 'lt-1'],
      ['aws_elasticache_replication_group', 'prod-cache'],
      ['aws_iam_access_key', 'AKIAEXAMPLE'],
      ['aws_iam_policy', 'p'],
      ['aws_iam_role', 'fn'],
      ['aws_iam_user', 'alice'],
      ['aws_lambda_function', 'fn'],
      ['aws_rds_db_snapshot', 'manual-1'],
      ['aws_route53_record', 'Z1_www.example.com_A'],
      ['aws_vpc_security_group', 'sg-cache'],
    ]);
    expect(find(r, 'orders').attributes).toMatchObject({
      billing_mode: 'PAY_PER_REQUEST',
      point_in_time_recovery_enabled: false,
      deletion_protection_enabled: false,
    });
    expect(find(r, 'prod-cache').attributes).toMatchObject({
      automatic_failover: 'disabled',
      multi_az: 'disabled',
      cache_node_type: 'cache.r6g.large',
    });
    expect(find(r, 'AKIAEXAMPLE')).toMatchObject({ name: 'alice', region: 'global' });
    expect(find(r, 'main').attributes).toMatchObject({ is_multi_region_trail: false, is_logging: true });
    expect(find(r, 'lt-1').attributes).toMatchObject({ metadata_options: { http_tokens: 'optional' } });
    expect(find(r, 'p').arn).toBe('arn:aws:iam::111122223333:policy/p');
    expect(JSON.stringify(r)).not.toContain('very-secret');
    expect(edgeTuples(r)).toEqual([
      ['AKIAEXAMPLE', 'member-of', 'alice'],
      ['Z1_www.example.com_A', 'resolves-to', 'web'],
      ['fn', 'uses-role', 'fn'],
      ['prod-cache', 'protected-by', 'sg-cache'],
    ]);
  });

  it('lists every type it maps or merges as supported', () => {
    for (const type of SUPPORTED_TERRAFORM_TYPES) {
      const r = parseTerraformState(state([managed(`${type}.x`, { id: 'x' })]));
      expect(r.skipped.filter((s) => s.reason === 'unsupported_type')).toEqual([]);
      expect(r.resources.length + r.skipped.length).toBeGreaterThan(0);
    }
  });
});

describe('createTerraformStateConnector', () => {
  it('reads the file, reports progress and skipped types, and returns the import', async () => {
    const phases: [string, number, number | null][] = [];
    let skipped = 0;
    const connector = createTerraformStateConnector({
      file: FIXTURE,
      now: () => new Date('2026-11-22T10:00:00Z'),
      onSkipped: (s) => (skipped = s.length),
    });
    expect(connector.kind).toBe('terraform_state');
    const inv = (await connector.collect({
      onProgress: (p, d, t) => phases.push([p, d, t]),
    })) as TerraformStateImport;
    expect(inv.resources).toHaveLength(EXPECTED_RESOURCES.length);
    expect(inv.observedAt.toISOString()).toBe('2026-11-22T10:00:00.000Z');
    expect(inv).toMatchObject({ metrics: [], costs: [], events: [] });
    expect(skipped).toBe(3);
    expect(phases).toEqual([
      ['read', 0, 1],
      ['read', 1, 1],
      ['resources', EXPECTED_RESOURCES.length, EXPECTED_RESOURCES.length],
      ['skipped aws_db_subnet_group', 1, null],
      ['skipped aws_flow_log', 1, null],
      ['skipped random_id', 1, null],
    ]);
  });

  it('takes the JSON directly', async () => {
    const inv = await createTerraformStateConnector({ json: fixture() }).collect({});
    expect(inv.edges).toHaveLength(EXPECTED_EDGES.length);
  });

  it('fails clearly on a missing or non-JSON file, and honours an aborted signal', async () => {
    await expect(
      createTerraformStateConnector({ file: '/nonexistent/show.json' }).collect({}),
    ).rejects.toThrow(/Cannot read the Terraform state file \/nonexistent\/show\.json/);
    const notJson = fileURLToPath(new URL('./terraform.test.ts', import.meta.url));
    await expect(createTerraformStateConnector({ file: notJson }).collect({})).rejects.toThrow(/is not JSON/);
    const controller = new AbortController();
    controller.abort();
    await expect(
      createTerraformStateConnector({ file: FIXTURE }).collect({ signal: controller.signal }),
    ).rejects.toThrow();
    expect(() => createTerraformStateConnector({})).toThrow(/needs a source, a file or json/);
  });
});
