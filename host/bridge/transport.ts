/**
 * @module host/bridge/transport
 * The terminal step: one HTTP exchange with undici's `fetch` and `redirect: 'manual'`. Three
 * dedicated Agents, never the global dispatcher (so HTTP(S)_PROXY variables are ignored):
 * the checked agent's `connect.lookup` refuses any non-allowed resolved address; the public agent
 * refuses every address that is not public (allowPrivateCidrs aside), for hosts a plugin reaches
 * as "any public host"; the mapped agent serves only operator-named upstream targets. Library
 * errors are translated to bridge codes here and their messages dropped (they may quote URLs of
 * mapped targets).
 */
import { Agent, fetch } from 'undici';
import { BridgeError } from './bridge-error.js';
import { ADDRESS_BLOCKED, createSafeLookup, type Resolver } from './safe-lookup.js';
import type { Cidr } from './address-policy.js';
import type { Step } from './types.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-authenticate',
  'trailer',
  'te',
]);

/**
 * Answer headers that carry a credential of their own: a session cookie an API sets in reply to
 * the authenticated request, or an authentication exchange's next value. Plugins cannot send
 * cookies or authentication headers, so these are of no use to them, and in a result or a request
 * to another host they would be a credential outside the gateway (invariant 2). Redaction cannot
 * catch them: it removes only the values the gateway itself injected.
 */
const CREDENTIAL_ANSWER_HEADERS = new Set([
  'set-cookie',
  'set-cookie2',
  'authentication-info',
  'proxy-authentication-info',
]);

export interface TransportOptions {
  allowedCidrs: readonly Cidr[];
  resolver?: Resolver | undefined;
  /** extra trusted CAs (PEM), for operators with a private CA and for tests */
  ca?: string | string[] | undefined;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
}

export interface Transport {
  send: Step;
  close(): Promise<void>;
}

function causeCodes(e: unknown): string[] {
  const codes: string[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 6 && typeof cur === 'object' && cur !== null; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    cur = (cur as { cause?: unknown }).cause;
  }
  return codes;
}

export function createTransport(options: TransportOptions): Transport {
  const connect = { timeout: options.connectTimeoutMs, ...(options.ca ? { ca: options.ca } : {}) };
  const timeouts = { headersTimeout: options.requestTimeoutMs, bodyTimeout: options.requestTimeoutMs };
  const checked = new Agent({
    ...timeouts,
    connect: { ...connect, lookup: createSafeLookup(options.allowedCidrs, options.resolver) },
  });
  // hosts reached as "any public host": public addresses only, whatever the policy's private CIDRs
  const publicOnly = new Agent({
    ...timeouts,
    connect: { ...connect, lookup: createSafeLookup([], options.resolver) },
  });
  // operator-named targets: resolved normally (with the test resolver if one is given), never checked
  const plainLookup = options.resolver ? createSafeLookup([], options.resolver, false) : undefined;
  const mapped = new Agent({ ...timeouts, connect: plainLookup ? { ...connect, lookup: plainLookup } : connect });

  const send: Step = async function transportStep(req) {
    const target = req.target ?? req.url;
    let res;
    try {
      res = await fetch(target, {
        method: req.method,
        headers: req.headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        redirect: 'manual',
        signal: req.signal,
        dispatcher: req.mapped ? mapped : req.anyHost ? publicOnly : checked,
      });
    } catch (e) {
      if (req.signal.aborted) throw e;
      const where = req.hop === 0 ? '' : `redirect hop ${req.hop}: `;
      const codes = causeCodes(e);
      if (codes.includes(ADDRESS_BLOCKED)) {
        throw new BridgeError(
          'GW_ERR_BRIDGE_ADDRESS_BLOCKED',
          `${where}host "${req.url.hostname}" resolves to an address that is not allowed`,
        );
      }
      const known = codes.find((c) => /^(E[A-Z]+|UND_ERR_[A-Z_]+|ERR_TLS_[A-Z_]+|[A-Z_]*CERT[A-Z_]*)$/.test(c));
      throw new BridgeError(
        'GW_ERR_BRIDGE_NETWORK',
        `${where}request to "${req.url.hostname}" failed${known ? ` (${known})` : ''}`,
      );
    }
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name) && !CREDENTIAL_ANSWER_HEADERS.has(name)) headers[name] = value;
    });
    return { status: res.status, statusText: res.statusText, headers, url: req.url.href, body: '', stream: res.body };
  };

  return {
    send,
    async close() {
      await Promise.allSettled([checked.close(), publicOnly.close(), mapped.close()]);
    },
  };
}
