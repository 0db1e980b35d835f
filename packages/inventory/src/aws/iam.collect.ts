import {
  GetAccessKeyLastUsedCommand,
  GetAccountSummaryCommand,
  GetLoginProfileCommand,
  GetPolicyVersionCommand,
  GetRolePolicyCommand,
  IAMClient,
  paginateListAccessKeys,
  paginateListAccountAliases,
  paginateListAttachedRolePolicies,
  paginateListAttachedUserPolicies,
  paginateListInstanceProfiles,
  paginateListMFADevices,
  paginateListPolicies,
  paginateListRolePolicies,
  paginateListRoles,
  paginateListRoleTags,
  paginateListUserPolicies,
  paginateListUsers,
  paginateListUserTags,
  type Policy,
  type Role,
  type User,
} from '@aws-sdk/client-iam';
import { readOrNull, tolerate, type CollectContext } from './collect-context';
import { allPages, iso, mapBounded, orNull, policyDocument, tagRecord } from './shape';

const GLOBAL = 'global';

export interface IamAccountFacts {
  alias: string | null;
  summary: Record<string, number>;
}

/**
 * IAM users (with access keys, MFA devices, console password, policies), roles (trust and permission
 * policies), customer-managed policies and instance profiles; and the account summary. Each part is a
 * task of its own, so a permission missing for one leaves the others read. The credential report is
 * not used: producing one takes a Generate call, and this connector only reads.
 */
export async function collectIamAccount(ctx: CollectContext): Promise<IamAccountFacts> {
  const client = ctx.client(IAMClient);
  // Either refused, its facts stay unknown (null on the account), never "no MFA" or "no alias".
  const [summary, aliases] = await Promise.all([
    ctx.part([], () => client.send(new GetAccountSummaryCommand({}), ctx.send)),
    ctx.part([], () =>
      allPages(paginateListAccountAliases({ client }, {}, ctx.send), (p) => p.AccountAliases),
    ),
  ]);
  const map: Record<string, number> = {};
  for (const [k, v] of Object.entries(summary?.SummaryMap ?? {})) if (typeof v === 'number') map[k] = v;
  return { alias: aliases?.[0] ?? null, summary: map };
}

export async function collectIamUsers(ctx: CollectContext) {
  const client = ctx.client(IAMClient);
  const users = await allPages(paginateListUsers({ client, pageSize: 1000 }, {}, ctx.send), (p) => p.Users);
  await mapBounded(users, ctx.width, (u) => addUser(ctx, client, u));
}

