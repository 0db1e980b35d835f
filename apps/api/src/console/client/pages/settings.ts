/// <reference lib="dom" />
import { get } from '../api';
import { card, empty, h, pill, when } from '../dom';
import { act, errorSlot, type Page } from '../ctx';
import type { AuditListT, TeamT, TenantToolsT } from '../types';

interface TerraformStateRowT {
  source: string;
  serial: number | null;
  last_read_at: string | null;
  last_error: string | null;
  resources: number | null;
  managed: number | null;
  skipped_unsupported: Record<string, number>;
}

/** Each connected Terraform state: where it is read from, its serial, when it was last read, what was left out. */
function terraformStates(tools: TenantToolsT) {
  const tf = tools.tools.find((t) => t.id === 'terraform_state');
  const states = (tf?.settings.states ?? []) as TerraformStateRowT[];
  if (!tf) return null;
  return card(
    'Terraform states',
    states.length
      ? h(
          'table',
          { class: 'table', 'data-table': 'terraform-states' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Source', 'Serial', 'Last read', 'Resources', 'Skipped (types not modelled)'].map((t) =>
                h('th', {}, t),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            states.map((s) => {
              const skipped = Object.entries(s.skipped_unsupported);
              return h(
                'tr',
                {},
                h('td', { class: 'mono' }, s.source),
                h('td', {}, s.serial === null ? '–' : String(s.serial)),
                h(
                  'td',
                  {},
                  when(s.last_read_at),
                  s.last_error ? h('p', { class: 'error' }, s.last_error) : null,
                ),
                h('td', {}, s.resources === null ? '–' : `${s.resources} of ${s.managed ?? 0} managed`),
                h('td', {}, skipped.length ? skipped.map(([type, n]) => `${type} ×${n}`).join(', ') : 'none'),
              );
            }),
          ),
        )
      : empty(
          'No state connected: npm run admin -- env connect --terraform-state FILE or --terraform-s3 s3://BUCKET/KEY.',
        ),
  );
}

export const settingsPage: Page = async (ctx, el) => {
  const [team, tools, audit] = await Promise.all([
    get<TeamT>('/console/api/team'),
    get<TenantToolsT>('/console/api/marketplace/tenant/tools'),
    get<AuditListT>('/console/api/audit?limit=50'),
  ]);
  const verifySlot = errorSlot();
  const verdict = h('p', { role: 'status', 'data-audit-verify': '' });
  const verify = h(
    'button',
    { type: 'button', class: 'secondary', 'data-check': 'verify-audit' },
    'Verify the chain',
  );
  verify.addEventListener('click', () =>
    act(verify, verifySlot, async () => {
      const v = await get<{ valid: boolean; checked: number; first_invalid_id: string | null }>(
        '/console/api/audit/verify',
      );
      verdict.className = v.valid ? 'ok-note' : 'error';
      verdict.dataset.valid = String(v.valid);
      verdict.textContent = v.valid
        ? `Valid: ${v.checked} entries checked, every hash chains to the one before.`
        : `Broken at entry ${v.first_invalid_id} (${v.checked} checked).`;
    }),
  );
  el.append(
    h('h1', {}, 'Settings'),
    card(
      'API tokens',
      h('p', {}, 'Tokens let the CLI, CI and scripts call the API as you. '),
      h('a', { href: '/settings/tokens', class: 'button-link' }, 'Manage your API tokens'),
    ),
    card(
      'Team',
      h(
        'table',
        { class: 'table', 'data-table': 'team' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Name', 'Email', 'Role', 'Since'].map((t) => h('th', {}, t)),
          ),
        ),
        h(
          'tbody',
          {},
          team.members.map((m) =>
            h(
              'tr',
              {},
              h('td', {}, m.name),
              h('td', {}, m.email),
              h('td', {}, pill(m.role, 'info')),
              h('td', {}, when(m.created_at)),
            ),
          ),
        ),
      ),
      h(
        'p',
        { class: 'note' },
        `You are ${ctx.email} (${ctx.role}). Members are added by the operator: npm run admin -- user create --tenant ${ctx.tenant} …`,
      ),
    ),
    card(
      'Integrations',
      tools.tools.length
        ? h(
            'table',
            { class: 'table', 'data-table': 'integrations' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Name', 'Category', 'Status', 'Installed', 'Details'].map((t) => h('th', {}, t)),
              ),
            ),
            h(
              'tbody',
              {},
              tools.tools
                .filter((t) => t.kind !== 'agent_tool')
                .map((t) =>
                  h(
                    'tr',
                    {},
                    h('td', {}, t.name),
                    h('td', {}, t.category),
                    h(
                      'td',
                      {},
                      pill(t.status, t.status === 'connected' || t.status === 'active' ? 'resolved' : 'info'),
                    ),
                    h('td', {}, when(t.installed_at)),
                    h('td', { 'data-cell': 'details' }, toolDetails(t.settings)),
                  ),
                ),
            ),
          )
        : empty('Nothing connected: connect an environment with npm run admin -- env connect.'),
      h(
        'p',
        { class: 'note' },
        `${tools.tools.filter((t) => t.kind === 'agent_tool').length} agent tools built in.`,
      ),
    ),
    ...[terraformStates(tools)].filter((x) => x !== null),
    card(
      'Audit log',
      h('div', { class: 'actions' }, verify, verdict),
      verifySlot,
      audit.entries.length
        ? h(
            'table',
            { class: 'table compact', 'data-table': 'audit' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['#', 'When', 'Actor', 'Action', 'Target', 'Hash'].map((t) => h('th', {}, t)),
              ),
            ),
            h(
              'tbody',
              {},
              audit.entries.map((a) =>
                h(
                  'tr',
                  {},
                  h('td', {}, String(a.seq)),
                  h('td', {}, when(a.at)),
                  h('td', {}, a.actor?.email ?? a.actor?.type ?? ''),
                  h('td', {}, h('code', {}, a.action)),
                  h('td', {}, a.target_type),
                  h('td', { class: 'mono note' }, String(a.hash).slice(0, 12) + '…'),
                ),
              ),
            ),
          )
        : empty('No audited action yet.'),
    ),
  );
};

/** What an integration's settings say worth showing: SNS subscriptions' state, a notifier's target host. */
function toolDetails(settings: Record<string, unknown>): string {
  const subs = Array.isArray(settings.subscriptions)
    ? (settings.subscriptions as Array<Record<string, string | null>>)
    : [];
  if (subs.length)
    return subs
      .map((x) =>
        x.status === 'confirmed'
          ? `${x.topic_arn}: subscription confirmed ${when(x.confirmed_at ?? null)}`
          : `${x.topic_arn}: unsubscribed ${when(x.unsubscribed_at ?? null)}`,
      )
      .join('; ');
  return typeof settings.url_hint === 'string' ? settings.url_hint : '';
}
