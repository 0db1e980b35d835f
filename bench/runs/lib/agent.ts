// Preloaded (`node --import tsx --import ./bench/runs/lib/agent.ts`) into every process the benchmark
// starts, including the real API and worker entry points, which stay unmodified. It answers requests from
// the benchmark over the IPC channel:
//   {type: 'mem'}            -> memory after full garbage collections (needs --expose-gc)
//   {type: 'profile-start'}  -> starts the V8 CPU profiler
//   {type: 'profile-stop', path} -> writes a .cpuprofile (open it in Chrome DevTools or speedscope)
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  gc: boolean;
}

interface Request {
  type: string;
  id?: number;
  path?: string;
}

const gc = (globalThis as { gc?: () => void }).gc;
let session: Session | undefined;

function post<T>(method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session!.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

async function memory(): Promise<MemorySample> {
  // Several full collections with turns of the event loop between them, so that finalizers and
  // weak callbacks run and what is left is what is really held.
  for (let i = 0; i < 4; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 25));
  }
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    gc: Boolean(gc),
  };
}

async function handle(msg: Request): Promise<unknown> {
  switch (msg.type) {
    case 'mem':
      return memory();
    case 'profile-start':
      session = new Session();
      session.connect();
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 250 });
      await post('Profiler.start');
      return { ok: true };
    case 'profile-stop': {
      const { profile } = await post<{ profile: unknown }>('Profiler.stop');
      session?.disconnect();
      session = undefined;
      if (msg.path) writeFileSync(msg.path, JSON.stringify(profile));
      return { ok: true };
    }
    default:
      return undefined;
  }
}

if (process.send) {
  process.on('message', (msg: Request) => {
    if (!msg || typeof msg !== 'object' || typeof msg.id !== 'number') return;
    handle(msg).then(
      (value) => process.send?.({ id: msg.id, value }),
      (err: Error) => process.send?.({ id: msg.id, error: err.message }),
    );
  });
  // The channel never keeps a process alive on its own: the service's own shutdown decides.
  process.channel?.unref();
}
