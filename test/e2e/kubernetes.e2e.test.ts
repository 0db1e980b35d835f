import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as apps from 'kubernetes-models/apps/v1';
import * as autoscaling from 'kubernetes-models/autoscaling/v2';
import * as batch from 'kubernetes-models/batch/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as core from 'kubernetes-models/v1';
import { loadConfig } from '@opsi/config';
import pg from 'pg';
import { adminServerUrl, testServerUrl } from '@opsi/db/testing';
import { QUEUE_NAMES } from '@opsi/jobs';
import { REPO_ROOT, freePort, startService } from '@opsi/test-support';
import { startSplitServices, type SplitServices } from '../support/split';

// deploy/kubernetes rendered as `kubectl kustomize` renders it, every object checked against the
// Kubernetes (and KEDA) schemas, and the invariants that keep the deployment working: every queue has
// a pool, every scaler reads a metric a real worker exports, every setting the config needs is given.

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: any;
};

const OVERLAYS = ['dev', 'production', 'production-hpa'] as const;
const KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
const NO_KUBECTL =
  KUBECTL.status !== 0 ? 'kubectl is not installed (.ci/run installs kubernetes-client)' : '';

const MODELS: Record<string, Record<string, new (data: any) => { validate(): void }>> = {
  v1: core as any,
  'apps/v1': apps as any,
  'batch/v1': batch as any,
  'policy/v1': policy as any,
  'networking.k8s.io/v1': networking as any,
  'autoscaling/v2': autoscaling as any,
  'keda.sh/v1alpha1': keda as any,
};

function render(overlay: string): Obj[] {
  const out = execFileSync('kubectl', ['kustomize', join(REPO_ROOT, 'deploy/kubernetes/overlays', overlay)], {
    encoding: 'utf8',
  });
  return parseAllDocuments(out).map((d) => d.toJS() as Obj);
}

const of = (objs: Obj[], kind: string) => objs.filter((o) => o.kind === kind);
const byName = (objs: Obj[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata.name === name);
const podSpec = (o: Obj) => o.spec.template.spec;
const envOf = (c: any): Record<string, string> =>
  Object.fromEntries((c.env ?? []).map((e: any) => [e.name, String(e.value)]));
const workers = (objs: Obj[]) =>
  of(objs, 'Deployment').filter(
    (d) => d.spec.template.metadata.labels['app.kubernetes.io/component'] === 'worker',
  );
const poolOf = (d: Obj) => envOf(podSpec(d).containers[0]).WORKER_QUEUES!;

/** The Secret keys the README's Kubernetes section lists: the operator creates them (production). */
function readmeSecretKeys(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Kubernetes'));
  const line = section.split('\n').find((l) => l.includes('`opsi-secrets`'));
  return [...(line ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!);
}

/** The environment a container of the render gets: its ConfigMap and Secret (envFrom) and its env. */
function containerEnv(objs: Obj[], c: any): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, byName(objs, 'ConfigMap', from.configMapRef.name)?.data);
    if (from.secretRef) {
      const secret = byName(objs, 'Secret', from.secretRef.name);
      // Production's Secret is the operator's: stand in for it with the keys the README tells them to set.
      const keys = secret ? Object.keys(secret.data ?? {}) : readmeSecretKeys();
      for (const k of keys)
        env[k] = secret ? Buffer.from(secret.data[k], 'base64').toString() : placeholder(k);
    }
  }
  return { ...env, ...envOf(c) };
}

function placeholder(key: string): string {
  if (key === 'DATABASE_URL') return 'postgres://opsi:secret@db.internal:5432/opsi';
  if (key === 'REDIS_URL') return 'redis://redis.internal:6379';
  return 'x'.repeat(48);
}

