/**
 * @module host/oauth-server/oauth-error
 * The refusals of the authorization server, by their RFC error code (RFC 6749 §4.1.2.1 and §5.2,
 * RFC 7591 §3.2.2, RFC 7009 §2.2.1, RFC 8707 §2): `OAuthRefusal` carries the code, the HTTP status
 * the token, registration and revocation endpoints answer it with, and a description for people.
 * It is one catalogue code (GW_ERR_OAUTH_REFUSED) whatever the RFC code: the RFC code is what
 * clients match on, and the JSON body carries both.
 */
import { WorkbenchError } from '../../contracts/errors.js';

/** The RFC error codes this server answers with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'temporarily_unavailable'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata';

export class OAuthRefusal extends WorkbenchError<'GW_ERR_OAUTH_REFUSED' | 'GW_ERR_OAUTH_RATE_LIMITED'> {
  readonly error: OAuthErrorCode;
  /** 401 for invalid_client (RFC 6749 §5.2), 429 for a spent budget, 400 for the rest */
  readonly status: number;
  /** when a spent budget may be tried again, seconds */
  readonly retryAfterSec: number | undefined;
  constructor(error: OAuthErrorCode, description: string, retryAfterSec?: number) {
    super(retryAfterSec === undefined ? 'GW_ERR_OAUTH_REFUSED' : 'GW_ERR_OAUTH_RATE_LIMITED', description, { error });
    this.name = 'OAuthRefusal';
    this.error = error;
    this.retryAfterSec = retryAfterSec;
    this.status = retryAfterSec !== undefined ? 429 : error === 'invalid_client' ? 401 : 400;
  }
}

export function isOAuthRefusal(err: unknown): err is OAuthRefusal {
  return err instanceof OAuthRefusal;
}

/** `throw refuse('invalid_grant', 'the code has expired')` */
export function refuse(error: OAuthErrorCode, description: string): OAuthRefusal {
  return new OAuthRefusal(error, description);
}

/** What an OAuth JSON endpoint answers: a status, a JSON body and any extra headers. */
export interface OAuthAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The JSON error body of a refusal (RFC 6749 §5.2), with the catalogue code beside the RFC one. */
export function refusalAnswer(r: OAuthRefusal): OAuthAnswer {
  const headers: Record<string, string> = {};
  if (r.status === 401) headers['www-authenticate'] = 'Basic realm="workbench"';
  if (r.retryAfterSec !== undefined) headers['retry-after'] = String(r.retryAfterSec);
  return { status: r.status, body: { error: r.error, error_description: r.message, code: r.code }, headers };
}
