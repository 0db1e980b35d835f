import type { Detector, DetectorRow, FindingDraft } from '../detector';
import {
  asArray,
  coversAllPorts,
  coversPort,
  describeRule,
  iamLike,
  internetIngress,
  list,
  listOf,
  str,
  where,
  type SgRule,
} from './shared';

/** AWS-managed policies that grant s3:GetObject on every bucket, with the action pattern that does. */
const AWS_MANAGED_S3_READERS: Array<[string, string]> = [
  ['arn:aws:iam::aws:policy/AdministratorAccess', '*'],
  ['arn:aws:iam::aws:policy/PowerUserAccess', 's3:*'],
  ['arn:aws:iam::aws:policy/AmazonS3FullAccess', 's3:*'],
  ['arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess', 's3:Get*'],
  ['arn:aws:iam::aws:policy/ReadOnlyAccess', 's3:Get*'],
];

/** The role's attached policy ARNs, in the demo's shape (attached_policy_arns) or the AWS connector's. */
const attachedPolicy = (role: string, policyArn: string) =>
  `(coalesce(${role}.attributes->'attached_policy_arns', '[]'::jsonb) @> jsonb_build_array(${policyArn})
          or coalesce(${role}.attributes->'attached_policies', '[]'::jsonb) @> jsonb_build_array(jsonb_build_object('policy_arn', ${policyArn})))`;

/**
 * Toxic combination — an Internet-exposed instance that can read Sensitive data (Prowler Attack Paths
 * "Internet-Exposed EC2 with Sensitive S3 Access", domain notes §4). The path:
 *   1. a running instance with a public IP,
 *   2. behind an in-use security group admitting SSH from 0.0.0.0/0 or ::/0 (protocol -1, or tcp with
 *      from_port <= 22 <= to_port) or every port (protocol -1, or tcp/udp 0–65535),
 *   3. whose role (edge uses-role from the instance or its instance profile) has an Allow statement —
 *      in an inline policy, an attached customer-managed policy, or a known AWS-managed one — whose
 *      Action matches s3:GetObject (IAM wildcards: s3:GetObject, s3:Get*, s3:*, *) on a Resource that
 *      covers the bucket's objects (*, arn:aws:s3:::bucket/*, arn:aws:s3:::bucket/prefix/…),
 *   4. a bucket tagged DataClassification=Sensitive, in the role's account (or publicly readable by
 *      policy, so any principal's grant works).
 * Deny statements, conditions, SCPs and permissions boundaries are not evaluated: the path is what the
 * Allow statements open. One finding per instance, about the instance, its open groups, its role and
 * the Sensitive buckets it reaches; always critical.
 */
