/**
 * A detector that concludes from an absence (no trail, no alarm) must not conclude it where the scan
 * could not look: the AWS connector records on the account resource (`attributes.unread`, a list of
 * {region, types}) what a refused call or a region not enabled kept it from reading.
 *
 * `unreadFor('c.account_id', 'aws_cloudwatch_alarm', 'c.region')` is true when the account's last scan
 * could not read alarms in that region (or in any region, for '*').
 */
export function unreadFor(accountIdExpr: string, type: string, regionExpr: string | null = null): string {
  const region = regionExpr ? `and (u->>'region' = '*' or u->>'region' = ${regionExpr})` : '';
  return `exists (
    select 1 from resources unread_acct,
         jsonb_array_elements(case jsonb_typeof(unread_acct.attributes->'unread')
                                when 'array' then unread_acct.attributes->'unread' else '[]'::jsonb end) u
    where unread_acct.type = 'aws_account' and unread_acct.deleted_at is null
      and unread_acct.account_id = ${accountIdExpr}
      and u->'types' @> '["${type}"]'::jsonb ${region})`;
}
