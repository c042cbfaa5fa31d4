/**
 * @module host/connections/errors
 * Errors raised by the connection layer for bad input (an API-key form, an import, a connect
 * request) and for flows that cannot proceed. Each carries a stable code and, for input errors, one
 * message per field so forms and the CLI can say exactly what to fix.
 */

export const CONNECTION_ERROR_CODES = [
  'GW_ERR_CONNECTION_INVALID_INPUT', // a field is missing or does not match the manifest's rules
  'GW_ERR_CONNECTION_NOT_NEEDED', // the integration uses auth "none"
  'GW_ERR_CONNECTION_NO_CLIENT', // OAuth2 without <PLUGIN>_CLIENT_ID configured
  'GW_ERR_CONNECTION_UNKNOWN_INTEGRATION', // no plugin of that name
  'GW_ERR_CONNECTION_LINK_INVALID', // unknown, used, expired or another user's connect link
  'GW_ERR_CONNECTION_PROVIDER', // the provider refused or failed the exchange
] as const;

export type ConnectionErrorCode = (typeof CONNECTION_ERROR_CODES)[number];

export class ConnectionError extends Error {
  readonly code: ConnectionErrorCode;
  /** field name → problem, for input errors */
  readonly fields: Record<string, string>;
  constructor(code: ConnectionErrorCode, message: string, fields: Record<string, string> = {}) {
    super(message);
    this.name = 'ConnectionError';
    this.code = code;
    this.fields = fields;
  }
}

export function isConnectionError(err: unknown): err is ConnectionError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ConnectionError';
}