async function addUser(ctx: CollectContext, client: IAMClient, u: User) {
  const { out } = ctx;
  if (!u.UserName || !u.Arn) return;
  const UserName = u.UserName;
  // Each of these may be denied for this user alone: the user is kept with that part unknown.
  const unreadable: string[] = [];
  const [tags, keys, mfa, login, attached, inline] = await Promise.all([
    readOrNull(
      'ListUserTags',
      unreadable,
      allPages(paginateListUserTags({ client }, { UserName }, ctx.send), (p) => p.Tags),
    ),
    // Keys not listed for one user are not gone: the sync keeps the access keys it held.
    ctx.part(
      ['aws_iam_access_key'],
      () => allPages(paginateListAccessKeys({ client }, { UserName }, ctx.send), (p) => p.AccessKeyMetadata),
      GLOBAL,
    ),
    readOrNull(
      'ListMFADevices',
      unreadable,
      allPages(paginateListMFADevices({ client }, { UserName }, ctx.send), (p) => p.MFADevices),
    ),
    // No login profile means no console password.
    tolerate(client.send(new GetLoginProfileCommand({ UserName }), ctx.send), [
      'NoSuchEntity',
      'NoSuchEntityException',
    ]),
    readOrNull(
      'ListAttachedUserPolicies',
      unreadable,
      allPages(
        paginateListAttachedUserPolicies({ client }, { UserName }, ctx.send),
        (p) => p.AttachedPolicies,
      ),
    ),
    readOrNull(
      'ListUserPolicies',
      unreadable,
      allPages(paginateListUserPolicies({ client }, { UserName }, ctx.send), (p) => p.PolicyNames),
    ),
  ]);
  if (!keys) unreadable.push('ListAccessKeys');
  if (!login.ok && login.denied) unreadable.push('GetLoginProfile');
  const userTags = tagRecord(tags ?? []);
  out.add({
    type: 'aws_iam_user',
    arn: u.Arn,
    nativeId: UserName,
    region: GLOBAL,
    name: UserName,
    tags: userTags,
    attributes: {
      name: UserName,
      user_id: orNull(u.UserId),
      arn: u.Arn,
      path: orNull(u.Path),
      create_date: iso(u.CreateDate),
      password_last_used: iso(u.PasswordLastUsed),
      password_enabled: login.ok ? true : login.denied ? null : false,
      login_profile_create_date: login.ok ? iso(login.value.LoginProfile?.CreateDate) : null,
      // Unknown (null) when the devices could not be listed: never "no MFA".
      mfa_active: mfa ? mfa.length > 0 : null,
      mfa_devices: mfa
        ? mfa.map((d) => ({
            serial_number: orNull(d.SerialNumber),
            enable_date: iso(d.EnableDate),
          }))
        : null,
      attached_policy_arns: attached ? attached.map((p) => p.PolicyArn ?? null) : null,
      inline_policy_names: inline,
      access_key_count: keys ? keys.length : null,
      unreadable: unreadable.sort(),
    },
  });
  await mapBounded(keys ?? [], ctx.width, async (k) => {
    if (!k.AccessKeyId) return;
    const used = await tolerate(
      client.send(new GetAccessKeyLastUsedCommand({ AccessKeyId: k.AccessKeyId }), ctx.send),
      ['NoSuchEntity'],
    );
    const last = used.ok ? used.value.AccessKeyLastUsed : undefined;
    // IAM gives keys no ARN: this is the key's ARN-shaped address under its user, as Steampipe writes it.
    const arn = `${u.Arn}/accesskey/${k.AccessKeyId}`;
    out.add({
      type: 'aws_iam_access_key',
      arn,
      nativeId: k.AccessKeyId,
      region: GLOBAL,
      name: UserName,
      attributes: {
        access_key_id: k.AccessKeyId,
        user_name: UserName,
        status: orNull(k.Status),
        create_date: iso(k.CreateDate),
        access_key_last_used_date: iso(last?.LastUsedDate),
        access_key_last_used_service:
          last?.ServiceName && last.ServiceName !== 'N/A' ? last.ServiceName : null,
        access_key_last_used_region: last?.Region && last.Region !== 'N/A' ? last.Region : null,
      },
    });
    out.link(arn, u.Arn, 'member-of');
  });
}

export async function collectIamRoles(ctx: CollectContext) {
  const client = ctx.client(IAMClient);
  const roles = await allPages(paginateListRoles({ client, pageSize: 1000 }, {}, ctx.send), (p) => p.Roles);
  await mapBounded(roles, ctx.width, (r) => addRole(ctx, client, r));
}

