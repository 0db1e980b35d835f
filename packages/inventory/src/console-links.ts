import type { InventoryResource } from './model';

const regional = (region: string, service: string, fragment: string) =>
  `https://${region}.console.aws.amazon.com/${service}/home?region=${region}#${fragment}`;

/** The AWS console page of a resource, by type and region; null where the console has none. */
export function consoleUrl(
  r: Pick<InventoryResource, 'type' | 'region' | 'nativeId' | 'arn' | 'name'>,
): string | null {
  const { region, nativeId: id } = r;
  const e = encodeURIComponent;
  switch (r.type) {
    case 'aws_ec2_instance':
      return regional(region, 'ec2', `InstanceDetails:instanceId=${id}`);
    case 'aws_ebs_volume':
      return regional(region, 'ec2', `VolumeDetails:volumeId=${id}`);
    case 'aws_ebs_snapshot':
      return regional(region, 'ec2', `SnapshotDetails:snapshotId=${id}`);
    case 'aws_vpc_security_group':
      return regional(region, 'ec2', `SecurityGroup:groupId=${id}`);
    case 'aws_vpc_eip':
      return regional(region, 'ec2', `ElasticIpDetails:AllocationId=${id}`);
    case 'aws_ec2_autoscaling_group':
      return regional(region, 'ec2', `AutoScalingGroupDetails:id=${e(id)}`);
    case 'aws_ec2_launch_template':
      return regional(region, 'ec2', `LaunchTemplateDetails:launchTemplateId=${id}`);
    case 'aws_ec2_application_load_balancer':
      return regional(region, 'ec2', `LoadBalancer:loadBalancerArn=${r.arn}`);
    case 'aws_ec2_target_group':
      return regional(region, 'ec2', `TargetGroup:targetGroupArn=${r.arn}`);
    case 'aws_vpc':
      return regional(region, 'vpcconsole', `VpcDetails:VpcId=${id}`);
    case 'aws_vpc_subnet':
      return regional(region, 'vpcconsole', `SubnetDetails:subnetId=${id}`);
    case 'aws_vpc_route_table':
      return regional(region, 'vpcconsole', `RouteTableDetails:RouteTableId=${id}`);
    case 'aws_vpc_internet_gateway':
      return regional(region, 'vpcconsole', `InternetGateway:internetGatewayId=${id}`);
    case 'aws_vpc_nat_gateway':
      return regional(region, 'vpcconsole', `NatGatewayDetails:natGatewayId=${id}`);
    case 'aws_rds_db_instance':
      return regional(region, 'rds', `database:id=${id};is-cluster=false`);
    case 'aws_rds_db_snapshot':
      return regional(region, 'rds', `db-snapshot:engine=;id=${id}`);
    case 'aws_s3_bucket':
      return `https://s3.console.aws.amazon.com/s3/buckets/${e(id)}?region=${region}&tab=objects`;
    case 'aws_iam_user':
      return `https://us-east-1.console.aws.amazon.com/iam/home#/users/details/${e(id)}`;
    case 'aws_iam_access_key':
      return `https://us-east-1.console.aws.amazon.com/iam/home#/users/details/${e(r.name ?? '')}?section=security_credentials`;
    case 'aws_iam_role':
      return `https://us-east-1.console.aws.amazon.com/iam/home#/roles/details/${e(id)}`;
    case 'aws_iam_policy':
      return `https://us-east-1.console.aws.amazon.com/iam/home#/policies/details/${e(r.arn)}`;
    case 'aws_iam_instance_profile':
      return `https://us-east-1.console.aws.amazon.com/iam/home#/roles`;
    case 'aws_cloudtrail_trail':
      return regional(region, 'cloudtrailv2', `/trails/${r.arn}`);
    case 'aws_cloudwatch_alarm':
      return regional(region, 'cloudwatch', `alarmsV2:alarm/${e(id)}`);
    case 'aws_cloudwatch_log_group':
      return regional(region, 'cloudwatch', `logsV2:log-groups/log-group/${e(e(id))}`);
    case 'aws_dynamodb_table':
      return regional(region, 'dynamodbv2', `table?name=${e(id)}`);
    case 'aws_elasticache_replication_group':
      return regional(region, 'elasticache', `/redis/${e(id)}`);
    case 'aws_lambda_function':
      return regional(region, 'lambda', `/functions/${e(id)}`);
    case 'aws_route53_record':
      return `https://us-east-1.console.aws.amazon.com/route53/v2/hostedzones`;
    case 'aws_account':
      return `https://us-east-1.console.aws.amazon.com/billing/home#/account`;
  }
}
