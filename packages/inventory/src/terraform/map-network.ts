// VPCs, subnets, internet and NAT gateways, Elastic IPs, route tables.
import { arnOf, idOf, type Draft, type Registry, type TfRow } from './registry';
import { blocks, bool, str, strs, type Values } from './values';

function mapVpc(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  reg.add(row, 'aws_vpc', {
    nativeId: id,
    buildArn: arnOf('ec2', `vpc/${id}`),
    attributes: {
      vpc_id: id,
      cidr_block: str(v.cidr_block),
      ipv6_cidr_block: str(v.ipv6_cidr_block),
      state: 'available',
      is_default: row.type === 'aws_default_vpc',
      instance_tenancy: str(v.instance_tenancy),
      enable_dns_support: bool(v.enable_dns_support),
      enable_dns_hostnames: bool(v.enable_dns_hostnames),
      dhcp_options_id: str(v.dhcp_options_id),
      main_route_table_id: str(v.main_route_table_id),
      default_security_group_id: str(v.default_security_group_id),
      default_network_acl_id: str(v.default_network_acl_id),
      owner_id: str(v.owner_id),
    },
  });
}

function mapSubnet(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const vpcId = str(v.vpc_id);
  const subnet = reg.add(row, 'aws_vpc_subnet', {
    nativeId: id,
    availabilityZone: str(v.availability_zone),
    buildArn: arnOf('ec2', `subnet/${id}`),
    attributes: {
      subnet_id: id,
      vpc_id: vpcId,
      cidr_block: str(v.cidr_block),
      ipv6_cidr_block: str(v.ipv6_cidr_block),
      availability_zone: str(v.availability_zone),
      availability_zone_id: str(v.availability_zone_id),
      map_public_ip_on_launch: bool(v.map_public_ip_on_launch) ?? false,
      state: 'available',
      owner_id: str(v.owner_id),
      route_table_id: null,
    },
  });
  reg.link(subnet, 'member-of', { type: 'aws_vpc', id: vpcId ?? '' });
  reg.placeBy(subnet, { type: 'aws_vpc', id: vpcId ?? '' }, false);
  // A subnet without an explicit association uses its VPC's main route table.
  reg.after(() => {
    if (subnet.attributes.route_table_id) return;
    const main = str(reg.get('aws_vpc', vpcId)?.attributes.main_route_table_id);
    if (!main) return;
    subnet.attributes.route_table_id = main;
    reg.link(subnet, 'routes-to', { type: 'aws_vpc_route_table', id: main });
  });
}

function mapInternetGateway(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const vpcId = str(v.vpc_id);
  const igw = reg.add(row, 'aws_vpc_internet_gateway', {
    nativeId: id,
    buildArn: arnOf('ec2', `internet-gateway/${id}`),
    attributes: {
      internet_gateway_id: id,
      owner_id: str(v.owner_id),
      attachments: vpcId ? [{ vpc_id: vpcId, state: 'available' }] : [],
    },
  });
  reg.link(igw, 'attached-to', { type: 'aws_vpc', id: vpcId ?? '' });
  reg.placeBy(igw, { type: 'aws_vpc', id: vpcId ?? '' }, false);
}

function mapNatGateway(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const subnetId = str(v.subnet_id);
  const allocationId = str(v.allocation_id);
  const nat = reg.add(row, 'aws_vpc_nat_gateway', {
    nativeId: id,
    buildArn: arnOf('ec2', `natgateway/${id}`),
    attributes: {
      nat_gateway_id: id,
      subnet_id: subnetId,
      vpc_id: null,
      state: str(v.state) ?? 'available',
      connectivity_type: str(v.connectivity_type) ?? 'public',
      nat_gateway_addresses: [
        {
          allocation_id: allocationId,
          association_id: str(v.association_id),
          network_interface_id: str(v.network_interface_id),
          private_ip: str(v.private_ip),
          public_ip: str(v.public_ip),
          is_primary: true,
        },
      ],
      secondary_allocation_ids: strs(v.secondary_allocation_ids),
    },
  });
  reg.link(nat, 'member-of', { type: 'aws_vpc_subnet', id: subnetId ?? '' });
  // The gateway lives in its subnet's AZ: what an AZ-failure analysis needs.
  reg.placeBy(nat, { type: 'aws_vpc_subnet', id: subnetId ?? '' }, true);
  reg.link({ type: 'aws_vpc_eip', id: allocationId ?? '' }, 'attached-to', nat);
  reg.after(() => {
    nat.attributes.vpc_id = reg.get('aws_vpc_subnet', subnetId)?.attributes.vpc_id ?? null;
  });
}

