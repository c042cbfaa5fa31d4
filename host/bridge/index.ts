/**
 * @module host/bridge
 * The bridge's public entry. The bridge runs in the gateway process: it carries out every
 * `ctx.http` request a plugin makes from the sandbox — egress policy and address rules, credential
 * injection, redirects, size and time budgets, redaction of the credential from what goes back.
 * The rest of the host imports only this file.
 */
export {
  createBridge,
  createUpstreamMapper,
  type Bridge,
  type BridgeBufferStats,
  type BridgeOptions,
} from './create-bridge.js';
export type { CallScope, Credential } from './types.js';
// The cookie connection's cookie rules, for the connection service (capture, expiry).
export { cookieHost, isExpired, type StoredCookie } from './cookie-header.js';
export type { Resolver } from './safe-lookup.js';
// The address policy, for host-side requests to addresses that come from manifests (OAuth
// token and revocation endpoints): the same rules as ctx.http.
export { createSafeLookup } from './safe-lookup.js';
export { parseCidrs, ipLiteralOf, judgeAddress, type Cidr } from './address-policy.js';
