import {
  DescribeAddressesCommand,
  EC2Client,
  paginateDescribeInternetGateways,
  paginateDescribeNatGateways,
  paginateDescribeRouteTables,
  paginateDescribeSecurityGroups,
  paginateDescribeSubnets,
  paginateDescribeVpcs,
  type IpPermission,
  type RouteTable,
  type SecurityGroup,
} from '@aws-sdk/client-ec2';
import type { CollectContext } from './collect-context';
import { iso, orNull, snakeList, tagRecord } from './shape';

/** VPCs, subnets, route tables, internet and NAT gateways, Elastic IPs and security groups. */
export async function collectVpc(ctx: CollectContext): Promise<void> {
  const client = ctx.client(EC2Client);
  await Promise.all([
    ctx.part(['aws_vpc'], () => collectVpcs(ctx, client)),
    ctx.part(['aws_vpc_subnet'], () => collectSubnets(ctx, client)),
    ctx.part(['aws_vpc_route_table'], () => collectRouteTables(ctx, client)),
    ctx.part(['aws_vpc_internet_gateway'], () => collectInternetGateways(ctx, client)),
    ctx.part(['aws_vpc_nat_gateway'], () => collectNatGateways(ctx, client)),
    ctx.part(['aws_vpc_eip'], () => collectAddresses(ctx, client)),
    ctx.part(['aws_vpc_security_group'], () => collectSecurityGroups(ctx, client)),
  ]);
}

async function collectVpcs(ctx: CollectContext, client: EC2Client) {
  const { out, region } = ctx;
  for await (const page of paginateDescribeVpcs({ client, pageSize: 1000 }, {}, ctx.send)) {
    for (const v of page.Vpcs ?? []) {
      if (!v.VpcId) continue;
      out.add({
        type: 'aws_vpc',
        arn: out.ec2Arn(region, 'vpc', v.VpcId) as string,
        nativeId: v.VpcId,
        region,
        tags: tagRecord(v.Tags),
        attributes: {
          vpc_id: v.VpcId,
          cidr_block: orNull(v.CidrBlock),
          cidr_block_association_set: snakeList(v.CidrBlockAssociationSet),
          ipv6_cidr_block_association_set: snakeList(v.Ipv6CidrBlockAssociationSet),
          state: orNull(v.State),
          is_default: orNull(v.IsDefault),
          owner_id: orNull(v.OwnerId),
          instance_tenancy: orNull(v.InstanceTenancy),
          dhcp_options_id: orNull(v.DhcpOptionsId),
        },
      });
    }
  }
}

async function collectSubnets(ctx: CollectContext, client: EC2Client) {
  const { out, region } = ctx;
  for await (const page of paginateDescribeSubnets({ client, pageSize: 1000 }, {}, ctx.send)) {
    for (const s of page.Subnets ?? []) {
      if (!s.SubnetId) continue;
      const arn = s.SubnetArn ?? (out.ec2Arn(region, 'subnet', s.SubnetId) as string);
      out.add({
        type: 'aws_vpc_subnet',
        arn,
        nativeId: s.SubnetId,
        region,
        availabilityZone: orNull(s.AvailabilityZone),
        tags: tagRecord(s.Tags),
        attributes: {
          subnet_id: s.SubnetId,
          subnet_arn: arn,
          vpc_id: orNull(s.VpcId),
          cidr_block: orNull(s.CidrBlock),
          ipv6_cidr_block_association_set: snakeList(s.Ipv6CidrBlockAssociationSet),
          availability_zone: orNull(s.AvailabilityZone),
          availability_zone_id: orNull(s.AvailabilityZoneId),
          map_public_ip_on_launch: orNull(s.MapPublicIpOnLaunch),
          default_for_az: orNull(s.DefaultForAz),
          available_ip_address_count: orNull(s.AvailableIpAddressCount),
          state: orNull(s.State),
          owner_id: orNull(s.OwnerId),
          // Filled in by the link pass: the explicitly associated route table, else the VPC's main one.
          route_table_id: null,
          route_table_is_main: null,
        },
      });
      out.link(arn, out.ec2Arn(region, 'vpc', s.VpcId), 'member-of');
    }
  }
}

