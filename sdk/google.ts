/**
 * @module sdk/google
 * What every Google plugin shares: how it connects (googleOAuth) and the one error body every Google API answers a failure with (AIP-193):
 * `{error: {code, message, status, errors: [{reason}], details: [{reason}]}}`. Its message is
 * already a failure's `detail` (describeError reads `error.message`); this reads the rest, which a
 * plugin's own `failure` words tell apart by: the canonical status (RESOURCE_EXHAUSTED,
 * FAILED_PRECONDITION, …) and the reasons (rateLimitExceeded, ACCESS_TOKEN_SCOPE_INSUFFICIENT, …),
 * which googleReasonKind sorts into the few kinds of failure they mean.
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
  const reasons = [errors, details]
    .flatMap((list) => (Array.isArray(list) ? (list as unknown[]) : []))
    .map((e) => (e as { reason?: unknown } | null)?.reason);
  return {
    status: typeof status === 'string' ? status : '',
    reasons: reasons.filter((r): r is string => typeof r === 'string'),
  };
}

/**
 * What a Google error's reasons say the failure is, the first that applies: 'daily-limit' (a
 * per-day quota is used up: dailyLimitExceeded), 'rate-limit' (a per-minute or per-user quota or
 * rate: rateLimitExceeded, userRateLimitExceeded, sharingRateLimitExceeded, quotaExceeded,
 * RATE_LIMIT_EXCEEDED, RESOURCE_EXHAUSTED), 'scope' (the token lacks an OAuth scope:
 * insufficientPermissions, insufficientScopes, ACCESS_TOKEN_SCOPE_INSUFFICIENT), 'disabled' (the API
 * is not enabled in the OAuth client's Cloud project: accessNotConfigured, SERVICE_DISABLED), or
 * '' for none of these. Google sends these with a 403 as well as a 429: a plugin's `failure`
 * words each kind its own way.
 */
export type GoogleReasonKind = 'daily-limit' | 'rate-limit' | 'scope' | 'disabled' | '';

const REASON_KINDS: [Exclude<GoogleReasonKind, ''>, string[]][] = [
  ['daily-limit', ['dailyLimitExceeded']],
  [
    'rate-limit',
    [
      'rateLimitExceeded',
      'userRateLimitExceeded',
      'sharingRateLimitExceeded',
      'quotaExceeded',
      'RATE_LIMIT_EXCEEDED',
      'RESOURCE_EXHAUSTED',
    ],
  ],
  ['scope', ['insufficientPermissions', 'insufficientScopes', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT']],
  ['disabled', ['accessNotConfigured', 'SERVICE_DISABLED']],
];

/** The kind of failure a Google error's reasons (googleErrorInfo) name; see GoogleReasonKind. */
export function googleReasonKind({ reasons }: Pick<GoogleErrorInfo, 'reasons'>): GoogleReasonKind {
  for (const [kind, list] of REASON_KINDS) if (reasons.some((r) => list.includes(r))) return kind;
  return '';
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
