/**
 * @module host/engine/rate-limit
 * Per-user and per-tenant execution budgets per minute (fixed one-minute windows, per replica).
 * Zero means unlimited. Returns the seconds until the window resets when a budget is spent.
 */
export interface RateLimiter {
  /** Takes one execution from the budgets; undefined when allowed, else seconds to wait. */
  take(userId: string, tenant: string): number | undefined;
}

export function createRateLimiter(limits: { perUserPerMinute: number; perTenantPerMinute: number }, now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  const current = (key: string, t: number): { start: number; count: number } => {
    let w = windows.get(key);
    if (!w || t - w.start >= 60_000) {
      if (windows.size >= 100_000) windows.clear();
      w = { start: t, count: 0 };
      windows.set(key, w);
    }
    return w;
  };
  const wait = (w: { start: number }, t: number): number => Math.max(1, Math.ceil((w.start + 60_000 - t) / 1000));
  return {
    take(userId, tenant) {
      const t = now();
      const budgets: Array<[{ start: number; count: number }, number]> = [];
      if (limits.perTenantPerMinute > 0) budgets.push([current(`t:${tenant}`, t), limits.perTenantPerMinute]);
      if (limits.perUserPerMinute > 0) budgets.push([current(`u:${userId}`, t), limits.perUserPerMinute]);
      // Check every budget before spending any: a refused execution spends nothing.
      for (const [w, limit] of budgets) if (w.count >= limit) return wait(w, t);
      for (const [w] of budgets) w.count++;
      return undefined;
    },
  };
}
