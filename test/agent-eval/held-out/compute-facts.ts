/**
 * Computes the expected facts of the held-out evaluation set (questions.json beside this file) from the
 * service's public API, never from the agent engine.
 *
 *   npx tsx test/agent-eval/held-out/compute-facts.ts           # checks questions.json against the API
 *   npx tsx test/agent-eval/held-out/compute-facts.ts --write   # rewrites the computed must_contain lists
 *
 * It builds the evaluation state as the harness does (test/agent-eval/seed.ts and eval.int.test.ts: tenant
 * A with the demo at seed 42, small, epoch 2026-11-01, day 0, tenant B at seed 7, every detector run on
 * both, tenant A's two payments learnings and B's own), teaches the set's extra `learnings` through
 * POST /api/v1/learnings, starts the real API process (apps/api/src/main.ts) against that database, and
 * reads only documented endpoints with a token of tenant A. Every `{{finding:…}}`, `{{resource:…}}` and
 * `must_cite` reference is checked to name exactly one thing of tenant A.
 *
 * Incidents: when the evaluation state has none (the harness does not triage the demo's alerts yet), the
 * demo storyline's incidents are made the way an operator makes them: a third tenant is connected to the
 * same demo (`env connect --demo --seed 42 --size small`, which starts the demo at today's date) and
 * scanned by a real worker (`scan --wait`: sync, detectors, then triage of the scan's alert events). Its
 * times are moved back by the distance between its day 0 and the evaluation's (2026-11-01).
 *
 * It prints what it computed and exits by itself: 0 when questions.json holds exactly these facts, 1 when
 * not (or when a reference is ambiguous), 2 on a setup failure.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { DETECTORS, runDetectors } from '@opsi/detectors';
import { prepareTemplateDatabase } from '@opsi/db/testing';
import {
  call,
  createTenantWithUser,
  createTestContext,
  freePort,
  mintTestToken,
  runAdmin,
  startService,
  testRedisUrl,
  type ServiceProcess,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import type { DemoSpec } from '@opsi/inventory';
import * as seed from '../seed';
import { EVAL_SPEC, syncDemo } from '../seed';

const FILE = new URL('./questions.json', import.meta.url);
const WRITE = process.argv.includes('--write');

// The harness's own learnings (EVAL_LEARNINGS of seed.ts once it exports them; before, LEARNINGS in
// eval.int.test.ts, reproduced verbatim here), and tenant B's (LEARNING_OF_B in eval.int.test.ts).
type Taught = Array<{ fact: string; service?: string }>;
const SEED = seed as unknown as Record<string, unknown>;
const LEARNINGS_A: Taught = (SEED.EVAL_LEARNINGS as Taught | undefined) ?? [
  {
    fact: 'Month-end batch jobs push prod-payments-db CPU above 90% for about two hours; page only if it lasts longer.',
    service: 'payments',
  },
  {
    fact: 'Never resize prod-payments-db during business hours: the failover drops open payment sessions.',
    service: 'payments',
  },
];
/** seed.ts's whole evaluation state (demo, detectors, triage of its alerts, resilience, learnings), once it has it. */
const seedEvalTenant = SEED.seedEvalTenant as
  | ((
      db: TestContext['db'],
      member: TestMember,
      opts: { spec?: DemoSpec; learnings?: Taught },
    ) => Promise<unknown>)
  | undefined;
const LEARNING_OF_B = { fact: 'The zebra-ledger cluster of tenant B is tuned by hand.', service: 'payments' };

// ---------------------------------------------------------------- the API's data

interface Node {
  id: string;
  arn: string;
  native_id: string;
  type: string;
  name: string;
  account_id: string;
  region: string;
}
interface Finding {
  id: string;
  title: string;
  severity: string;
  domain: string;
  status: string;
  check_id: string;
  savings: number;
}
interface FindingDetail extends Finding {
  resources: Array<{
    name: string;
    type: string;
    native_id: string;
    monthly_cost: number | null;
    savings: number;
  }>;
  recommendation: { rationale: string; action_type: string; savings: number } | null;
}
interface DriftItem extends Node {
  at: string;
  actor: string | null;
  event?: string;
  fields?: Array<{ path: string; before: unknown; after: unknown }>;
}
interface Incident {
  id: string;
  title: string;
  severity: string;
  status: string;
  started_at: string;
  resolved_at: string | null;
  recurrence_of: string | null;
  alert_count: number;
  resources: Node[];
}
interface TriageEvent {
  title: string;
  severity: string;
  count: number;
  incident_id: string | null;
  resource: Node | null;
}

