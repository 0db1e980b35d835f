/** Polls `probe` every `everyMs` until it answers something other than undefined; throws past the bound. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  boundMs = 60_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
