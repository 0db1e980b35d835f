import { AutoScalingClient, paginateDescribeAutoScalingGroups } from '@aws-sdk/client-auto-scaling';
import type { CollectContext } from './collect-context';
import { iso, orNull, snake, tagRecord } from './shape';

/** Auto Scaling groups, with their instances, subnets, launch template and target groups. */
export async function collectAutoScaling(ctx: CollectContext): Promise<void> {
  const { out, region } = ctx;
  const client = ctx.client(AutoScalingClient);
  for await (const page of paginateDescribeAutoScalingGroups({ client, pageSize: 100 }, {}, ctx.send)) {
    for (const g of page.AutoScalingGroups ?? []) {
      if (!g.AutoScalingGroupName || !g.AutoScalingGroupARN) continue;
      const arn = g.AutoScalingGroupARN;
      const subnets = (g.VPCZoneIdentifier ?? '').split(',').filter(Boolean);
      const template =
        g.LaunchTemplate ?? g.MixedInstancesPolicy?.LaunchTemplate?.LaunchTemplateSpecification;
      out.add({
        type: 'aws_ec2_autoscaling_group',
        arn,
        nativeId: g.AutoScalingGroupName,
        region,
        name: g.AutoScalingGroupName,
        tags: tagRecord(g.Tags),
        attributes: {
          name: g.AutoScalingGroupName,
          autoscaling_group_arn: arn,
          min_size: orNull(g.MinSize),
          max_size: orNull(g.MaxSize),
          desired_capacity: orNull(g.DesiredCapacity),
          availability_zones: g.AvailabilityZones ?? [],
          vpc_zone_identifier: orNull(g.VPCZoneIdentifier),
          subnet_ids: subnets,
          target_group_arns: g.TargetGroupARNs ?? [],
          load_balancer_names: g.LoadBalancerNames ?? [],
          health_check_type: orNull(g.HealthCheckType),
          health_check_grace_period: orNull(g.HealthCheckGracePeriod),
          default_cooldown: orNull(g.DefaultCooldown),
          capacity_rebalance: orNull(g.CapacityRebalance),
          launch_configuration_name: orNull(g.LaunchConfigurationName),
          launch_template: template
            ? {
                launch_template_id: orNull(template.LaunchTemplateId),
                launch_template_name: orNull(template.LaunchTemplateName),
                version: orNull(template.Version),
              }
            : null,
          mixed_instances_policy: snake(g.MixedInstancesPolicy),
          instances: (g.Instances ?? []).map((i) => ({
            instance_id: orNull(i.InstanceId),
            instance_type: orNull(i.InstanceType),
            availability_zone: orNull(i.AvailabilityZone),
            lifecycle_state: orNull(i.LifecycleState),
            health_status: orNull(i.HealthStatus),
            protected_from_scale_in: orNull(i.ProtectedFromScaleIn),
          })),
          suspended_processes: (g.SuspendedProcesses ?? []).map((p) => p.ProcessName ?? null),
          status: orNull(g.Status),
          created_time: iso(g.CreatedTime),
        },
      });
      for (const i of g.Instances ?? [])
        out.link(arn, out.ec2Arn(region, 'instance', i.InstanceId), 'contains');
      for (const s of subnets) out.link(arn, out.ec2Arn(region, 'subnet', s), 'member-of');
      out.link(arn, out.ec2Arn(region, 'launch-template', template?.LaunchTemplateId), 'depends-on');
    }
  }
}
