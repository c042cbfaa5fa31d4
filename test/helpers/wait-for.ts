/**
 * @module test/helpers/wait-for
 * Polls a state until it holds. Tests never assert on time: the bound only makes a broken run fail
 * with what it waited for instead of hanging.
 */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
