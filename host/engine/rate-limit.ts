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
  const check = (key: string, limit: number, t: number): number | undefined => {
    if (limit <= 0) return undefined;
    let w = windows.get(key);
    if (!w || t - w.start >= 60_000) {
      w = { start: t, count: 0 };
      windows.set(key, w);
      if (windows.size > 100_000) windows.clear();
    }
    if (w.count >= limit) return Math.max(1, Math.ceil((w.start + 60_000 - t) / 1000));
    w.count++;
    return undefined;
  };
  return {
    take(userId, tenant) {
      const t = now();
      return check(`t:${tenant}`, limits.perTenantPerMinute, t) ?? check(`u:${userId}`, limits.perUserPerMinute, t);
    },
  };
}
