import { money, round2, type Detector } from '../detector';
import {
  byEnv,
  details,
  envOf,
  isProd,
  jsonArray,
  plural,
  records,
  sentenceList,
  str,
  strings,
} from './common';

interface Served {
  arn: string;
  id: string;
  name: string | null;
  az: string;
  route_table: string;
  association_id: string | null;
  instances: number;
}

/**
 * R9 — one NAT gateway serving private subnets in several AZs (an AZ single point of failure): the
 * route tables whose `0.0.0.0/0` route targets the NAT gateway are used by subnets in more than one
 * AZ. A subnet uses a route table when its `route_table_id` names it (the connector fills it from the
 * explicit association, else the VPC's main table) or, when that is unknown, when the table's
 * `associations` list the subnet. If the NAT's AZ fails, the subnets of the other, healthy AZs lose
 * Internet egress too. No public tool has this check (domain-notes §2.4 R9, "where we can do better"
 * 8). The query also lists, per AZ, a public subnet of the VPC (one routed to an Internet gateway) where
 * a NAT gateway for that AZ can go, so the fix names real ids; the added cost is priced from the NAT
 * gateway's own monthly cost.
 */
export const natSingleForManyAzs: Detector = {
  id: 'sre.nat_single_for_many_azs',
  domain: 'sre',
  title: 'One NAT gateway serving several AZs',
  sql: `
    with nat as (
      select n.arn, n.native_id, n.name, n.account_id, n.region, n.tags, n.monthly_cost,
             coalesce(n.availability_zone, n.attributes->>'availability_zone') as nat_az,
             n.attributes->>'vpc_id' as vpc_id
      from resources n
      where n.type = 'aws_vpc_nat_gateway' and n.deleted_at is null
        and coalesce(n.attributes->>'state', 'available') not in ('deleting', 'deleted', 'failed')
    ),
    default_routes as (
      select t.arn as rt_arn, t.native_id as rt_id, t.name as rt_name, t.account_id, t.region,
             t.attributes->'associations' as associations, route->>'nat_gateway_id' as nat_id
      from resources t, jsonb_array_elements(${jsonArray("t.attributes->'routes'")}) route
      where t.type = 'aws_vpc_route_table' and t.deleted_at is null
        and route->>'destination_cidr_block' = '0.0.0.0/0' and route->>'nat_gateway_id' is not null
    ),
    served as (
      select dr.nat_id, dr.account_id, dr.region, dr.rt_arn, dr.rt_id, dr.rt_name,
             s.arn as subnet_arn, s.native_id as subnet_id, s.name as subnet_name,
             coalesce(s.availability_zone, s.attributes->>'availability_zone') as az,
             (select a->>'route_table_association_id' from jsonb_array_elements(${jsonArray('dr.associations')}) a
               where a->>'subnet_id' = s.native_id limit 1) as association_id,
             (select count(*) from resources i
               where i.type = 'aws_ec2_instance' and i.deleted_at is null
                 and i.account_id = s.account_id and i.region = s.region
                 and i.attributes->>'subnet_id' = s.native_id
                 and coalesce(i.attributes->>'instance_state', 'running') = 'running')::int as instances
      from default_routes dr
      join resources s on s.type = 'aws_vpc_subnet' and s.deleted_at is null
        and s.account_id = dr.account_id and s.region = dr.region
        and (s.attributes->>'route_table_id' = dr.rt_id
          or (s.attributes->>'route_table_id' is null
              and exists (select 1 from jsonb_array_elements(${jsonArray('dr.associations')}) a
                          where a->>'subnet_id' = s.native_id)))
    )
    select n.arn, n.native_id, n.name, n.account_id, n.region, n.nat_az, n.vpc_id,
           n.monthly_cost::float8 as monthly_cost,
           ${envOf('n')} as env,
           array_agg(distinct sv.az order by sv.az) as azs,
           count(distinct sv.az)::int as az_count,
           jsonb_agg(distinct jsonb_build_object('arn', sv.rt_arn, 'id', sv.rt_id, 'name', sv.rt_name)) as route_tables,
           jsonb_agg(jsonb_build_object('arn', sv.subnet_arn, 'id', sv.subnet_id, 'name', sv.subnet_name, 'az', sv.az,
                                        'route_table', sv.rt_id, 'association_id', sv.association_id,
                                        'instances', sv.instances) order by sv.az, sv.subnet_id) as subnets,
           (select jsonb_object_agg(p.az, p.id) from (
              select distinct on (coalesce(ps.availability_zone, ps.attributes->>'availability_zone'))
                     coalesce(ps.availability_zone, ps.attributes->>'availability_zone') as az, ps.native_id as id
              from resources ps
              join resources pt on pt.type = 'aws_vpc_route_table' and pt.deleted_at is null
                and pt.account_id = ps.account_id and pt.region = ps.region
                and pt.native_id = ps.attributes->>'route_table_id'
              where ps.type = 'aws_vpc_subnet' and ps.deleted_at is null
                and ps.account_id = n.account_id and ps.region = n.region and ps.attributes->>'vpc_id' = n.vpc_id
                and exists (select 1 from jsonb_array_elements(${jsonArray("pt.attributes->'routes'")}) pr
                            where pr->>'destination_cidr_block' = '0.0.0.0/0' and pr->>'gateway_id' like 'igw-%')
              order by coalesce(ps.availability_zone, ps.attributes->>'availability_zone'), ps.native_id) p) as public_subnets
    from nat n
    join served sv on sv.nat_id = n.native_id and sv.account_id = n.account_id and sv.region = n.region
    group by n.arn, n.native_id, n.name, n.account_id, n.region, n.nat_az, n.vpc_id, n.monthly_cost, n.tags
    having count(distinct sv.az) > 1
    order by n.arn`,
  findings(rows) {
    return rows.map((row) => {
      const nat = str(row.native_id);
      const name = str(row.name) || nat;
      const natAz = str(row.nat_az);
      const azs = strings(row.azs);
      const others = azs.filter((az) => az !== natAz);
      const tables = records<{ arn: string; id: string; name: string | null }>(row.route_tables);
      const subnets = records<Served & Record<string, unknown>>(row.subnets);
      const crossAz = subnets.filter((s) => s.az !== natAz);
      const stranded = crossAz.reduce((n, s) => n + Number(s.instances ?? 0), 0);
      const publicSubnets = (row.public_subnets ?? {}) as Record<string, string>;
      const natCost = round2(Number(row.monthly_cost ?? 0));
      const added = round2(natCost * others.length);
      const tableNames = tables.map((t) => (t.name ? `${t.name} (${t.id})` : t.id));
      const subnetNames = subnets.map((s) => `${s.name ?? s.id} in ${s.az}`);
      const severity = byEnv(row.env, 'high', 'medium');
      const steps = others.map((az) => {
        const pub = publicSubnets[az] ?? `<public subnet in ${az}>`;
        const moved = crossAz.filter((s) => s.az === az);
        const assoc = moved.map((s) => s.association_id ?? `<association of ${s.id}>`);
        return `${az}: aws ec2 allocate-address --domain vpc, then aws ec2 create-nat-gateway --subnet-id ${pub} --allocation-id <eipalloc>, aws ec2 create-route-table --vpc-id ${str(row.vpc_id)}, aws ec2 create-route --route-table-id <new rtb> --destination-cidr-block 0.0.0.0/0 --nat-gateway-id <new nat>, and for ${sentenceList(moved.map((s) => s.id))}: ${assoc.map((a) => `aws ec2 replace-route-table-association --association-id ${a} --route-table-id <new rtb>`).join(', ')}`;
      });
      return {
        rootKey: row.arn,
        title: `NAT gateway ${name} in ${natAz || 'one AZ'} is the only egress for ${sentenceList(azs)}`,
        severity,
        narrative: `NAT gateway ${name}${details(name !== nat ? nat : null, row.env)} lives in ${natAz || 'a single AZ'} but is the 0.0.0.0/0 route of ${tables.length === 1 ? 'route table' : 'route tables'} ${sentenceList(tableNames)}, used by private subnets in ${azs.length} Availability Zones: ${sentenceList(azs)} (${sentenceList(subnetNames)}). If ${natAz || 'its AZ'} fails, the subnets in ${sentenceList(others)} lose outbound Internet access too, though their own AZ is healthy: one AZ's failure becomes an outage of ${azs.length}. ${stranded ? `${plural(stranded, 'running instance')} in ${sentenceList(others)} depend${stranded === 1 ? 's' : ''} on it for egress` : `Everything launched in ${sentenceList(others)} depends on it for egress`}, and that traffic crosses AZs on its way out.`,
        confidence: 0.95,
        resources: [
          { arn: row.arn, actionType: 'add-nat-per-az', savings: 0 },
          ...tables.map((t) => ({ arn: t.arn, actionType: 'split-route-table-per-az', savings: 0 })),
          ...crossAz.map((s) => ({ arn: s.arn, actionType: 'route-via-own-az-nat', savings: 0 })),
        ],
        recommendation: {
          rationale: `Give each AZ its own NAT gateway and route table, so an AZ failure stays in that AZ (the AWS-recommended layout). That adds ${others.length} NAT gateway${others.length === 1 ? '' : 's'}: about ${money(added)}/month at list price (${money(natCost)} each, plus per-GB processing that moves rather than grows), in exchange for less inter-AZ traffic. Per AZ — ${steps.join(' | ')}.`,
          actionType: 'add-nat-per-az',
          savings: 0,
          effort: 'medium',
          priority: isProd(row.env) ? 2 : 3,
        },
        reasoning: `Route tables with 0.0.0.0/0 → ${nat}: ${tableNames.join(', ')}. Subnets using them span ${azs.length} AZs (${azs.join(', ')}) while the NAT gateway is in ${natAz || 'unknown'}; ${crossAz.length} subnet(s) and ${stranded} running instance(s) sit outside its AZ. Added cost = ${others.length} × ${money(natCost)} (the NAT's own monthly cost) = ${money(added)}; savings 0. Severity ${severity} from env tag ${str(row.env) || 'absent'}.`,
      };
    });
  },
};