export const toxicExposedInstanceSensitiveData: Detector = {
  id: 'security.toxic_exposed_instance_sensitive_data',
  domain: 'security',
  title: 'Internet-exposed instances that can read Sensitive S3 data',
  sql: `
    with exposing_groups as (
      select sg.arn, sg.native_id as group_id, sg.name, sg.account_id, sg.region,
             (select jsonb_agg(rule order by ord)
                from jsonb_array_elements(coalesce(sg.attributes->'rules', '[]'::jsonb)) with ordinality as x(rule, ord)
                where ${internetIngress()} and (${coversPort(22, ['tcp'])} or ${coversAllPorts()})) as open_rules
      from resources sg
      where sg.type = 'aws_vpc_security_group' and sg.deleted_at is null
    ),
    exposed as (
      select i.arn, i.native_id, i.name, i.account_id, i.region,
             i.attributes->>'public_ip_address' as public_ip,
             i.attributes->>'iam_instance_profile_arn' as instance_profile_arn,
             g.arn as sg_arn, g.group_id, g.name as sg_name, g.open_rules
      from resources i
      cross join lateral jsonb_array_elements(coalesce(i.attributes->'security_groups', '[]'::jsonb)) as ref
      join exposing_groups g on g.group_id = ref->>'group_id' and g.account_id = i.account_id
                            and g.region = i.region and g.open_rules is not null
      where i.type = 'aws_ec2_instance' and i.deleted_at is null
        and i.attributes->>'instance_state' = 'running'
        and i.attributes->>'public_ip_address' is not null
    ),
    instance_roles as (
      select e.from_arn as instance_arn, e.to_arn as role_arn
      from resource_edges e where e.kind = 'uses-role'
      union
      select x.arn, e.to_arn
      from exposed x join resource_edges e on e.from_arn = x.instance_profile_arn and e.kind = 'uses-role'
    ),
    role_statements as (
      select r.arn as role_arn, r.name as role_name, r.account_id,
             'inline ' || coalesce(p->>'policy_name', '') as source, s as statement
      from resources r,
           jsonb_array_elements(${asArray(`r.attributes->'inline_policies'`)}) as p,
           jsonb_array_elements(${asArray(`coalesce(p->'policy', p->'policy_document')->'Statement'`)}) as s
      where r.type = 'aws_iam_role' and r.deleted_at is null
      union all
      select r.arn, r.name, r.account_id, 'attached ' || m.name, s
      from resources r
      join resources m on m.type = 'aws_iam_policy' and m.deleted_at is null and ${attachedPolicy('r', 'm.arn')},
           jsonb_array_elements(${asArray(`coalesce(m.attributes->'policy_document', m.attributes->'policy')->'Statement'`)}) as s
      where r.type = 'aws_iam_role' and r.deleted_at is null
      union all
      select r.arn, r.name, r.account_id, 'attached ' || k.policy_arn,
             jsonb_build_object('Effect', 'Allow', 'Action', k.action, 'Resource', '*')
      from resources r,
           (values ${AWS_MANAGED_S3_READERS.map(([arn, action]) => `('${arn}', '${action}')`).join(', ')}) as k(policy_arn, action)
      where r.type = 'aws_iam_role' and r.deleted_at is null and ${attachedPolicy('r', 'k.policy_arn')}
    ),
    sensitive_reads as (
      select rs.role_arn, rs.role_name, rs.source, rs.statement, b.arn as bucket_arn, b.name as bucket_name
      from role_statements rs
      join resources b on b.type = 'aws_s3_bucket' and b.deleted_at is null
                      and lower(b.tags->>'DataClassification') = 'sensitive'
                      and (b.account_id = rs.account_id
                           or coalesce((b.attributes->>'bucket_policy_is_public')::boolean, false))
      where rs.statement->>'Effect' = 'Allow'
        and exists (select 1 from jsonb_array_elements_text(${asArray(`rs.statement->'Action'`)}) as a
                    where 's3:getobject' like ${iamLike('a')})
        and exists (select 1 from jsonb_array_elements_text(${asArray(`rs.statement->'Resource'`)}) as res
                    where lower(b.arn || '/*') like ${iamLike('res')} or starts_with(res, b.arn || '/'))
    )
    select x.arn, x.native_id, x.name, x.account_id, x.region, x.public_ip,
           x.sg_arn, x.group_id, x.sg_name, x.open_rules,
           sr.role_arn, sr.role_name, sr.bucket_arn, sr.bucket_name,
           jsonb_agg(jsonb_build_object('source', sr.source, 'statement', sr.statement) order by sr.source) as grants
    from exposed x
    join instance_roles ir on ir.instance_arn = x.arn
    join sensitive_reads sr on sr.role_arn = ir.role_arn
    group by x.arn, x.native_id, x.name, x.account_id, x.region, x.public_ip,
             x.sg_arn, x.group_id, x.sg_name, x.open_rules, sr.role_arn, sr.role_name, sr.bucket_arn, sr.bucket_name
    order by x.arn, x.sg_arn, sr.role_arn, sr.bucket_arn`,
  findings(rows) {
    const byInstance = new Map<string, DetectorRow[]>();
    for (const row of rows) byInstance.set(row.arn, [...(byInstance.get(row.arn) ?? []), row]);
    return [...byInstance.values()].map((paths): FindingDraft => {
      const head = paths[0]!;
      const instance = `${str(head.name) || str(head.native_id)} (${str(head.native_id)})`;
      const unique = (key: string) => [...new Map(paths.map((p) => [str(p[key]), p])).values()];
      const groups = unique('sg_arn');
      const roles = unique('role_arn');
      const buckets = unique('bucket_arn');
      const groupText = groups
        .map(
          (g) =>
            `${str(g.sg_name) || str(g.group_id)} (${list<SgRule>(g.open_rules).map(describeRule).join('; ')})`,
        )
        .join(', ');
      const grantText = [
        ...new Set(
          paths.flatMap((p) =>
            list<{ source: string; statement: Record<string, unknown> }>(p.grants).map(
              (g) =>
                `${str(p.role_name)} ${g.source.trim()}: Allow ${JSON.stringify(g.statement.Action)} on ${JSON.stringify(g.statement.Resource)}`,
            ),
          ),
        ),
      ];
      const bucketNames = buckets.map((b) => str(b.bucket_name));
      const roleNames = roles.map((r) => str(r.role_name));
      return {
        rootKey: head.arn,
        title: `Toxic path: Internet-exposed instance ${instance} can read Sensitive S3 bucket${bucketNames.length > 1 ? 's' : ''} ${listOf(bucketNames)}`,
        severity: 'critical',
        narrative: `Instance ${instance} — ${where(head)} — has the public IP ${str(head.public_ip)} and sits behind ${groupText}, so anyone on the Internet can try to log in to it. Its role ${roleNames.join(', ')} may read objects from ${listOf(bucketNames)}, tagged DataClassification=Sensitive (${grantText.join('; ')}). Each weakness alone is a finding; together they are a path: one stolen SSH key or one exploit on this host, and the Sensitive data walks out with the role's credentials.`,
        confidence: 0.9,
        resources: [
          { arn: head.arn, actionType: 'break-attack-path', savings: 0 },
          ...groups.map((g) => ({ arn: str(g.sg_arn), actionType: 'restrict-ingress', savings: 0 })),
          ...roles.map((r) => ({ arn: str(r.role_arn), actionType: 'least-privilege', savings: 0 })),
          ...buckets.map((b) => ({ arn: str(b.bucket_arn), actionType: 'block-public-access', savings: 0 })),
        ],
        recommendation: {
          rationale: `Break the path at its cheapest link first: remove the Internet source from ${groups.map((g) => str(g.sg_name) || str(g.group_id)).join(', ')} (use SSM Session Manager instead of SSH). Then narrow ${roleNames.join(', ')} so a host that needs no Sensitive data cannot read ${listOf(bucketNames)}, and require IMDSv2 on the instance so its credentials cannot be lifted through SSRF.`,
          actionType: 'break-attack-path',
          savings: 0,
          effort: 'low',
          priority: 1,
        },
        reasoning: `Path found: ${instance} [running, public IP ${str(head.public_ip)}] → protected-by ${groupText} → uses-role ${roleNames.join(', ')} → ${grantText.join('; ')} (Action matches s3:GetObject, Resource covers the objects) → ${bucketNames.map((b) => `${b} [DataClassification=Sensitive]`).join(', ')}. Deny statements, conditions and SCPs were not evaluated.`,
      };
    });
  },
};
