import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: an npm package, a workspace package, Node itself, or V8. */
function category(url: string, fn: string): string {
  if (!url) return fn || '(anonymous)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const ours = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (ours) return `@opsi/${ours[2]}`;
  if (url.startsWith('node:')) return url.split('/')[0]!;
  const bench = /\/bench\//.test(url);
  return bench ? 'bench' : url;
}

export interface ProfileSummary {
  /** Milliseconds sampled, idle excluded. */
  busyMs: number;
  wallMs: number;
  byCategory: Array<[string, number]>;
  byFunction: Array<[string, number]>;
}

/** Self time of a .cpuprofile, by package and by function. */
export function summarizeProfile(path: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const cats = new Map<string, number>();
  const fns = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busy += us;
    const cat = category(url, functionName);
    cats.set(cat, (cats.get(cat) ?? 0) + us);
    const short = url.replace(/^.*\/(node_modules|packages|apps)\//, '$1/');
    const key = `${functionName || '(anonymous)'} ${short ? `${short}:${lineNumber + 1}` : ''}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => [k, v / 1000] as [string, number]);
  return {
    busyMs: busy / 1000,
    wallMs: (profile.endTime - profile.startTime) / 1000,
    byCategory: sorted(cats),
    byFunction: sorted(fns),
  };
}

export function renderProfile(title: string, s: ProfileSummary): string {
  const pct = (v: number) => `${((100 * v) / s.busyMs).toFixed(1).padStart(5)}%`;
  return [
    `${title}: ${s.busyMs.toFixed(0)} ms on CPU of ${s.wallMs.toFixed(0)} ms sampled`,
    '  by package (self time):',
    ...s.byCategory.map(([k, v]) => `    ${pct(v)}  ${v.toFixed(1).padStart(8)} ms  ${k}`),
    '  by function (self time):',
    ...s.byFunction.map(([k, v]) => `    ${pct(v)}  ${v.toFixed(1).padStart(8)} ms  ${k}`),
  ].join('\n');
}
