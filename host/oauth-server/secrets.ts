/**
 * @module host/oauth-server/secrets
 * The random values the authorization server hands out, and how they are checked. Codes and tokens
 * are 256 random bits, stored only as their SHA-256 hash (a database dump holds nothing that can
 * be presented). Each kind has a prefix, so a leaked one is recognisable (secret scanners) and an
 * access token is never mistaken for an API key ("wb_"). PKCE is S256 only (RFC 7636 §4.6).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const ACCESS_TOKEN_PREFIX = 'wbat_';
export const REFRESH_TOKEN_PREFIX = 'wbrt_';
export const CODE_PREFIX = 'wbac_';

export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashOf(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** An S256 code challenge: base64url of a SHA-256 digest, 43 characters. */
export const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** A code verifier (RFC 7636 §4.1): 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Whether `verifier` is the one whose S256 challenge is `challenge`. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!CODE_VERIFIER.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