async function collectRouteTables(ctx: CollectContext, client: EC2Client) {
  for await (const page of paginateDescribeRouteTables({ client, pageSize: 100 }, {}, ctx.send)) {
    for (const t of page.RouteTables ?? []) if (t.RouteTableId) addRouteTable(ctx, t);
  }
}

function addRouteTable(ctx: CollectContext, t: RouteTable) {
  const { out, region } = ctx;
  const id = t.RouteTableId as string;
  const arn = out.ec2Arn(region, 'route-table', id) as string;
  out.add({
    type: 'aws_vpc_route_table',
    arn,
    nativeId: id,
    region,
    tags: tagRecord(t.Tags),
    attributes: {
      route_table_id: id,
      vpc_id: orNull(t.VpcId),
      owner_id: orNull(t.OwnerId),
      routes: snakeList(t.Routes),
      associations: snakeList(t.Associations),
      is_main: (t.Associations ?? []).some((a) => a.Main === true),
      propagating_vgws: snakeList(t.PropagatingVgws),
    },
  });
  for (const r of t.Routes ?? []) {
    out.link(arn, out.ec2Arn(region, 'natgateway', r.NatGatewayId), 'routes-to');
    if (r.GatewayId?.startsWith('igw-'))
      out.link(arn, out.ec2Arn(region, 'internet-gateway', r.GatewayId), 'routes-to');
  }
  for (const a of t.Associations ?? []) {
    if (a.SubnetId) out.link(out.ec2Arn(region, 'subnet', a.SubnetId), arn, 'depends-on');
  }
}

async function collectInternetGateways(ctx: CollectContext, client: EC2Client) {
  const { out, region } = ctx;
  for await (const page of paginateDescribeInternetGateways({ client, pageSize: 1000 }, {}, ctx.send)) {
    for (const g of page.InternetGateways ?? []) {
      if (!g.InternetGatewayId) continue;
      const arn = out.ec2Arn(region, 'internet-gateway', g.InternetGatewayId) as string;
      out.add({
        type: 'aws_vpc_internet_gateway',
        arn,
        nativeId: g.InternetGatewayId,
        region,
        tags: tagRecord(g.Tags),
        attributes: {
          internet_gateway_id: g.InternetGatewayId,
          owner_id: orNull(g.OwnerId),
          attachments: snakeList(g.Attachments),
        },
      });
      for (const a of g.Attachments ?? []) out.link(arn, out.ec2Arn(region, 'vpc', a.VpcId), 'attached-to');
    }
  }
}

async function collectNatGateways(ctx: CollectContext, client: EC2Client) {
  const { out, region } = ctx;
  for await (const page of paginateDescribeNatGateways({ client, pageSize: 1000 }, {}, ctx.send)) {
    for (const n of page.NatGateways ?? []) {
      // Deleted gateways stay listed for about an hour.
      if (!n.NatGatewayId || n.State === 'deleted') continue;
      const arn = out.ec2Arn(region, 'natgateway', n.NatGatewayId) as string;
      out.add({
        type: 'aws_vpc_nat_gateway',
        arn,
        nativeId: n.NatGatewayId,
        region,
        // DescribeNatGateways states no zone; the link pass takes the subnet's.
        availabilityZone: null,
        tags: tagRecord(n.Tags),
        attributes: {
          nat_gateway_id: n.NatGatewayId,
          subnet_id: orNull(n.SubnetId),
          vpc_id: orNull(n.VpcId),
          state: orNull(n.State),
          connectivity_type: orNull(n.ConnectivityType),
          create_time: iso(n.CreateTime),
          delete_time: iso(n.DeleteTime),
          failure_code: orNull(n.FailureCode),
          nat_gateway_addresses: snakeList(n.NatGatewayAddresses),
          availability_zone: null,
        },
      });
      out.link(arn, out.ec2Arn(region, 'subnet', n.SubnetId), 'member-of');
      for (const a of n.NatGatewayAddresses ?? [])
        out.link(out.ec2Arn(region, 'elastic-ip', a.AllocationId), arn, 'attached-to');
    }
  }
}