/** Money as the API's numbers are naturally written: $1,234.50. */
export const usd = (n: number) =>
  `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const sum = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) * 100) / 100;
/** "arn:aws:iam::533297907419:user/bob" → "bob"; an assumed role → "ci-deployer". */
const principal = (arn: string | null) =>
  !arn
    ? ''
    : arn.includes(':assumed-role/')
      ? arn.split(':assumed-role/')[1]!.split('/')[0]!
      : arn.split('/').pop()!;

class Api {
  constructor(
    readonly base: string,
    readonly token: string,
  ) {}
  async get<T = any>(path: string): Promise<T> {
    const res = await call(this.base, 'GET', path, { token: this.token });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.body as T;
  }
}

class Facts {
  findings: Finding[] = [];
  details = new Map<string, FindingDetail>();
  overview: any;
  risks: any[] = [];
  drift = new Map<number, { added: DriftItem[]; removed: DriftItem[]; changed: DriftItem[] }>();
  learnings: Array<{ id: string; fact: string; service: string | null }> = [];
  incidents: Incident[] = [];
  timelines = new Map<string, Array<{ kind: string; body: string }>>();
  triage: TriageEvent[] = [];
  /** GET /api/v1/resilience/findings of the same state as the incidents. */
  resilience: Array<{ scenario: string; title: string; severity: string; trigger: any; impacted: Node[] }> =
    [];
  /** Added to incident times to put them on the evaluation's calendar (0 when they are its own). */
  incidentShiftMs = 0;
  incidentSource = 'the evaluation state';

  constructor(readonly api: Api) {}

  async load() {
    this.overview = await this.api.get('/api/v1/pulse/overview');
    this.findings = (await this.api.get<{ findings: Finding[] }>('/api/v1/pulse/findings')).findings;
    for (const f of this.findings)
      this.details.set(f.id, await this.api.get<FindingDetail>(`/api/v1/pulse/findings/${f.id}`));
    this.risks = (await this.api.get('/api/v1/graph/risks')).risks;
    for (const days of [1, 7, 30])
      this.drift.set(days, await this.api.get(`/api/v1/graph/drift?days=${days}`));
    this.learnings = (await this.api.get('/api/v1/learnings')).learnings;
  }

  async loadIncidents(api: Api, shiftMs: number, source: string) {
    this.incidents = (await api.get<{ incidents: Incident[] }>('/api/v1/incidents')).incidents;
    for (const i of this.incidents)
      this.timelines.set(i.id, (await api.get(`/api/v1/incidents/${i.id}/timeline`)).events);
    this.triage = (await api.get<{ events: TriageEvent[] }>('/api/v1/triage/events?limit=500')).events;
    this.resilience = (await api.get('/api/v1/resilience/findings?limit=500')).findings;
    this.incidentShiftMs = shiftMs;
    this.incidentSource = source;
  }

  // -------------------------------------------------------------- lookups (each must name one thing)

  finding(check: string, titleContains?: string): Finding {
    const hits = this.findings.filter(
      (f) => f.check_id === check && (titleContains === undefined || f.title.includes(titleContains)),
    );
    if (hits.length !== 1)
      throw new Error(`finding ${check} ${titleContains ?? ''}: ${hits.length}, not one`);
    return hits[0]!;
  }
  detail(check: string, titleContains?: string): FindingDetail {
    return this.details.get(this.finding(check, titleContains).id)!;
  }
  active(filter: Partial<Pick<Finding, 'domain' | 'severity' | 'check_id'>>): Finding[] {
    return this.findings.filter(
      (f) =>
        (!filter.domain || f.domain === filter.domain) &&
        (!filter.severity || f.severity === filter.severity) &&
        (!filter.check_id || f.check_id === filter.check_id),
    );
  }
  async node(name: string, type?: string): Promise<Node> {
    const { results } = await this.api.get<{ results: Node[] }>(
      `/api/v1/graph/search?q=${encodeURIComponent(name)}&limit=500${type ? `&type=${type}` : ''}`,
    );
    const hits = results.filter((r) => r.name === name && (!type || r.type === type));
    if (hits.length !== 1) throw new Error(`resource ${name} ${type ?? ''}: ${hits.length}, not one`);
    return hits[0]!;
  }
  async searchCount(q: string): Promise<number> {
    return (await this.api.get<{ results: Node[] }>(`/api/v1/graph/search?q=${encodeURIComponent(q)}`))
      .results.length;
  }
  /** A resource's monthly cost, as the finding details that name it state it. */
  cost(name: string): number {
    const costs = new Set<number>();
    for (const d of this.details.values())
      for (const r of d.resources) if (r.name === name && r.monthly_cost !== null) costs.add(r.monthly_cost);
    if (costs.size !== 1) throw new Error(`cost of ${name}: ${[...costs].join(', ') || 'none'}`);
    return [...costs][0]!;
  }
  async blast(name: string, type?: string): Promise<string[]> {
    const n = await this.node(name, type);
    const b = await this.api.get<{ impacted: Node[] }>(`/api/v1/graph/blast-radius/${n.id}`);
    return [...new Set(b.impacted.map((i) => i.name))];
  }
  changes(days: number): DriftItem[] {
    const d = this.drift.get(days)!;
    return [...d.added, ...d.removed, ...d.changed];
  }
  change(name: string, days = 30): DriftItem {
    const hits = this.changes(days).filter((c) => c.name === name);
    if (hits.length !== 1) throw new Error(`change of ${name}: ${hits.length}, not one`);
    return hits[0]!;
  }
  learning(words: string) {
    const hits = this.learnings.filter((l) => l.fact.toLowerCase().includes(words.toLowerCase()));
    if (hits.length !== 1) throw new Error(`learning "${words}": ${hits.length}, not one`);
    return hits[0]!;
  }
  /**
   * What fixing a set of findings saves a month, by the contract's savings rule: each resource once (the
   * largest of the savings the set's findings put on it, since two actions on one resource exclude each
   * other: delete db-migration-io1 or move it to gp3), and a finding without resources at its own estimate.
   * Checked against the API: over every active finding it is the overview's `estimated_savings.monthly`.
   */
  savingsOf(findings: Finding[]): number {
    const perResource = new Map<string, number>();
    const unattached: number[] = [];
    for (const x of findings) {
      const d = this.details.get(x.id)!;
      if (!d.resources.length) unattached.push(x.savings);
      for (const r of d.resources) {
        const key = `${r.type}:${r.native_id}`;
        perResource.set(key, Math.max(perResource.get(key) ?? 0, r.savings));
      }
    }
    return sum([...perResource.values(), ...unattached]);
  }
  /** The open findings of the tenant, all of them: the overview's count, which the findings list agrees with. */
  totalOpen(): number {
    if (this.overview.open_findings !== this.findings.length)
      throw new Error(`overview ${this.overview.open_findings} open, the list ${this.findings.length}`);
    return this.overview.open_findings as number;
  }
  /** What fixing every open finding saves a month: the overview's figure, which savingsOf agrees with. */
  totalSavings(): number {
    const total = this.overview.estimated_savings.monthly as number;
    const mine = this.savingsOf(this.findings);
    if (mine !== total) throw new Error(`savingsOf(every finding) ${mine}, the overview ${total}`);
    return total;
  }
  /** The active findings on a resource (those whose resources name it). */
  on(name: string): Finding[] {
    return this.findings.filter((x) => this.details.get(x.id)!.resources.some((r) => r.name === name));
  }
  /** An incident time on the evaluation's calendar, as "2026-10-31 21:40". */
  when(iso: string): string {
    return new Date(Date.parse(iso) + this.incidentShiftMs).toISOString().slice(0, 16).replace('T', ' ');
  }
  day(iso: string): string {
    return this.when(iso).slice(0, 10);
  }
  openIncidents(): Incident[] {
    return this.incidents.filter((i) => i.status !== 'resolved');
  }
  latest(severity: string): Incident {
    const hits = this.incidents
      .filter((i) => i.severity === severity)
      .sort((a, b) => Date.parse(b.started_at) - Date.parse(a.started_at));
    if (!hits.length) throw new Error(`no ${severity} incident`);
    return hits[0]!;
  }
  alertsOf(incidentId: string): TriageEvent[] {
    return this.triage.filter((e) => e.incident_id === incidentId);
  }
}

// ---------------------------------------------------------------- the facts of each question

type FactFn = (f: Facts) => Promise<string[]> | string[];

const names = (fs: Finding[], pick: (f: FindingDetail) => string[]) => (f: Facts) => [
  ...new Set(fs.flatMap((x) => pick(f.details.get(x.id)!))),
];

/** Resource names a finding's title is about: its resources, or the one its title names. */
const subject = (d: FindingDetail): string[] => {
  const named = d.resources.map((r) => r.name).filter((n) => n && d.title.includes(n));
  return named.length ? [named.sort((a, b) => b.length - a.length)[0]!] : [];
};

/** What fixing the findings `pick` chooses saves a month (each resource once: Facts.savingsOf). */
const saves = (pick: (f: Facts) => Finding[]) => (f: Facts) => [usd(f.savingsOf(pick(f)))];

/** Words of a learning, checked to be in the learning the API answers. */
const taught = (f: Facts, which: string, words: string[]) => {
  const l = f.learning(which);
  for (const w of words)
    if (!l.fact.includes(w)) throw new Error(`"${w}" is not in the learning "${l.fact}"`);
  return words;
};

const FACTS: Record<string, FactFn> = {
  // ---- open findings by domain / severity
  'open-critical-security': (f) => names(f.active({ domain: 'security', severity: 'critical' }), subject)(f),
  'open-high-sre': (f) => names(f.active({ domain: 'sre', severity: 'high' }), subject)(f),
  'open-finops-count': (f) => [String(f.overview.by_domain.finops)],
  'open-by-domain': (f) => [
    String(f.overview.by_domain.finops),
    String(f.overview.by_domain.security),
    String(f.overview.by_domain.sre),
  ],
  'open-total-and-severity': (f) => [
    String(f.overview.open_findings),
    String(f.overview.by_severity.critical),
    String(f.overview.by_severity.high),
    String(f.overview.by_severity.medium),
  ],
  'open-medium-security': (f) => names(f.active({ domain: 'security', severity: 'medium' }), subject)(f),
  'open-low-finops': (f) => names(f.active({ domain: 'finops', severity: 'low' }), subject)(f),

  // ---- savings
  ...Object.fromEntries(
    [
      'savings-biggest',
      'savings-most-money',
      'savings-one-thing',
      'savings-quick-win-top',
      'savings-what-first',
    ].map((id) => [
      id,
      (f: Facts) => {
        const top = [...f.findings].sort((a, b) => b.savings - a.savings)[0]!;
        return [...subject(f.details.get(top.id)!), usd(top.savings)];
      },
    ]),
  ),
  ...Object.fromEntries(
    ['savings-total', 'savings-total-monthly', 'savings-total-bill'].map((id) => [
      id,
      (f: Facts) => [usd(f.overview.estimated_savings.monthly)],
    ]),
  ),
  'savings-top-three': (f) => {
    // The largest savings on distinct resources (the same volume's two actions are exclusive).
    const seen = new Set<string>();
    const out: string[] = [];
    for (const x of [...f.findings].sort((a, b) => b.savings - a.savings)) {
      const s = subject(f.details.get(x.id)!)[0]!;
      if (seen.has(s)) continue;
      seen.add(s);
      out.push(s, usd(x.savings));
      // Two, not three: whether the same volume's second (exclusive) action is the third is a reading.
      if (seen.size === 2) break;
    }
    return out;
  },
  'savings-legacy-reporting-db': (f) => [usd(f.finding('finops.rds_idle', 'legacy-reporting-db').savings)],
  'savings-rightsize': (f) => ['reporting-worker-01', usd(f.finding('finops.ec2_low_cpu').savings)],

  // ---- costs
  'cost-prod-payments-db': (f) => [usd(f.cost('prod-payments-db'))],
  'cost-reporting-worker': (f) => [usd(f.cost('reporting-worker-01'))],
  'cost-analytics-data': (f) => [usd(f.cost('analytics-data'))],
  'cost-nat': (f) => [usd(f.cost('prod-nat-1a'))],
  'cost-bastion': (f) => [usd(f.cost('bastion'))],

  // ---- a resource's details
  'resource-legacy-reporting-db': (f) => [usd(f.cost('legacy-reporting-db'))],
  'resource-db-migration-io1': (f) => {
    const r = f.detail('finops.ebs_unattached', 'db-migration-io1').resources[0]!;
    if (!f.finding('finops.ebs_unattached', 'db-migration-io1').title.includes('500 GiB'))
      throw new Error('size');
    return ['500 GiB', 'io1', usd(r.monthly_cost!)];
  },
  'resource-exports-bucket': (f) => [usd(f.cost('acme-customer-exports-f5bd9f')), 'Sensitive'],
  'resource-old-jenkins': async (f) => {
    const n = await f.node('old-jenkins', 'aws_ec2_instance');
    return [n.account_id, n.region];
  },

  // ---- changes and who made them
  'changes-backups-who': (f) => [principal(f.change('prod-payments-db').actor)],
  'changes-last-day': (f) => f.changes(1).flatMap((c) => [c.name, principal(c.actor)]),
  'changes-sg-web': (f) => {
    const c = f.change('sg-web');
    const rules = c.fields!.find((x) => x.path === 'attributes.rules')!;
    const before = new Set((rules.before as Array<{ from_port: number }>).map((r) => r.from_port));
    const opened = (rules.after as Array<{ from_port: number }>).filter((r) => !before.has(r.from_port));
    return [principal(c.actor), ...opened.map((r) => String(r.from_port))];
  },
  'changes-week': (f) => [...new Set(f.changes(7).flatMap((c) => [c.name, principal(c.actor)]))],
  'changes-deleted-volume': (f) => {
    const r = f.drift.get(30)!.removed.filter((x) => x.type === 'aws_ebs_volume');
    if (r.length !== 1) throw new Error('removed volumes');
    return [r[0]!.name, principal(r[0]!.actor)];
  },
  'changes-resize': (f) => {
    const c = f.change('reporting-worker-01');
    const t = c.fields!.find((x) => x.path === 'attributes.instance_type')!;
    return [principal(c.actor), String(t.before), String(t.after)];
  },
  'changes-new-eip': (f) => {
    const a = f.drift.get(30)!.added.filter((x) => x.type === 'aws_vpc_eip');
    if (a.length !== 1) throw new Error('added EIPs');
    return [a[0]!.name, principal(a[0]!.actor)];
  },

  // ---- how to fix a finding
  'fix-backups': (f) => {
    const r = f.detail('sre.rds_no_backups').recommendation!.rationale;
    if (!r.includes('--backup-retention-period')) throw new Error('rds_no_backups rationale');
    return ['backup-retention-period'];
  },
  'fix-ssh-bastion': async (f) => [(await f.node('sg-bastion')).native_id],
  'fix-pitr': (f) => {
    if (!f.detail('sre.dynamodb_no_pitr').recommendation!.rationale.includes('update-continuous-backups'))
      throw new Error('pitr rationale');
    return ['update-continuous-backups', 'orders'];
  },
  'fix-cache-failover': (f) => {
    if (
      !f
        .detail('sre.elasticache_no_failover')
        .recommendation!.rationale.includes('--automatic-failover-enabled')
    )
      throw new Error('failover rationale');
    return ['automatic-failover', 'sessions-cache'];
  },
  'fix-rdp': async (f) => {
    const d = f.detail('security.sg_rdp_open');
    const n = await f.node('sg-web');
    const instances = d.resources.filter((r) => r.type === 'aws_ec2_instance').length;
    return [n.native_id, String(instances)];
  },

  // ---- blast radius
  'blast-payments-db': (f) => f.blast('prod-payments-db'),
  'blast-sessions-cache': (f) => f.blast('sessions-cache'),
  'blast-orders': (f) => f.blast('orders', 'aws_dynamodb_table'),
  'blast-nat': async (f) => {
    // Dozens of instances behind it: the facts are how many, and the subnets that lose their egress.
    const n = await f.node('prod-nat-1a', 'aws_vpc_nat_gateway');
    const b = await f.api.get<{ impacted: Node[]; total: number }>(`/api/v1/graph/blast-radius/${n.id}`);
    const subnets = b.impacted
      .filter((i) => i.type === 'aws_vpc_subnet')
      .map((i) => i.name)
      .sort();
    return [String(b.total), ...subnets];
  },
  'blast-sg-web': async (f) => {
    const all = await f.blast('sg-web');
    return [String(all.length), all.sort()[0]!, all.sort().at(-1)!];
  },

  // ---- what the resilience engine says fails (GET /api/v1/resilience/findings)
  'blast-az-loss': (f) => {
    const az = f.resilience.filter((r) => r.scenario === 'az_loss' && r.title.includes('us-east-1a'));
    if (az.length !== 1) throw new Error(`${az.length} us-east-1a scenarios`);
    // What loses all capacity, as its reason names it: the groups, the database, the NAT, the load balancer.
    const kinds = [
      'aws_ec2_autoscaling_group',
      'aws_rds_db_instance',
      'aws_vpc_nat_gateway',
      'aws_ec2_application_load_balancer',
    ];
    const reason = (az[0] as unknown as { reason: string }).reason;
    return az[0]!.impacted
      .filter((n) => kinds.includes(n.type) && reason.includes(n.name))
      .map((n) => n.name);
  },
  'blast-role-revocation': (f) => {
    const r = f.resilience.filter(
      (x) => x.scenario === 'role_revocation' && x.trigger?.resource?.name === 'checkout-app-role',
    );
    if (r.length !== 1) throw new Error(`${r.length} checkout-app-role scenarios`);
    return r[0]!.impacted
      .filter((n) => n.type === 'aws_ec2_instance' || n.type === 'aws_dynamodb_table')
      .map((n) => n.name);
  },

  // ---- single points of failure / risks
  'risks-spof': (f) => f.risks.filter((r) => r.kind === 'spof').map((r) => (r.resources as Node[])[0]!.name),
  'risks-biggest': (f) => {
    const critical = f.risks.filter((r) => r.severity === 'critical' && r.kind === 'toxic_combination');
    return [...new Set(critical.flatMap((r) => [(r.resources as Node[])[0]!.name]))];
  },
  'risks-toxic': (f) => {
    const toxic = f.risks.filter((r) => r.kind === 'toxic_combination');
    return [
      ...new Set(
        toxic.flatMap((r) =>
          (r.resources as Node[])
            .filter(
              (n) =>
                n.type !== 'aws_vpc_security_group' &&
                n.type !== 'aws_iam_instance_profile' &&
                n.type !== 'aws_iam_role',
            )
            .map((n) => n.name),
        ),
      ),
    ];
  },
  'risks-nat': (f) => {
    const r = f.risks.find((x) => x.kind === 'spof' && String(x.basis).includes('nat_many_azs'));
    const nat = (r.resources as Node[]).find((n) => n.type === 'aws_vpc_nat_gateway')!;
    return [nat.name, 'us-east-1a'];
  },

  // ---- incidents
  'incident-open': (f) => {
    const open = f.openIncidents();
    if (open.length !== 1) throw new Error(`${open.length} open incidents`);
    return [open[0]!.title, open[0]!.severity];
  },
  'incident-latest-sev1': (f) => {
    const i = f.latest('SEV1');
    return [i.title, f.day(i.started_at)];
  },
  'incident-whats-happening': (f) => {
    const i = f.openIncidents()[0]!;
    const alerts = [...new Set(f.alertsOf(i.id).map((e) => e.title))];
    return [...alerts, ...i.resources.map((r) => r.name).filter((n) => n !== 'prod-payments-db')];
  },
  'incident-before': (f) => {
    const i = f.openIncidents()[0]!;
    const prev = f.incidents.find((x) => x.id === i.recurrence_of)!;
    if (prev.status !== 'resolved') throw new Error('previous incident not resolved');
    return [f.day(prev.started_at)];
  },
  'incident-resolved': (f) => {
    const resolved = f.incidents.filter((i) => i.status === 'resolved');
    return resolved.flatMap((i) => [i.title, f.day(i.started_at)]);
  },

  // ---- learnings (a taught fact; the set's own `learnings` are taught first)
  // The facts are the taught words themselves, read back from GET /api/v1/learnings.
  'learning-owner': (f) => taught(f, 'ledgerline (the invoicing', ['Priya Natarajan']),
  'learning-config': (f) => taught(f, 'mailroom sends', ['SendGrid', 'eu-central-1']),
  'learning-what-do-we-know': (f) => taught(f, 'ledgerline (the invoicing', ['finance-platform']),
  'learning-resize': (f) => taught(f, 'Never resize', ['business hours']),
  'learning-page': (f) => taught(f, 'Month-end batch jobs', ['two hours']),

  // ---- computed figures (their inputs must be shown)
  'computed-unattached': (f) => {
    const xs = f.active({ check_id: 'finops.ebs_unattached' }).map((x) => x.savings);
    return [...xs.sort((a, b) => b - a).map(usd), usd(sum(xs))];
  },
  'computed-web-fleet': (f) => {
    const web = f.detail('security.sg_rdp_open').resources.filter((r) => r.type === 'aws_ec2_instance');
    const each = new Set(web.map((r) => r.monthly_cost));
    if (each.size !== 1) throw new Error('web costs differ');
    return [usd([...each][0]!), usd(sum(web.map((r) => r.monthly_cost!)))];
  },
  'computed-two-dbs': (f) => {
    const a = f.cost('prod-payments-db');
    const b = f.cost('legacy-reporting-db');
    return [usd(a), usd(b), usd(sum([a, b]))];
  },
  'computed-old-snapshots': (f) => {
    const xs = f.active({ check_id: 'finops.ebs_snapshot_old' }).map((x) => x.savings);
    return [...xs.sort((a, b) => b - a).map(usd), usd(sum(xs))];
  },
  'computed-incident-alerts': (f) => {
    const i = f.openIncidents()[0]!;
    const counts = f.alertsOf(i.id).map((e) => e.count);
    if (sum(counts) !== i.alert_count) throw new Error('alert counts');
    return [String(i.alert_count)];
  },

  // ---- follow-ups
  'followup-fix-biggest': (f) => [
    f.finding('finops.ebs_unattached', 'db-migration-io1').title.match(/vol-[0-9a-f]+/)![0],
  ],
  'followup-which-database': () => ['prod-payments-db'],
  'followup-who-changed': (f) => [principal(f.change('prod-payments-db').actor)],
  'followup-rightsize': (f) => [usd(f.finding('finops.ec2_low_cpu').savings)],
  'followup-what-changed': (f) => {
    const out = FACTS['changes-sg-web']!(f) as string[];
    return out.slice(1);
  },
  'followup-incident-resources': (f) => f.openIncidents()[0]!.resources.map((r) => r.name),

  // ---- scope: a question about totals names all open findings (or no subset), whatever the earlier turns
  // narrowed to; a follow-up with "these", "those", "them" is about the earlier answer's list.
  ...Object.fromEntries(
    [
      'scope-all-savings-after-security',
      'scope-all-savings-after-one-finding',
      'scope-all-waste-after-critical',
      'scope-all-savings-after-resource',
      'scope-all-savings-after-top-three',
      'scope-all-savings-after-fix',
      'scope-all-savings-after-snapshots',
      'scope-all-savings-after-volume-saving',
      'scope-all-savings-after-stated-zero',
      'scope-all-savings-after-payments-db',
    ].map((id) => [id, (f: Facts) => [usd(f.totalSavings())]]),
  ),
  ...Object.fromEntries(
    [
      'scope-all-count-after-volumes',
      'scope-all-count-after-low-finops',
      'scope-all-count-after-two-narrowings',
      'scope-all-count-after-high',
      'scope-all-count-after-finding',
    ].map((id) => [id, (f: Facts) => [String(f.totalOpen())]]),
  ),
  'scope-all-count-and-savings-after-finops': (f) => [String(f.totalOpen()), usd(f.totalSavings())],
  'scope-list-unattached-savings': saves((f) => f.active({ check_id: 'finops.ebs_unattached' })),
  'scope-list-high-finops-savings': saves((f) => f.active({ domain: 'finops', severity: 'high' })),
  'scope-list-resource-savings': saves((f) => f.on('legacy-reporting-db')),
  'scope-list-snapshots-savings': saves((f) => f.active({ check_id: 'finops.ebs_snapshot_old' })),
  'scope-list-sre-high-count': (f) => [String(f.active({ domain: 'sre', severity: 'high' }).length)],
  'scope-list-security-all-of-them': saves((f) => f.active({ domain: 'security' })),
  'scope-list-low-finops-savings': saves((f) => f.active({ domain: 'finops', severity: 'low' })),
  // The reverse: after a total, a question that names a subset is about that subset.
  'scope-named-volumes-after-total': saves((f) => f.active({ check_id: 'finops.ebs_unattached' })),
  'scope-named-snapshots-after-count': saves((f) => f.active({ check_id: 'finops.ebs_snapshot_old' })),
};

// ---------------------------------------------------------------- the file

interface QuestionFile {
  $comment?: string;
  learnings?: Array<{ fact: string; service?: string }>;
  questions: Array<{
    id: string;
    intent: string;
    prompt: string;
    history?: Array<{ role: string; content?: string }>;
    must_contain: string[];
    must_not_contain?: string[];
    must_cite: Array<Record<string, string>>;
    tools: string[];
    expect?: 'answer' | 'out_of_scope' | 'refusal';
  }>;
}

async function checkReferences(f: Facts, q: QuestionFile['questions'][number]): Promise<string[]> {
  const problems: string[] = [];
  const texts = [q.prompt, ...(q.history ?? []).map((h) => h.content ?? '')];
  const refs: Array<() => unknown> = [];
  for (const text of texts)
    for (const m of text.matchAll(/\{\{(finding|resource):([^}|]+)(?:\|([^}]+))?\}\}/g))
      refs.push(() => (m[1] === 'finding' ? f.finding(m[2]!, m[3]) : f.node(m[2]!, m[3])));
  for (const c of q.must_cite) {
    if ('finding_check' in c) refs.push(() => f.finding(c.finding_check!, c.title_contains));
    else if ('resource_name' in c) refs.push(() => f.node(c.resource_name!, c.type));
    else if ('learning' in c) refs.push(() => f.learning(c.learning!));
    else problems.push(`unknown citation ${JSON.stringify(c)}`);
  }
  for (const r of refs)
    try {
      await r();
    } catch (e) {
      problems.push((e as Error).message);
    }
  return problems;
}

async function main() {
  const file = JSON.parse(readFileSync(FILE, 'utf8')) as QuestionFile;
  await prepareTemplateDatabase();
  const t: TestContext = await createTestContext();
  const started: ServiceProcess[] = [];
  try {
    const a = await createTenantWithUser(t);
    const b = await createTenantWithUser(t);
    const specB: DemoSpec = { seed: 7, size: 'small', epoch: '2026-11-01', day: 0, commands: [] };
    if (seedEvalTenant) {
      await seedEvalTenant(t.db, a, { learnings: LEARNINGS_A });
      await seedEvalTenant(t.db, b, { spec: specB, learnings: [LEARNING_OF_B] });
    } else {
      await syncDemo(t.db, a.tenant.id);
      await syncDemo(t.db, b.tenant.id, specB);
      await runDetectors(t.db, a.tenant.id, DETECTORS);
      await runDetectors(t.db, b.tenant.id, DETECTORS);
      await t.db
        .insertInto('learnings')
        .values([
          ...LEARNINGS_A.map((l) => ({ tenant_id: a.tenant.id, created_by: `user:${a.user.email}`, ...l })),
          { tenant_id: b.tenant.id, created_by: `user:${b.user.email}`, ...LEARNING_OF_B },
        ])
        .execute();
    }
    console.log(
      `evaluation state: ${seedEvalTenant ? 'seedEvalTenant' : 'syncDemo + runDetectors + learnings'} (seed.ts)`,
    );

    const env = { DATABASE_URL: t.database.url, REDIS_URL: testRedisUrl(), REDIS_PREFIX: t.redisPrefix };
    const api = await startService(env, { entry: 'apps/api/src/main.ts' });
    started.push(api);
    const token = (await mintTestToken(t, a, 'read_write')).token;
    // The set's extra learnings, taught as a user would (POST /api/v1/learnings).
    for (const l of file.learnings ?? []) {
      const res = await call(api.url, 'POST', '/api/v1/learnings', { token, body: l });
      if (res.status !== 201) throw new Error(`POST /api/v1/learnings: ${res.status} ${res.text}`);
    }
    const facts = new Facts(new Api(api.url, token));
    await facts.load();

    // A taught service has no resource of its own: nothing in the inventory names it.
    for (const l of file.learnings ?? [])
      if (l.service && (await facts.searchCount(l.service)) !== 0)
        throw new Error(`the learning's service ${l.service} names resources of the tenant`);

    // Incidents: the evaluation state's own, else the demo storyline's made by a scan (see the top).
    const own = (await facts.api.get<{ incidents: Incident[] }>('/api/v1/incidents')).incidents;
    if (own.length) await facts.loadIncidents(facts.api, 0, 'the evaluation state');
    else {
      const c = await createTenantWithUser(t);
      const port = await freePort();
      const worker = await startService(
        { ...env, WORKER_METRICS_PORT: String(port), WORKER_QUEUES: 'pulse,triage' },
        { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${port}/healthz` },
      );
      started.push(worker);
      const connect = await runAdmin(
        [
          'env',
          'connect',
          '--tenant',
          c.tenant.slug,
          '--demo',
          '--seed',
          String(EVAL_SPEC.seed),
          '--size',
          EVAL_SPEC.size,
        ],
        env,
        { timeoutMs: 120_000 },
      );
      if (connect.code !== 0) throw new Error(`env connect: ${connect.stdout} ${connect.stderr}`);
      const scan = await runAdmin(['scan', '--tenant', c.tenant.slug, '--wait'], env, { timeoutMs: 300_000 });
      if (scan.code !== 0) throw new Error(`scan: ${scan.stdout} ${scan.stderr}`);
      const apiC = new Api(api.url, (await mintTestToken(t, c, 'read')).token);
      // Triage follows the scan on the triage queue: wait until its decisions stop changing.
      let last = '';
      for (let i = 0; i < 60; i++) {
        const now = JSON.stringify((await apiC.get('/api/v1/triage/events?limit=500')).events);
        if (now === last && now !== '[]') break;
        last = now;
        await new Promise((r) => setTimeout(r, 2000));
      }
      // Its day 0 is the end of its drift window; the evaluation's is EVAL_SPEC.epoch.
      const window = (await apiC.get('/api/v1/graph/drift?days=1')).window as { to: string };
      const shift = Date.parse(`${EVAL_SPEC.epoch}T00:00:00Z`) - Date.parse(window.to);
      await facts.loadIncidents(
        apiC,
        shift,
        `a demo tenant connected and scanned by the operator commands (day 0 ${window.to.slice(0, 10)}, moved to ${EVAL_SPEC.epoch})`,
      );
    }
    console.log(`incidents from ${facts.incidentSource}:`);
    for (const i of facts.incidents)
      console.log(
        `  ${i.severity} ${i.status} ${facts.when(i.started_at)} ${i.title} (${i.alert_count} alerts)`,
      );
    console.log(`resilience findings from the same state:`);
    for (const r of facts.resilience)
      console.log(
        `  ${r.scenario} ${r.severity} ${r.title} → ${r.impacted.length} impacted: ${r.impacted
          .map((n) => n.name)
          .slice(0, 12)
          .join(', ')}`,
      );
    console.log(
      `open findings ${facts.overview.open_findings}, savings ${usd(facts.overview.estimated_savings.monthly)}`,
    );

    // The facts, question by question.
    let mismatches = 0;
    const seen = new Set<string>();
    for (const q of file.questions) {
      const problems = await checkReferences(facts, q);
      const fn = FACTS[q.id];
      if (fn) {
        seen.add(q.id);
        let computed: string[] = [];
        try {
          computed = [...new Set(await fn(facts))];
        } catch (e) {
          problems.push(`facts: ${(e as Error).message}`);
        }
        if (!computed.length && !problems.length) problems.push('no facts computed');
        const same = JSON.stringify(computed) === JSON.stringify(q.must_contain);
        console.log(`${same ? ' ' : '*'} ${q.id}: ${JSON.stringify(computed)}`);
        if (!same) {
          if (WRITE) q.must_contain = computed;
          else problems.push(`questions.json says ${JSON.stringify(q.must_contain)}`);
        }
      } else if ((q.expect ?? 'answer') === 'answer' && q.must_contain.length)
        problems.push('an answerable question with facts that no function computes');
      for (const p of problems) console.log(`  ✗ ${q.id}: ${p}`);
      if (problems.length) mismatches++;
    }
    for (const id of Object.keys(FACTS))
      if (!seen.has(id)) console.log(`  ✗ facts for ${id}, which is no question`);
    if (WRITE) {
      const options = (await prettier.resolveConfig(fileURLToPath(FILE))) ?? {};
      writeFileSync(FILE, await prettier.format(JSON.stringify(file), { ...options, parser: 'json' }));
    }
    const counts = new Map<string, number>();
    for (const q of file.questions) counts.set(q.intent, (counts.get(q.intent) ?? 0) + 1);
    console.log(`${file.questions.length} questions: ${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    console.log(
      mismatches ? `${mismatches} question(s) differ from the API` : 'every question matches the API',
    );
    return mismatches ? 1 : 0;
  } finally {
    for (const p of started.reverse()) await p.stop();
    await t.close();
  }
}

main().then(
  (code) => process.exit(WRITE ? 0 : code),
  (e) => {
    console.error(e);
    process.exit(2);
  },
);
