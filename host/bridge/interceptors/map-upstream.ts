/**
 * @module host/bridge/interceptors/map-upstream
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

/** Where a request for `url` really goes under the policy's origin map (undefined: not mapped). */
export function mappedTarget(url: URL, upstreamMap: ReadonlyMap<string, URL>): URL | undefined {
  const to = upstreamMap.get(url.origin);
  return to ? new URL(to.origin + url.pathname + url.search) : undefined;
}

export function mapUpstream(): Interceptor {
  return (next) =>
    async function mapUpstreamStep(req, call) {
      const target = mappedTarget(req.url, call.policy.upstreamMap);
      if (!target) return next(req, call);
      const res = await next({ ...req, target, mapped: true }, call);
      const location = res.headers['location'];
      const headers =
        location === undefined
          ? res.headers
          : { ...res.headers, location: mapBack(location, target, call.policy, req.url.origin) };
      return { ...res, headers, url: req.url.href };
    };
}
