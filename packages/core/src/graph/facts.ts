/** The attributes each type keeps in the graph: what inference and analysis read, nothing more. */
export const FACTS: Record<string, string[]> = {
  aws_ec2_instance: [
    'subnet_id',
    'vpc_id',
    'security_groups',
    'iam_instance_profile_arn',
    'public_ip_address',
    'instance_state',
  ],
  aws_vpc_subnet: ['vpc_id'],
  aws_vpc_route_table: ['associations', 'routes'],
  aws_vpc_nat_gateway: ['subnet_id', 'state'],
  aws_ec2_target_group: ['target_health_descriptions', 'load_balancer_arns'],
  aws_ec2_application_load_balancer: [
    'target_group_arns',
    'dns_name',
    'availability_zones',
    'scheme',
    'security_groups',
  ],
  aws_route53_record: ['alias_target'],
  aws_iam_instance_profile: ['roles'],
  aws_rds_db_instance: [
    'vpc_security_groups',
    'multi_az',
    'publicly_accessible',
    'backup_retention_period',
    'deletion_protection',
    'secondary_availability_zone',
    'vpc_id',
  ],
  aws_vpc_security_group: ['rules', 'vpc_id', 'group_name'],
  aws_ec2_autoscaling_group: ['min_size', 'max_size', 'desired_capacity', 'availability_zones', 'instances'],
  aws_elasticache_replication_group: ['automatic_failover', 'multi_az'],
};

/** The facts the graph keeps of a resource's attributes (the same projection repository.ts's SQL makes). */
export function factsOf(type: string, attributes: Record<string, unknown>): Record<string, unknown> | null {
  const keys = FACTS[type];
  if (!keys) return null;
  return Object.fromEntries(keys.map((k) => [k, attributes[k] ?? null]));
}