async function addRole(ctx: CollectContext, client: IAMClient, r: Role) {
  if (!r.RoleName || !r.Arn) return;
  const RoleName = r.RoleName;
  // Each of these may be denied for this role alone: the role is kept with that part unknown.
  const unreadable: string[] = [];
  const [tags, attached, inlineNames] = await Promise.all([
    readOrNull(
      'ListRoleTags',
      unreadable,
      allPages(paginateListRoleTags({ client }, { RoleName }, ctx.send), (p) => p.Tags),
    ),
    readOrNull(
      'ListAttachedRolePolicies',
      unreadable,
      allPages(
        paginateListAttachedRolePolicies({ client }, { RoleName }, ctx.send),
        (p) => p.AttachedPolicies,
      ),
    ),
    readOrNull(
      'ListRolePolicies',
      unreadable,
      allPages(paginateListRolePolicies({ client }, { RoleName }, ctx.send), (p) => p.PolicyNames),
    ),
  ]);
  const inline = inlineNames
    ? await mapBounded(inlineNames, ctx.width, async (PolicyName) => {
        const res = await readOrNull(
          'GetRolePolicy',
          unreadable,
          client.send(new GetRolePolicyCommand({ RoleName, PolicyName }), ctx.send),
        );
        // A document that could not be read is null: detectors conclude nothing from it.
        return { policy_name: PolicyName, policy_document: res ? policyDocument(res.PolicyDocument) : null };
      })
    : null;
  ctx.out.add({
    type: 'aws_iam_role',
    arn: r.Arn,
    nativeId: RoleName,
    region: GLOBAL,
    name: RoleName,
    tags: tagRecord(tags ?? []),
    attributes: {
      name: RoleName,
      role_id: orNull(r.RoleId),
      arn: r.Arn,
      path: orNull(r.Path),
      description: orNull(r.Description),
      create_date: iso(r.CreateDate),
      max_session_duration: orNull(r.MaxSessionDuration),
      // Trust and permission policy documents keep AWS's keys (Effect, Principal, Action...).
      assume_role_policy_document: policyDocument(r.AssumeRolePolicyDocument),
      attached_policies: attached
        ? attached.map((p) => ({
            policy_name: orNull(p.PolicyName),
            policy_arn: orNull(p.PolicyArn),
          }))
        : null,
      inline_policies: inline,
      unreadable: [...new Set(unreadable)].sort(),
    },
  });
  for (const p of attached ?? []) ctx.out.link(r.Arn, p.PolicyArn, 'depends-on');
}

/** Customer-managed policies with their default version's document (AWS-managed ones are referenced by ARN). */
export async function collectIamPolicies(ctx: CollectContext) {
  const client = ctx.client(IAMClient);
  const policies = await allPages(
    paginateListPolicies({ client, pageSize: 1000 }, { Scope: 'Local' }, ctx.send),
    (p) => p.Policies,
  );
  await mapBounded(policies, ctx.width, (p) => addPolicy(ctx, client, p));
}

async function addPolicy(ctx: CollectContext, client: IAMClient, p: Policy) {
  if (!p.Arn || !p.PolicyName) return;
  // Denied for this policy alone, the policy is kept with its document unknown (null).
  const unreadable: string[] = [];
  const version = p.DefaultVersionId
    ? await readOrNull(
        'GetPolicyVersion',
        unreadable,
        client.send(
          new GetPolicyVersionCommand({ PolicyArn: p.Arn, VersionId: p.DefaultVersionId }),
          ctx.send,
        ),
      )
    : undefined;
  ctx.out.add({
    type: 'aws_iam_policy',
    arn: p.Arn,
    nativeId: p.PolicyName,
    region: GLOBAL,
    name: p.PolicyName,
    tags: tagRecord(p.Tags),
    attributes: {
      name: p.PolicyName,
      policy_id: orNull(p.PolicyId),
      arn: p.Arn,
      path: orNull(p.Path),
      default_version_id: orNull(p.DefaultVersionId),
      attachment_count: orNull(p.AttachmentCount),
      is_attachable: orNull(p.IsAttachable),
      create_date: iso(p.CreateDate),
      update_date: iso(p.UpdateDate),
      policy_document: policyDocument(version?.PolicyVersion?.Document),
      unreadable,
    },
  });
}

export async function collectIamInstanceProfiles(ctx: CollectContext) {
  const client = ctx.client(IAMClient);
  const profiles = await allPages(
    paginateListInstanceProfiles({ client, pageSize: 1000 }, {}, ctx.send),
    (p) => p.InstanceProfiles,
  );
  for (const p of profiles) {
    if (!p.Arn || !p.InstanceProfileName) continue;
    ctx.out.add({
      type: 'aws_iam_instance_profile',
      arn: p.Arn,
      nativeId: p.InstanceProfileName,
      region: GLOBAL,
      name: p.InstanceProfileName,
      tags: tagRecord(p.Tags),
      attributes: {
        name: p.InstanceProfileName,
        instance_profile_id: orNull(p.InstanceProfileId),
        arn: p.Arn,
        path: orNull(p.Path),
        create_date: iso(p.CreateDate),
        roles: (p.Roles ?? []).map((r) => ({ role_name: orNull(r.RoleName), arn: orNull(r.Arn) })),
      },
    });
    for (const r of p.Roles ?? []) ctx.out.link(p.Arn, r.Arn, 'uses-role');
  }
}
