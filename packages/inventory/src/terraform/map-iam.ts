// IAM roles, users, access keys, managed policies and instance profiles (global: no region).
import { arnOf, iamPath, idOf, type Registry, type TfRow } from './registry';
import { blocks, jsonDoc, num, str, strs } from './values';

export interface NamedPolicy {
  name: string;
  policy: unknown;
}

function mapIamRole(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? idOf(row);
  reg.add(row, 'aws_iam_role', {
    nativeId: name,
    naturalName: name,
    global: true,
    buildArn: arnOf('iam', `role/${iamPath(v.path)}${name}`, 'global'),
    attributes: {
      name,
      role_id: str(v.unique_id),
      path: str(v.path) ?? '/',
      description: str(v.description),
      create_date: str(v.create_date),
      max_session_duration: num(v.max_session_duration),
      assume_role_policy: jsonDoc(v.assume_role_policy),
      permissions_boundary_arn: str(v.permissions_boundary),
      inline_policies: blocks(v.inline_policy)
        .filter((p) => str(p.name))
        .map((p): NamedPolicy => ({ name: str(p.name)!, policy: jsonDoc(p.policy) })),
      attached_policy_arns: strs(v.managed_policy_arns),
      instance_profile_arns: [],
    },
  });
}

function mapIamUser(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? idOf(row);
  reg.add(row, 'aws_iam_user', {
    nativeId: name,
    naturalName: name,
    global: true,
    buildArn: arnOf('iam', `user/${iamPath(v.path)}${name}`, 'global'),
    attributes: {
      name,
      user_id: str(v.unique_id),
      path: str(v.path) ?? '/',
      permissions_boundary_arn: str(v.permissions_boundary),
      inline_policies: [],
      attached_policy_arns: [],
    },
  });
}

function mapAccessKey(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const user = str(v.user);
  // The secret and its encrypted forms stay out: only what IAM lists about a key is kept.
  const key = reg.add(row, 'aws_iam_access_key', {
    nativeId: id,
    naturalName: user,
    global: true,
    buildArn: arnOf('iam', `user/${user ?? ''}/accesskey/${id}`, 'global'),
    attributes: {
      access_key_id: id,
      user_name: user,
      status: str(v.status) ?? 'Active',
      create_date: str(v.create_date),
    },
  });
  reg.link(key, 'member-of', { type: 'aws_iam_user', id: user ?? '' });
}

function mapIamPolicy(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? idOf(row);
  reg.add(row, 'aws_iam_policy', {
    nativeId: name,
    naturalName: name,
    global: true,
    buildArn: arnOf('iam', `policy/${iamPath(v.path)}${name}`, 'global'),
    attributes: {
      name,
      policy_id: str(v.policy_id),
      path: str(v.path) ?? '/',
      description: str(v.description),
      policy: jsonDoc(v.policy),
      attachment_count: num(v.attachment_count),
      is_aws_managed: false,
    },
  });
}

function mapInstanceProfile(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? idOf(row);
  const role = str(v.role);
  const profile = reg.add(row, 'aws_iam_instance_profile', {
    nativeId: name,
    naturalName: name,
    global: true,
    buildArn: arnOf('iam', `instance-profile/${iamPath(v.path)}${name}`, 'global'),
    attributes: {
      name,
      instance_profile_id: str(v.unique_id),
      path: str(v.path) ?? '/',
      role,
      create_date: str(v.create_date),
    },
  });
  reg.link(profile, 'uses-role', { type: 'aws_iam_role', id: role ?? '' });
  reg.after(() => {
    const r = reg.get('aws_iam_role', role);
    if (r) (r.attributes.instance_profile_arns as string[]).push(profile.arn!);
  });
}

export const IAM_MAPPERS: Record<string, (row: TfRow, reg: Registry) => void> = {
  aws_iam_role: mapIamRole,
  aws_iam_user: mapIamUser,
  aws_iam_access_key: mapAccessKey,
  aws_iam_policy: mapIamPolicy,
  aws_iam_instance_profile: mapInstanceProfile,
};
