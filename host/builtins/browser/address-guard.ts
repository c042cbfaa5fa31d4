/**
 * @module host/builtins/browser/address-guard
 * The browser's address rules, the same as plugin egress (host/bridge's address policy): a page,
 * each of its sub-requests and each redirect hop may reach a public unicast address only, or one
 * inside `builtins.browser.allowPrivateCidrs`. A name is resolved and EVERY address it has is
 * judged. Two places ask: the route handler on each request Chromium makes (early, with a reason
 * the agent reads), and the SOCKS proxy every connection of the context goes through
 * (socks-proxy.ts), which connects to the very address it judged — so a name that answers a public
 * address to the first look-up and a private one to the next (DNS rebinding) still never reaches
 * the private one. Only `http:` and `https:` pages are opened on an agent's request.
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

export class AddressGuard {
  readonly #allowed: Cidr[];
  readonly #resolve: Resolver;
  readonly #routeCache = new Map<string, { target: Promise<Target>; until: number }>();

  constructor(allowPrivateCidrs: readonly string[], resolver: Resolver = systemResolver) {
    this.#allowed = parseCidrs(allowPrivateCidrs);
    this.#resolve = resolver;
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

  /** Where a connection to `host` may go (the SOCKS proxy's question, asked for every connection). */
  async target(host: string): Promise<Target> {
    const literal = ipLiteralOf(host);
    if (literal !== undefined) {
      const verdict = judgeAddress(literal, this.#allowed);
      return verdict.allowed ? { kind: 'allowed', address: literal } : { kind: 'refused', range: verdict.range };
    }
    const addresses = await new Promise<{ address: string }[] | string>((resolve) =>
      this.#resolve(host, { all: true }, (err, list) =>
        resolve(err ? (err.code ?? 'ENOTFOUND') : list && list.length > 0 ? list : 'ENOTFOUND'),
      ),
    );
    if (typeof addresses === 'string') return { kind: 'unresolved', reason: addresses };
    for (const a of addresses) {
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
    const target = await this.#cachedTarget(parsed.hostname);
    return target.kind === 'refused' ? { host: parsed.hostname, range: target.range, at: Date.now() } : undefined;
  }

  #cachedTarget(host: string): Promise<Target> {
    const now = Date.now();
    const hit = this.#routeCache.get(host);
    if (hit && hit.until > now) return hit.target;
    if (this.#routeCache.size >= ROUTE_CACHE_ENTRIES) this.#routeCache.clear();
    const target = this.target(host);
    this.#routeCache.set(host, { target, until: now + ROUTE_CACHE_MS });
    return target;
  }
}
