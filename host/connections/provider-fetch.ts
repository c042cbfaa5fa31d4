/**
 * @module host/connections/provider-fetch
 * The fetch the host uses for OAuth token, refresh and revocation requests. Their URLs come from
 * plugin manifests — third-party data — so they get the bridge's address rules: https only, and
 * every resolved address public unicast (or inside policy.http.allowPrivateCidrs). A URL the
 * operator mapped through `upstreams` is reachable as named. Redirects are not followed. Where the
 * policy lets a connection's own instance be an http:// origin (allowHttpInstances), the token
 * requests to such an instance may be http too, under the same address rules.
 */
import { Agent, fetch as undiciFetch } from 'undici';
import { createSafeLookup, ipLiteralOf, judgeAddress, parseCidrs } from '../bridge/index.js';
import { WorkbenchError } from '../../contracts/errors.js';

export interface ProviderFetchOptions {
  /** target origins the operator named in policy.upstreams (already mapped URLs point there) */
  mappedOrigins: readonly string[];
  allowPrivateCidrs: readonly string[];
  timeoutMs: number;
  /** http:// endpoints are allowed too (policy.http.allowHttpInstances) */
  allowHttp?: boolean;
}

export class ProviderAddressError extends WorkbenchError<'GW_ERR_BRIDGE_ADDRESS_BLOCKED'> {
  constructor(message: string) {
    super('GW_ERR_BRIDGE_ADDRESS_BLOCKED', message);
    this.name = 'ProviderAddressError';
  }
}

export function createProviderFetch(options: ProviderFetchOptions): typeof fetch {
  const allowed = parseCidrs(options.allowPrivateCidrs);
  const mapped = new Set(options.mappedOrigins.map((o) => new URL(o).origin));
  const guarded = new Agent({
    connect: { lookup: createSafeLookup(allowed), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const direct = new Agent({
    connect: { timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });

  const providerFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const operatorNamed = mapped.has(url.origin);
    if (!operatorNamed) {
      if (url.protocol !== 'https:' && !(options.allowHttp && url.protocol === 'http:'))
        throw new ProviderAddressError(`provider endpoint ${url.origin} is not https`);
      const literal = ipLiteralOf(url.hostname);
      if (literal !== undefined && !judgeAddress(literal, allowed).allowed)
        throw new ProviderAddressError(`provider endpoint ${url.origin} is a private address`);
    }
    const res = await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      redirect: 'manual',
      dispatcher: operatorNamed ? direct : guarded,
    }).catch((err: unknown) => {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      if (cause?.code === 'WB_ADDRESS_BLOCKED')
        throw new ProviderAddressError(`provider endpoint ${url.hostname} resolves to a private address`);
      throw err;
    });
    return res;
  };
  return providerFetch;
}
