/**
 * @module sandbox/bridge/interceptors/map-upstream
 * Applies the policy's `upstreams` (origin → origin): the request is sent to the mapped target,
 * which skips the private-address check because the operator named it. On the way back, a
 * `Location` that points at a mapped target is mapped back to the plugin's origin, so the redirect
 * step re-checks it in the plugin's own terms, and the response URL never reveals the target.
 */
import type { CompiledEgressPolicy, Interceptor } from '../types.js';

function mapBack(location: string, base: URL, policy: CompiledEgressPolicy, preferred: string): string {
  let abs: URL;
  try {
    abs = new URL(location, base);
  } catch {
    return location;
  }
  const tail = abs.pathname + abs.search + abs.hash;
  if (policy.upstreamMap.get(preferred)?.origin === abs.origin) return preferred + tail;
  for (const [from, to] of policy.upstreamMap) if (to.origin === abs.origin) return from + tail;
  return abs.href;
}

export function mapUpstream(): Interceptor {
  return (next) =>
    async function mapUpstreamStep(req, call) {
      const to = call.policy.upstreamMap.get(req.url.origin);
      if (!to) return next(req, call);
      const target = new URL(to.origin + req.url.pathname + req.url.search);
      const res = await next({ ...req, target, mapped: true }, call);
      const location = res.headers['location'];
      const headers = location === undefined ? res.headers : { ...res.headers, location: mapBack(location, target, call.policy, req.url.origin) };
      return { ...res, headers, url: req.url.href };
    };
}
