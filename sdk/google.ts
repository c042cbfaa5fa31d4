/**
 * @module sdk/google
 * The one error body every Google API answers a failure with (AIP-193):
 * `{error: {code, message, status, errors: [{reason}], details: [{reason}]}}`. Its message is
 * already a failure's `detail` (describeError reads `error.message`); this reads the rest, which a
 * plugin's own `failure` words tell apart by: the canonical status (RESOURCE_EXHAUSTED,
 * FAILED_PRECONDITION, …) and the reasons (rateLimitExceeded, ACCESS_TOKEN_SCOPE_INSUFFICIENT, …).
 */

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
