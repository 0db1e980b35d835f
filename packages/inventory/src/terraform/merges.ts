import { attachVolume } from './map-compute';
import { cannedAclGrants, isPolicyPublic, sseRules, type Grant } from './map-data';
import type { NamedPolicy } from './map-iam';
import { addRoute, toRoute } from './map-network';
import type { Draft, Registry, TfRow } from './registry';
import { addRules, expandLegacyRule, expandVpcRule } from './security-groups';
import { block, blocks, bool, jsonDoc, num, str, strs } from './values';

/**
 * Resources that describe a part of another one (a rule of a group, an attachment of a volume, a
 * bucket's access block). Each merges into its parent and answers false when the parent is not in
 * the state, so the caller can report it.
 */
type Merge = (row: TfRow, reg: Registry) => boolean;

const sgRule: Merge = (row, reg) => {
  const v = row.values;
  const sg = reg.get('aws_vpc_security_group', str(v.security_group_id));
  if (!sg) return false;
  const type = str(v.type) === 'egress' ? 'egress' : 'ingress';
  addRules(sg, expandLegacyRule(type, v, sg.nativeId, str(v.security_group_rule_id) ?? str(v.id)));
  return true;
};

const vpcSgRule =
  (type: 'ingress' | 'egress'): Merge =>
  (row, reg) => {
    const sg = reg.get('aws_vpc_security_group', str(row.values.security_group_id));
    if (!sg) return false;
    addRules(sg, expandVpcRule(type, row.values));
    return true;
  };

const volumeAttachment: Merge = (row, reg) => {
  const v = row.values;
  const volume = reg.get('aws_ebs_volume', str(v.volume_id));
  if (!volume) return false;
  attachVolume(reg, volume, {
    volume_id: volume.nativeId,
    instance_id: str(v.instance_id),
    device: str(v.device_name),
    // Volumes attached after launch are kept when the instance terminates.
    delete_on_termination: false,
    state: 'attached',
  });
  return true;
};

const eipAssociation: Merge = (row, reg) => {
  const v = row.values;
  const eip = reg.get('aws_vpc_eip', str(v.allocation_id));
  if (!eip) return false;
  const instanceId = str(v.instance_id);
  Object.assign(eip.attributes, {
    association_id: str(v.id) ?? eip.attributes.association_id,
    instance_id: instanceId ?? eip.attributes.instance_id,
    network_interface_id: str(v.network_interface_id) ?? eip.attributes.network_interface_id,
  });
  reg.link(eip, 'attached-to', { type: 'aws_ec2_instance', id: instanceId ?? '' });
  return true;
};

const route: Merge = (row, reg) => {
  const rt = reg.get('aws_vpc_route_table', str(row.values.route_table_id));
  if (!rt) return false;
  addRoute(reg, rt, toRoute(row.values));
  return true;
};

const routeTableAssociation: Merge = (row, reg) => {
  const v = row.values;
  const rtId = str(v.route_table_id);
  const rt = reg.get('aws_vpc_route_table', rtId);
  const subnet = reg.get('aws_vpc_subnet', str(v.subnet_id));
  if (rt) {
    (rt.attributes.associations as unknown[]).push({
      route_table_association_id: str(v.id),
      subnet_id: str(v.subnet_id),
      gateway_id: str(v.gateway_id),
      main: false,
    });
  }
  if (subnet) {
    subnet.attributes.route_table_id = rtId;
    reg.link(subnet, 'routes-to', { type: 'aws_vpc_route_table', id: rtId ?? '' });
  }
  return !!(rt || subnet);
};

const mainRouteTableAssociation: Merge = (row, reg) => {
  const v = row.values;
  const rt = reg.get('aws_vpc_route_table', str(v.route_table_id));
  const vpc = reg.get('aws_vpc', str(v.vpc_id));
  if (rt) {
    (rt.attributes.associations as unknown[]).push({
      route_table_association_id: str(v.id),
      subnet_id: null,
      gateway_id: null,
      main: true,
    });
  }
  if (vpc) vpc.attributes.main_route_table_id = str(v.route_table_id);
  return !!(rt || vpc);
};

const listener: Merge = (row, reg) => {
  const v = row.values;
  const lb = reg.byStatedArn(str(v.load_balancer_arn));
  if (!lb) return false;
  const actions = blocks(v.default_action).map((a) => ({
    type: str(a.type),
    target_group_arns: [
      ...strs(a.target_group_arn),
      ...blocks(a.forward).flatMap((f) => blocks(f.target_group).flatMap((t) => strs(t.arn))),
    ],
  }));
  (lb.attributes.listeners as unknown[]).push({
    listener_arn: str(v.arn),
    port: num(v.port),
    protocol: str(v.protocol),
    ssl_policy: str(v.ssl_policy),
    certificate_arn: str(v.certificate_arn),
    default_actions: actions,
  });
  for (const arn of actions.flatMap((a) => a.target_group_arns)) reg.link(lb, 'routes-to', { arn });
  return true;
};

