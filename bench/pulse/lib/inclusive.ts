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
}

/** A group of frames whose inclusive time is summed: a frame matches when `match` says so. */
export interface FrameGroup {
  label: string;
  match: (functionName: string, url: string) => boolean;
}

/**
 * Inclusive time (the frame and everything it called synchronously) of groups of frames, in ms, busy
 * time (idle excluded) as the whole. A frame nested under another frame of the same group counts once.
 * For async functions this is the synchronous work of each resumption, which is the CPU they cost.
 */
export function inclusiveTimes(path: string, groups: FrameGroup[]) {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let busyUs = 0;
  for (const [id, us] of self) if (byId.get(id)!.callFrame.functionName !== '(idle)') busyUs += us;
  const totals = new Map<number, number>();
  const total = (id: number): number => {
    const known = totals.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    let t = self.get(id) ?? 0;
    for (const c of node.children ?? []) t += total(c);
    totals.set(id, t);
    return t;
  };
  const out = groups.map((g) => ({ label: g.label, ms: 0 }));
  // Depth-first from the root, carrying which groups an ancestor already counted.
  const root = profile.nodes[0]!;
  const stack: Array<{ id: number; inside: Set<number> }> = [{ id: root.id, inside: new Set() }];
  while (stack.length) {
    const { id, inside } = stack.pop()!;
    const node = byId.get(id)!;
    const { functionName, url } = node.callFrame;
    let next = inside;
    groups.forEach((g, gi) => {
      if (!inside.has(gi) && g.match(functionName, url)) {
        out[gi]!.ms += total(id) / 1000;
        if (next === inside) next = new Set(inside);
        next.add(gi);
      }
    });
    for (const c of node.children ?? []) stack.push({ id: c, inside: next });
  }
  return { busyMs: busyUs / 1000, groups: out };
}
