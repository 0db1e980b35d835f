/** What the agent's tool groups share: input pieces and the resource lookup. */
import { z } from 'zod';
import { sql, type Db } from '@opsi/db';
import { DOMAINS, SEVERITIES } from '@opsi/contracts';

export const Domain = z.enum(DOMAINS);
export const Severity = z.enum(SEVERITIES);
export const ResourceRef = z.object({
  resource: z.string().min(1).describe('An ARN, a native id (vol-…, i-…, sg-…) or a name'),
});

export const round2 = (n: unknown) => Math.round(Number(n ?? 0) * 100) / 100;

/** Types that share a name with the resource they belong to (see findResource). */
export const SECONDARY_TYPES = ['aws_vpc_eip', 'aws_iam_access_key', 'aws_iam_instance_profile'];

export async function findResource(db: Db, tenantId: string, ref: string) {
  const rows = await db
    .selectFrom('resources')
    .select([
      'arn',
      'type',
      'native_id',
      'name',
      'account_id',
      'region',
      'availability_zone',
      'tags',
      'attributes',
      'size_value',
      'size_unit',
      'monthly_cost',
      'console_url',
      'first_seen',
      'last_seen',
    ])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('arn', '=', ref), eb('native_id', '=', ref), eb('name', '=', ref)]))
    // An ARN or native id names one resource; a name can be shared (a NAT gateway and its Elastic IP, a user
    // and its access key, a role and its instance profile): the resource itself comes before what hangs
    // off it, then by ARN, so the same question always gets the same resource.
    .orderBy(sql`case when arn = ${ref} then 0 when native_id = ${ref} then 1 else 2 end`)
    .orderBy(sql`type in (${sql.join(SECONDARY_TYPES)})`)
    .orderBy('arn')
    .limit(6)
    .execute();
  const [first, ...others] = rows;
  if (!first) return undefined;
  return {
    ...first,
    // Other resources of the same name, so a reader knows the name was ambiguous.
    ...(others.length
      ? { also_named: others.map((o) => ({ arn: o.arn, type: o.type, native_id: o.native_id })) }
      : {}),
  };
}

/** The resource types a what-if names (what a person recognises as a service's parts). */
export const NOTABLE = new Set([
  'aws_ec2_instance',
  'aws_ec2_target_group',
  'aws_ec2_application_load_balancer',
  'aws_ec2_autoscaling_group',
  'aws_route53_record',
  'aws_rds_db_instance',
  'aws_vpc_nat_gateway',
  'aws_vpc_subnet',
  'aws_elasticache_replication_group',
]);