describe.skipIf(NO_KUBECTL)(`deploy/kubernetes ${NO_KUBECTL}`, () => {
  const rendered = Object.fromEntries(OVERLAYS.map((o) => [o, render(o)])) as Record<string, Obj[]>;

  it.each(OVERLAYS)('%s: every object is valid against the Kubernetes and KEDA schemas', (overlay) => {
    const objs = rendered[overlay]!;
    expect(objs.length).toBeGreaterThan(20);
    for (const o of objs) {
      const Model = MODELS[o.apiVersion]?.[o.kind];
      expect(Model, `${o.apiVersion} ${o.kind} has a schema`).toBeDefined();
      expect(() => new Model!(o).validate(), `${o.kind}/${o.metadata.name}`).not.toThrow();
    }
  });

  it.each(OVERLAYS)('%s: every queue of the catalog has exactly one worker pool', (overlay) => {
    const pools = workers(rendered[overlay]!).map(poolOf).sort();
    expect(pools).toEqual([...QUEUE_NAMES].sort());
  });

  it.each(OVERLAYS)('%s: every container of opsi gets the settings its config needs', (overlay) => {
    const objs = rendered[overlay]!;
    const opsiPods = [...of(objs, 'Deployment'), ...of(objs, 'Job')].filter(
      (o) => o.metadata.labels?.['app.kubernetes.io/part-of'] === 'opsi',
    );
    expect(opsiPods.length).toBe(QUEUE_NAMES.length + 3); // pools, API, scheduler, migrations
    for (const o of opsiPods) {
      for (const c of [...(podSpec(o).initContainers ?? []), ...podSpec(o).containers]) {
        const env = containerEnv(objs, c);
        const where = `${o.metadata.name}/${c.name}`;
        // Split processes always run against Postgres and Redis servers, never in trial mode.
        expect(env.DATABASE_URL, where).toMatch(/^postgres(ql)?:\/\//);
        expect(env.REDIS_URL, where).toMatch(/^rediss?:\/\//);
        expect(env.NODE_ENV, where).toBe('production');
        expect(() => loadConfig(env), where).not.toThrow();
      }
    }
  });

  it.each(OVERLAYS)(
    '%s: pods run non-root on a read-only root filesystem, with requests and limits',
    (overlay) => {
      const objs = rendered[overlay]!;
      for (const o of [...of(objs, 'Deployment'), ...of(objs, 'Job')]) {
        if (o.metadata.labels?.['app.kubernetes.io/part-of'] !== 'opsi') continue;
        const spec = podSpec(o);
        expect(spec.securityContext.runAsNonRoot, o.metadata.name).toBe(true);
        expect(spec.automountServiceAccountToken, o.metadata.name).toBe(false);
        for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
          const where = `${o.metadata.name}/${c.name}`;
          expect(c.securityContext.readOnlyRootFilesystem, where).toBe(true);
          expect(c.securityContext.allowPrivilegeEscalation, where).toBe(false);
          expect(c.securityContext.capabilities.drop, where).toEqual(['ALL']);
          expect(c.resources.requests.cpu && c.resources.requests.memory, where).toBeTruthy();
          expect(c.resources.limits.memory, where).toBeTruthy();
        }
        // Node and npm write only to /tmp.
        expect(spec.containers[0].volumeMounts.map((m: any) => m.mountPath)).toContain('/tmp');
      }
    },
  );

  it.each(OVERLAYS)('%s: migrations run as a Job; every other pod waits for them', (overlay) => {
    const objs = rendered[overlay]!;
    const job = byName(objs, 'Job', 'opsi-migrate')!;
    expect(podSpec(job).containers[0].command.join(' ')).toContain('packages/db/dist/migrate.cli.js');
    for (const d of of(objs, 'Deployment').filter((o) => o.metadata.labels?.['app.kubernetes.io/part-of'])) {
      const wait = podSpec(d).initContainers?.find((c: any) => c.name === 'wait-for-migrations');
      expect(wait?.command.join(' '), d.metadata.name).toContain('migrate.cli.js --check');
    }
  });

  it.each(OVERLAYS)('%s: probes, shutdown grace and disruption budgets', (overlay) => {
    const objs = rendered[overlay]!;
    const api = podSpec(byName(objs, 'Deployment', 'opsi-api')!).containers[0];
    expect(api.readinessProbe.httpGet.path).toBe('/readyz');
    expect(api.livenessProbe.httpGet.path).toBe('/healthz');
    const apiPort = api.ports.find((p: any) => p.name === api.readinessProbe.httpGet.port).containerPort;
    expect(String(apiPort)).toBe(envOf(api).PORT);
    for (const d of workers(objs)) {
      const c = podSpec(d).containers[0];
      const env = containerEnv(objs, c);
      const config = loadConfig(env);
      expect(podSpec(d).terminationGracePeriodSeconds * 1000, d.metadata.name).toBeGreaterThan(
        config.WORKER_SHUTDOWN_GRACE_MS,
      );
      const probePort = c.ports.find((p: any) => p.name === c.livenessProbe.httpGet.port).containerPort;
      expect(probePort, d.metadata.name).toBe(config.WORKER_METRICS_PORT);
      expect(c.readinessProbe.httpGet.path).toBe('/healthz');
    }
    const budgets = of(objs, 'PodDisruptionBudget');
    for (const d of of(objs, 'Deployment').filter((o) => o.metadata.labels?.['app.kubernetes.io/part-of'])) {
      const labels = d.spec.template.metadata.labels;
      const covering = budgets.filter((b) =>
        Object.entries(b.spec.selector.matchLabels).every(([k, v]) => labels[k] === v),
      );
      expect(covering.length, d.metadata.name).toBe(1);
    }
  });

  it.each(OVERLAYS)('%s: network policies let in the API port and the metrics port only', (overlay) => {
    const objs = rendered[overlay]!;
    const policies = of(objs, 'NetworkPolicy');
    const ingressPorts = (name: string) => {
      const labels = byName(objs, 'Deployment', name)!.spec.template.metadata.labels;
      return policies
        .filter((p) => Object.entries(p.spec.podSelector.matchLabels).every(([k, v]) => labels[k] === v))
        .flatMap((p) => (p.spec.ingress ?? []).flatMap((r: any) => r.ports.map((x: any) => x.port)));
    };
    expect(ingressPorts('opsi-api')).toEqual([8080]);
    for (const d of workers(objs)) expect(ingressPorts(d.metadata.name)).toEqual([9464]);
    expect(ingressPorts('opsi-scheduler')).toEqual([]);
  });

  it('production: one KEDA ScaledObject per pool on the decided backlog query, aimed at its Deployment', () => {
    const objs = rendered.production!;
    for (const d of workers(objs)) {
      const pool = poolOf(d);
      const scalers = of(objs, 'ScaledObject').filter((s) => s.spec.scaleTargetRef.name === d.metadata.name);
      expect(scalers, pool).toHaveLength(1);
      const trigger = scalers[0]!.spec.triggers[0];
      expect(trigger.type).toBe('prometheus');
      expect(trigger.metadata.query).toBe(
        `sum(opsi_queue_jobs{queue="${pool}",state=~"waiting|prioritized"})`,
      );
      expect(Number(trigger.metadata.threshold)).toBeGreaterThan(0);
    }
    expect(of(rendered['production-hpa']!, 'ScaledObject')).toHaveLength(0);
    expect(of(rendered.dev!, 'ScaledObject')).toHaveLength(0);
  });

  it('production: the scrape job reads each pool once, through its metrics Service', () => {
    const objs = rendered.production!;
    const scrape = byName(objs, 'ConfigMap', 'opsi-prometheus-scrape')!.data['scrape-configs.yaml'];
    const targets: string[] = parseAllDocuments(scrape)[0]!.toJS()[0].static_configs[0].targets;
    expect(targets).toHaveLength(QUEUE_NAMES.length);
    for (const d of workers(objs)) {
      const labels = d.spec.template.metadata.labels;
      const services = of(objs, 'Service').filter((s) =>
        Object.entries(s.spec.selector).every(([k, v]) => labels[k] === v),
      );
      expect(services, d.metadata.name).toHaveLength(1);
      const svc = services[0]!;
      expect(targets).toContain(
        `${svc.metadata.name}.${svc.metadata.namespace}.svc:${svc.spec.ports[0].port}`,
      );
      // Not annotated for a per-pod scrape too, which would add each pod's copy of the gauge to the sum.
      expect(d.spec.template.metadata.annotations?.['prometheus.io/scrape']).toBeUndefined();
    }
  });

  it('production-hpa: one HPA per pool on the backlog through prometheus-adapter', () => {
    const objs = rendered['production-hpa']!;
    const rules = byName(objs, 'ConfigMap', 'opsi-prometheus-adapter-rules')!.data['external-rules.yaml'];
    const rule = parseAllDocuments(rules)[0]!.toJS()[0];
    expect(rule.metricsQuery).toContain('sum(opsi_queue_jobs{state=~"waiting|prioritized"');
    for (const d of workers(objs)) {
      const hpa = of(objs, 'HorizontalPodAutoscaler').find(
        (h) => h.spec.scaleTargetRef.name === d.metadata.name,
      );
      const metric = hpa!.spec.metrics[0].external.metric;
      expect(metric.name).toBe(rule.name.as);
      expect(metric.selector.matchLabels.queue).toBe(poolOf(d));
    }
  });

  describe('against the real processes', () => {
    let s: SplitServices;
    beforeAll(async () => {
      s = await startSplitServices({ worker: false });
    });
    afterAll(async () => {
      await s?.stop();
    });

    it('every pool scaler and adapter rule reads a series a worker of that pool exports', async () => {
      for (const d of workers(rendered.production!)) {
        const pool = poolOf(d);
        const port = await freePort();
        const worker = await startService(
          { ...s.env, WORKER_QUEUES: pool, WORKER_METRICS_PORT: String(port) },
          { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${port}/healthz` },
        );
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        for (const state of ['waiting', 'prioritized']) {
          expect(metrics, pool).toMatch(
            new RegExp(`^opsi_queue_jobs\\{queue="${pool}",state="${state}"\\} \\d+$`, 'm'),
          );
        }
        await worker.stop();
      }
    });

    it('migrate.cli.js --check: 3 and the names while migrations are pending, 0 once applied', async () => {
      // An empty database (the opsi_t_ prefix: the tests' global setup drops any a crash leaves behind).
      const name = `opsi_t_${Date.now()}_k8s_empty`;
      const admin = new pg.Client({ connectionString: adminServerUrl() });
      await admin.connect();
      await admin.query(`create database "${name}"`);
      const emptyUrl = Object.assign(new URL(testServerUrl()), { pathname: `/${name}` }).toString();
      try {
        const check = (url: string) =>
          spawnSync(process.execPath, ['--import', 'tsx', 'packages/db/src/migrate.cli.ts', '--check'], {
            cwd: REPO_ROOT,
            env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent' },
            encoding: 'utf8',
          });
        const pending = check(emptyUrl);
        expect(pending.status, pending.stderr).toBe(3);
        expect(pending.stdout).toMatch(/^pending: 20261122T0800_identity-and-audit, /);
        const current = check(s.t.database.url);
        expect(current.status, current.stderr).toBe(0);
        expect(current.stdout.trim()).toBe('database is up to date');
      } finally {
        await admin.query(`drop database if exists "${name}" with (force)`);
        await admin.end();
      }
    });
  });
});