const targetGroupAttachment: Merge = (row, reg) => {
  const v = row.values;
  const tg = reg.byStatedArn(str(v.target_group_arn));
  if (!tg) return false;
  const targetId = str(v.target_id);
  (tg.attributes.target_health_descriptions as unknown[]).push({
    target: { id: targetId, port: num(v.port), availability_zone: str(v.availability_zone) },
    // Health is a live fact the state does not hold.
    target_health: null,
  });
  reg.link(tg, 'targets', { type: 'aws_ec2_instance', id: targetId ?? '' });
  return true;
};

const autoscalingAttachment: Merge = (row, reg) => {
  const v = row.values;
  const asg = reg.get('aws_ec2_autoscaling_group', str(v.autoscaling_group_name));
  if (!asg) return false;
  const arn = str(v.lb_target_group_arn) ?? str(v.alb_target_group_arn);
  const list = asg.attributes.target_group_arns as string[];
  if (arn && !list.includes(arn)) list.push(arn);
  const elb = str(v.elb);
  if (elb) (asg.attributes.load_balancer_names as string[]).push(elb);
  reg.link({ arn: arn ?? '' }, 'targets', asg);
  return true;
};

/** Merges an S3 sub-resource (provider 4+ splits a bucket's configuration) into its bucket. */
const onBucket =
  (apply: (bucket: Draft, row: TfRow) => void): Merge =>
  (row, reg) => {
    const bucket = reg.get('aws_s3_bucket', str(row.values.bucket));
    if (!bucket) return false;
    apply(bucket, row);
    return true;
  };

const publicAccessBlock = onBucket((b, { values: v }) => {
  for (const k of [
    'block_public_acls',
    'block_public_policy',
    'ignore_public_acls',
    'restrict_public_buckets',
  ]) {
    b.attributes[k] = bool(v[k]) ?? false;
  }
});

const bucketVersioning = onBucket((b, { values: v }) => {
  const c = block(v.versioning_configuration);
  b.attributes.versioning_enabled = str(c?.status) === 'Enabled';
  b.attributes.versioning_mfa_delete = str(c?.mfa_delete) === 'Enabled';
});

const bucketEncryption = onBucket((b, { values: v }) => {
  b.attributes.server_side_encryption_configuration = sseRules(blocks(v.rule));
});

const bucketPolicy = onBucket((b, { values: v }) => {
  const policy = jsonDoc(v.policy);
  b.attributes.policy = policy;
  b.attributes.bucket_policy_is_public = isPolicyPublic(policy);
});

const bucketAcl = onBucket((b, { values: v }) => {
  const acp = block(v.access_control_policy);
  const grants: Grant[] = acp
    ? blocks(acp.grant).map((g) => {
        const who = block(g.grantee) ?? {};
        return {
          grantee: { type: str(who.type), uri: str(who.uri), id: str(who.id) },
          permission: str(g.permission),
        };
      })
    : cannedAclGrants(str(v.acl));
  b.attributes.acl = { grants };
});

/** Inline and attached policies of a role or user (`role`/`user` holds its name). */
const principalPolicy =
  (type: 'aws_iam_role' | 'aws_iam_user', key: 'role' | 'user', attached: boolean): Merge =>
  (row, reg) => {
    const v = row.values;
    const owner = reg.get(type, str(v[key]));
    if (!owner) return false;
    if (attached) {
      const arn = str(v.policy_arn);
      const list = owner.attributes.attached_policy_arns as string[];
      if (arn && !list.includes(arn)) list.push(arn);
      reg.link({ arn: arn ?? '' }, 'attached-to', owner);
    } else {
      const name = str(v.name) ?? row.address;
      const list = owner.attributes.inline_policies as NamedPolicy[];
      // After a refresh the role's own inline_policy list already holds it: replace, do not repeat.
      const rest = list.filter((p) => p.name !== name);
      owner.attributes.inline_policies = [...rest, { name, policy: jsonDoc(v.policy) }];
    }
    return true;
  };

export const MERGES: Record<string, Merge> = {
  aws_security_group_rule: sgRule,
  aws_vpc_security_group_ingress_rule: vpcSgRule('ingress'),
  aws_vpc_security_group_egress_rule: vpcSgRule('egress'),
  aws_volume_attachment: volumeAttachment,
  aws_eip_association: eipAssociation,
  aws_route: route,
  aws_route_table_association: routeTableAssociation,
  aws_main_route_table_association: mainRouteTableAssociation,
  aws_lb_listener: listener,
  aws_alb_listener: listener,
  aws_lb_target_group_attachment: targetGroupAttachment,
  aws_alb_target_group_attachment: targetGroupAttachment,
  aws_autoscaling_attachment: autoscalingAttachment,
  aws_s3_bucket_public_access_block: publicAccessBlock,
  aws_s3_bucket_versioning: bucketVersioning,
  aws_s3_bucket_server_side_encryption_configuration: bucketEncryption,
  aws_s3_bucket_policy: bucketPolicy,
  aws_s3_bucket_acl: bucketAcl,
  aws_iam_role_policy: principalPolicy('aws_iam_role', 'role', false),
  aws_iam_role_policy_attachment: principalPolicy('aws_iam_role', 'role', true),
  aws_iam_user_policy: principalPolicy('aws_iam_user', 'user', false),
  aws_iam_user_policy_attachment: principalPolicy('aws_iam_user', 'user', true),
};