/** DescribeAddresses has no pagination: one call returns every address of the region. */
async function collectAddresses(ctx: CollectContext, client: EC2Client) {
  const { out, region } = ctx;
  const res = await client.send(new DescribeAddressesCommand({}), ctx.send);
  for (const a of res.Addresses ?? []) {
    const id = a.AllocationId ?? a.PublicIp;
    if (!id) continue;
    const arn = out.ec2Arn(region, 'elastic-ip', id) as string;
    out.add({
      type: 'aws_vpc_eip',
      arn,
      nativeId: id,
      region,
      tags: tagRecord(a.Tags),
      attributes: {
        allocation_id: orNull(a.AllocationId),
        public_ip: orNull(a.PublicIp),
        association_id: orNull(a.AssociationId),
        instance_id: a.InstanceId || null,
        network_interface_id: orNull(a.NetworkInterfaceId),
        network_interface_owner_id: orNull(a.NetworkInterfaceOwnerId),
        private_ip_address: orNull(a.PrivateIpAddress),
        domain: orNull(a.Domain),
        public_ipv4_pool: orNull(a.PublicIpv4Pool),
        network_border_group: orNull(a.NetworkBorderGroup),
      },
    });
    out.link(arn, out.ec2Arn(region, 'instance', a.InstanceId || null), 'attached-to');
  }
}

async function collectSecurityGroups(ctx: CollectContext, client: EC2Client) {
  for await (const page of paginateDescribeSecurityGroups({ client, pageSize: 1000 }, {}, ctx.send)) {
    for (const g of page.SecurityGroups ?? []) if (g.GroupId) addSecurityGroup(ctx, g);
  }
}

function addSecurityGroup(ctx: CollectContext, g: SecurityGroup) {
  const { out, region } = ctx;
  const id = g.GroupId as string;
  const arn = g.SecurityGroupArn ?? (out.ec2Arn(region, 'security-group', id) as string);
  const tags = tagRecord(g.Tags);
  out.add({
    type: 'aws_vpc_security_group',
    arn,
    nativeId: id,
    region,
    name: tags.Name ?? orNull(g.GroupName),
    tags,
    attributes: {
      group_id: id,
      group_name: orNull(g.GroupName),
      description: orNull(g.Description),
      vpc_id: orNull(g.VpcId),
      owner_id: orNull(g.OwnerId),
      rules: [...flattenRules('ingress', g.IpPermissions), ...flattenRules('egress', g.IpPermissionsEgress)],
    },
  });
  out.link(arn, out.ec2Arn(region, 'vpc', g.VpcId), 'member-of');
}

export interface SecurityGroupRule {
  type: 'ingress' | 'egress';
  ip_protocol: string | null;
  from_port: number | null;
  to_port: number | null;
  cidr_ipv4: string | null;
  cidr_ipv6: string | null;
  referenced_group_id: string | null;
  referenced_user_id: string | null;
  prefix_list_id: string | null;
  description: string | null;
}

/**
 * One rule per source, as Steampipe's aws_vpc_security_group_rule: an IpPermission with two CIDRs
 * and a group reference is three rules. Ports are null for protocol -1 (all traffic).
 */
export function flattenRules(
  type: 'ingress' | 'egress',
  permissions: readonly IpPermission[] | undefined,
): SecurityGroupRule[] {
  const rules: SecurityGroupRule[] = [];
  for (const p of permissions ?? []) {
    const all = p.IpProtocol === '-1';
    const base = {
      type,
      ip_protocol: orNull(p.IpProtocol),
      from_port: all ? null : orNull(p.FromPort),
      to_port: all ? null : orNull(p.ToPort),
      cidr_ipv4: null,
      cidr_ipv6: null,
      referenced_group_id: null,
      referenced_user_id: null,
      prefix_list_id: null,
    };
    for (const r of p.IpRanges ?? [])
      rules.push({ ...base, cidr_ipv4: orNull(r.CidrIp), description: orNull(r.Description) });
    for (const r of p.Ipv6Ranges ?? [])
      rules.push({ ...base, cidr_ipv6: orNull(r.CidrIpv6), description: orNull(r.Description) });
    for (const r of p.UserIdGroupPairs ?? []) {
      rules.push({
        ...base,
        referenced_group_id: orNull(r.GroupId),
        referenced_user_id: orNull(r.UserId),
        description: orNull(r.Description),
      });
    }
    for (const r of p.PrefixListIds ?? [])
      rules.push({ ...base, prefix_list_id: orNull(r.PrefixListId), description: orNull(r.Description) });
  }
  return rules;
}
