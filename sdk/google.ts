/**
 * @module sdk/google
 * What every Google plugin shares: how it connects (googleOAuth) and the one error body every Google API answers a failure with (AIP-193):
 * `{error: {code, message, status, errors: [{reason}], details: [{reason}]}}`. Its message is
 * already a failure's `detail` (describeError reads `error.message`); this reads the rest, which a
 * plugin's own `failure` words tell apart by: the canonical status (RESOURCE_EXHAUSTED,
 * FAILED_PRECONDITION, …) and the reasons (rateLimitExceeded, ACCESS_TOKEN_SCOPE_INSUFFICIENT, …).
 */
import type { PluginAuthSpec } from './define.js';

export interface GoogleErrorInfo {
  /** `error.status`, or '' */
  status: string;
  /** the `reason` of each `error.errors[]` entry, then of each `error.details[]` entry */
  reasons: string[];
}

/** The status and reasons of a Google error body (a failure's `data`); empty for any other body. */
export function googleErrorInfo(data: unknown): GoogleErrorInfo {
  const error = (data as { error?: unknown } | null | undefined)?.error;
  if (!error || typeof error !== 'object') return { status: '', reasons: [] };
  const { status, errors, details } = error as { status?: unknown; errors?: unknown; details?: unknown };
  const reasons = [errors, details].flatMap((list) => (Array.isArray(list) ? (list as unknown[]) : [])).map((e) => (e as { reason?: unknown } | null)?.reason);
  return { status: typeof status === 'string' ? status : '', reasons: reasons.filter((r): r is string => typeof r === 'string') };
}

/**
 * How every Google plugin connects: Google's OAuth 2.0 endpoints, asking for offline access (a
 * refresh token) on each consent, PKCE, and the access token sent as a Bearer token to `hosts`
 * only (the plugin's API hosts), never to another host it may reach.
 */
export function googleOAuth(scopes: string[], hosts: string[]): PluginAuthSpec {
  return {
    type: 'oauth2',
    authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    authorizationParams: { access_type: 'offline', prompt: 'consent' },
    tokenUrl: 'https://oauth2.googleapis.com/token',
    revocationUrl: 'https://oauth2.googleapis.com/revoke',
    scopes,
    scopeSeparator: ' ',
    pkce: true,
    clientAuth: 'body',
    inject: { hosts, header: 'authorization', format: 'Bearer {token}' },
  };
}
