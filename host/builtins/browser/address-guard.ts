/**
 * @module host/builtins/browser/address-guard
 * The browser's address rules, the same as plugin egress (host/bridge's address policy): a page,
 * each of its sub-requests and each redirect hop may reach a public unicast address only, or one
 * inside `builtins.browser.allowPrivateCidrs`. A name is resolved and EVERY address it has is
 * judged. Two places ask: the route handler on each request Chromium makes (early, with a reason
 * the agent reads), and the SOCKS proxy every connection of the context goes through
 * (socks-proxy.ts), which connects to the very address it judged — so a name that answers a public
 * address to the first look-up and a private one to the next (DNS rebinding) still never reaches
 * the private one. Only `http:` and `https:` pages are opened on an agent's request. The origins
 * the operator named as upstream targets (the policy's `upstreams`) are reached whatever their
 * address, as the bridge reaches them: a sign-in page mapped to a self-hosted or test server.
 */
import dns from 'node:dns';
import { fail } from '../../../contracts/errors.js';
import { ipLiteralOf, judgeAddress, parseCidrs, type Cidr, type Resolver } from '../../bridge/index.js';

/** An address the guard refused, as the context keeps it (the tool's error names it). */
export interface Refusal {
  host: string;
  /** the kind of address: ipaddr.js's range name ("loopback", "private", "linkLocal", …) */
  range: string;
  at: number;
}

/** Where a connection may go: an address judged allowed, or why not. */
export type Target =
  { kind: 'allowed'; address: string } | { kind: 'refused'; range: string } | { kind: 'unresolved'; reason: string };

/** How long a name's verdict is reused by the route check (the proxy judges every connection afresh). */
const ROUTE_CACHE_MS = 5_000;
const ROUTE_CACHE_ENTRIES = 1_000;

const systemResolver: Resolver = (hostname, options, cb) => dns.lookup(hostname, options, cb);

/** The port a URL reaches (its own, or its scheme's). */
export const portOf = (url: URL): number =>
  Number(url.port) || (url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80);

const endpointOf = (host: string, port: number): string => `${(ipLiteralOf(host) ?? host).toLowerCase()}:${port}`;

export class AddressGuard {
  readonly #allowed: Cidr[];
  readonly #resolve: Resolver;
  /** host:port of the origins the operator named (the policy's `upstreams` targets): reached whatever their address */
  readonly #named: Set<string>;
  readonly #routeCache = new Map<string, { target: Promise<Target>; until: number }>();

  constructor(
    allowPrivateCidrs: readonly string[],
    resolver: Resolver = systemResolver,
    namedOrigins: readonly string[] = [],
  ) {
    this.#allowed = parseCidrs(allowPrivateCidrs);
    this.#resolve = resolver;
    this.#named = new Set(namedOrigins.map((o) => new URL(o)).map((u) => endpointOf(u.hostname, portOf(u))));
  }

  /**
   * The URL an agent asked to open, or GW_ERR_BROWSER_URL_REFUSED: only http(s). `file:` would
   * read the gateway's files (/proc/self/environ holds its secrets), `chrome:` and `view-source:`
   * are the browser's own pages, `data:` and `javascript:` run text the caller wrote as a page.
   */
  static pageUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw fail('GW_ERR_BROWSER_URL_REFUSED', { message: `"${raw.slice(0, 200)}" is not a URL; give an http(s) URL` });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw fail('GW_ERR_BROWSER_URL_REFUSED', {
        message: `${url.protocol} URLs are not opened by the browser: only http: and https: pages are`,
      });
    return url;
  }

  /** Where a connection to `host`:`port` may go (the SOCKS proxy's question, asked for every connection). */
  async target(host: string, port: number): Promise<Target> {
    const named = this.#named.has(endpointOf(host, port));
    const literal = ipLiteralOf(host);
    if (literal !== undefined) {
      const verdict = judgeAddress(literal, this.#allowed);
      return verdict.allowed || named
        ? { kind: 'allowed', address: literal }
        : { kind: 'refused', range: verdict.range };
    }
    const addresses = await new Promise<{ address: string }[] | string>((resolve) =>
      this.#resolve(host, { all: true }, (err, list) =>
        resolve(err ? (err.code ?? 'ENOTFOUND') : list && list.length > 0 ? list : 'ENOTFOUND'),
      ),
    );
    if (typeof addresses === 'string') return { kind: 'unresolved', reason: addresses };
    for (const a of named ? [] : addresses) {
      const verdict = judgeAddress(a.address, this.#allowed);
      if (!verdict.allowed) return { kind: 'refused', range: verdict.range };
    }
    return { kind: 'allowed', address: (addresses[0] as { address: string }).address };
  }

  /**
   * The route handler's check of one request's URL: refused (with the kind of address) or not. A
   * name that does not resolve is let through: Chromium then fails it as it would, and the proxy
   * decides again at connect time anyway.
   */
  async refusal(url: string): Promise<Refusal | undefined> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { host: url.slice(0, 200), range: 'unparseable', at: Date.now() };
    }
    if (
      parsed.protocol !== 'http:' &&
      parsed.protocol !== 'https:' &&
      parsed.protocol !== 'ws:' &&
      parsed.protocol !== 'wss:'
    )
      return { host: parsed.protocol, range: 'scheme', at: Date.now() };
    const target = await this.#cachedTarget(parsed.hostname, portOf(parsed));
    return target.kind === 'refused' ? { host: parsed.hostname, range: target.range, at: Date.now() } : undefined;
  }

  #cachedTarget(host: string, port: number): Promise<Target> {
    const now = Date.now();
    const key = endpointOf(host, port);
    const hit = this.#routeCache.get(key);
    if (hit && hit.until > now) return hit.target;
    if (this.#routeCache.size >= ROUTE_CACHE_ENTRIES) this.#routeCache.clear();
    const target = this.target(host, port);
    this.#routeCache.set(key, { target, until: now + ROUTE_CACHE_MS });
    return target;
  }
}