function mapEip(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row, 'allocation_id');
  const instanceId = str(v.instance);
  const eip = reg.add(row, 'aws_vpc_eip', {
    nativeId: id,
    naturalName: str(v.public_ip),
    buildArn: arnOf('ec2', `elastic-ip/${id}`),
    attributes: {
      allocation_id: id,
      public_ip: str(v.public_ip),
      association_id: str(v.association_id),
      instance_id: instanceId,
      network_interface_id: str(v.network_interface),
      private_ip_address: str(v.private_ip),
      domain: str(v.domain) ?? 'vpc',
      public_ipv4_pool: str(v.public_ipv4_pool),
    },
  });
  reg.link(eip, 'attached-to', { type: 'aws_ec2_instance', id: instanceId ?? '' });
  reg.placeBy(eip, { type: 'aws_ec2_instance', id: instanceId ?? '' }, false);
}

export interface Route {
  destination_cidr_block: string | null;
  destination_ipv6_cidr_block: string | null;
  destination_prefix_list_id: string | null;
  gateway_id: string | null;
  nat_gateway_id: string | null;
  transit_gateway_id: string | null;
  vpc_peering_connection_id: string | null;
  network_interface_id: string | null;
  vpc_endpoint_id: string | null;
  egress_only_internet_gateway_id: string | null;
  state: 'active';
}

/** A route from an inline `route` block (cidr_block) or an `aws_route` (destination_cidr_block). */
export function toRoute(v: Values): Route {
  return {
    destination_cidr_block: str(v.destination_cidr_block) ?? str(v.cidr_block),
    destination_ipv6_cidr_block: str(v.destination_ipv6_cidr_block) ?? str(v.ipv6_cidr_block),
    destination_prefix_list_id: str(v.destination_prefix_list_id),
    gateway_id: str(v.gateway_id),
    nat_gateway_id: str(v.nat_gateway_id),
    transit_gateway_id: str(v.transit_gateway_id),
    vpc_peering_connection_id: str(v.vpc_peering_connection_id),
    network_interface_id: str(v.network_interface_id),
    vpc_endpoint_id: str(v.vpc_endpoint_id),
    egress_only_internet_gateway_id: str(v.egress_only_gateway_id),
    state: 'active',
  };
}

/** Adds a route once per destination, with its routes-to edge. */
export function addRoute(reg: Registry, rt: Draft, route: Route): void {
  const routes = rt.attributes.routes as Route[];
  const dest = (r: Route) =>
    r.destination_cidr_block ?? r.destination_ipv6_cidr_block ?? r.destination_prefix_list_id;
  if (routes.some((r) => dest(r) === dest(route))) return;
  routes.push(route);
  reg.link(rt, 'routes-to', { type: 'aws_vpc_nat_gateway', id: route.nat_gateway_id ?? '' });
  if (route.gateway_id?.startsWith('igw-')) {
    reg.link(rt, 'routes-to', { type: 'aws_vpc_internet_gateway', id: route.gateway_id });
  }
}

function mapRouteTable(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const vpcId = str(v.vpc_id);
  const isDefault = row.type === 'aws_default_route_table';
  const rt = reg.add(row, 'aws_vpc_route_table', {
    nativeId: id,
    buildArn: arnOf('ec2', `route-table/${id}`),
    attributes: {
      route_table_id: id,
      vpc_id: vpcId,
      owner_id: str(v.owner_id),
      routes: [],
      associations: isDefault
        ? [{ route_table_association_id: null, subnet_id: null, gateway_id: null, main: true }]
        : [],
    },
  });
  for (const r of blocks(v.route)) addRoute(reg, rt, toRoute(r));
  reg.link(rt, 'member-of', { type: 'aws_vpc', id: vpcId ?? '' });
  reg.placeBy(rt, { type: 'aws_vpc', id: vpcId ?? '' }, false);
}

export const NETWORK_MAPPERS: Record<string, (row: TfRow, reg: Registry) => void> = {
  aws_vpc: mapVpc,
  aws_default_vpc: mapVpc,
  aws_subnet: mapSubnet,
  aws_default_subnet: mapSubnet,
  aws_internet_gateway: mapInternetGateway,
  aws_nat_gateway: mapNatGateway,
  aws_eip: mapEip,
  aws_route_table: mapRouteTable,
  aws_default_route_table: mapRouteTable,
};
