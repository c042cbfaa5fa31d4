/**
 * @module host/errors
 * The catalogue of the gateway's own error codes. Codes are stable and never reused; each entry
 * says where the error goes on the wire (`tool-result`: an item or result the model reads;
 * `http`: a status on REST/portal routes; `startup`: start-up refuses to continue) and whether
 * retrying the same call can help. docs/errors.md lists the same codes (a test keeps them equal).
 * Sandbox and bridge codes live in contracts/protocol.ts and are listed in the same document.
 */
export interface ErrorSpec {
  wire: 'tool-result' | 'http' | 'startup' | 'jsonrpc';
  retryable: boolean;
  summary: string;
}

export const GATEWAY_ERRORS = {
  GW_ERR_ENGINE_TOOL_NOT_FOUND: { wire: 'tool-result', retryable: false, summary: 'No tool of that name is registered (or the caller may not see it).' },
  GW_ERR_ENGINE_NOT_CONNECTED: { wire: 'tool-result', retryable: true, summary: 'The caller has no working connection for the integration; call connect.' },
  GW_ERR_VALIDATION_INVALID_ARGS: { wire: 'tool-result', retryable: false, summary: 'The arguments do not match the tool schema; the message names the path.' },
  GW_ERR_VALIDATION_SCHEMA_ERROR: { wire: 'tool-result', retryable: false, summary: 'Validating the arguments threw (a plugin schema bug); audited as SAFEPARSE_ERROR.' },
  GW_ERR_POLICY_FORBIDDEN: { wire: 'tool-result', retryable: false, summary: "The tenant's policy does not allow this plugin or tool; the rule is named." },
  GW_ERR_POLICY_RATE_LIMITED: { wire: 'tool-result', retryable: true, summary: 'The per-user or per-tenant rate limit is spent, or the user has too many connect links (30 per 10 minutes) or wait_for_connection calls waiting (4 at once); retryAfterSec says when to retry.' },
  GW_ERR_ENGINE_CREDENTIAL_FAILED: { wire: 'tool-result', retryable: true, summary: 'The stored credential could not be loaded or refreshed (provider down or answered garbage), or this server cannot read it (the details for the operator are in its log).' },
  GW_ERR_ENGINE_CANCELLED: { wire: 'tool-result', retryable: true, summary: 'The client cancelled the request (MCP notifications/cancelled): this execution was not started, or its ctx.http requests were stopped.' },
  GW_ERR_ENGINE_KEY_REVOKED: { wire: 'tool-result', retryable: false, summary: "The request's API key was revoked while the request ran: this execution was not started (the ones already running finish)." },
  GW_ERR_ENGINE_INTERNAL: { wire: 'tool-result', retryable: true, summary: 'An unexpected failure inside the gateway; the request id is in the logs.' },
  GW_ERR_TRANSPORT_UNAUTHORIZED: { wire: 'http', retryable: false, summary: 'No API key, or an unknown or revoked one (HTTP 401).' },
  GW_ERR_TRANSPORT_BAD_BODY: { wire: 'http', retryable: false, summary: 'The request body is not the expected JSON shape (HTTP 400).' },
  GW_ERR_TRANSPORT_UNSUPPORTED_MEDIA: { wire: 'http', retryable: false, summary: 'The request body is not application/json (HTTP 415).' },
  GW_ERR_TRANSPORT_BODY_TOO_LARGE: { wire: 'http', retryable: false, summary: 'The request body exceeds requests.bodyLimitBytes (HTTP 413).' },
  GW_ERR_TRANSPORT_BATCH_TOO_LARGE: { wire: 'http', retryable: false, summary: 'More executions than requests.maxBatch in one call.' },
  GW_ERR_TRANSPORT_INTEGRATION_NOT_FOUND: { wire: 'http', retryable: false, summary: 'No integration of that name (HTTP 404).' },
  GW_ERR_TRANSPORT_HOST_NOT_ALLOWED: { wire: 'http', retryable: false, summary: 'Host or Origin header refused on a loopback bind (HTTP 403, DNS-rebinding protection).' },
  GW_ERR_TRANSPORT_NOT_FOUND: { wire: 'http', retryable: false, summary: 'No such route (HTTP 404).' },
  GW_ERR_TRANSPORT_SHUTTING_DOWN: { wire: 'http', retryable: true, summary: 'The server is draining for shutdown (HTTP 503).' },
  GW_ERR_TRANSPORT_TOO_MANY_REQUESTS: { wire: 'http', retryable: true, summary: 'The user already has requests.maxInFlightPerUser POST requests in flight on this server (HTTP 429 with Retry-After; over MCP a JSON-RPC error body).' },
  GW_ERR_RESULT_CONTINUATION_UNKNOWN: { wire: 'tool-result', retryable: false, summary: 'Unknown or expired continuation id (also for another user\'s id).' },
  GW_ERR_RESULT_BATCH_TOO_LARGE: { wire: 'tool-result', retryable: false, summary: "The batch's results together exceed requests.maxBatchResultBytes (UTF-8 bytes, counted as results arrive, so the items past it are those whose handlers finished last); this item's handler ran (what it did, happened) and its result was dropped. Split the batch or narrow the request." },
  GW_ERR_RESULT_NOT_STORED: { wire: 'tool-result', retryable: true, summary: 'The result was over the response budget and could not be stored for continue_tool_result (the database refused the write, or the stored results of the user are at resultCap.maxStoredCharsPerUser: the message says which); it was dropped. Retry later or narrow the request.' },
  GW_ERR_RESULT_PART_OUT_OF_RANGE: { wire: 'tool-result', retryable: false, summary: 'The continuation has no such part.' },
  GW_ERR_RESULT_IMAGE_REFUSED: { wire: 'tool-result', retryable: false, summary: "An image in a result was not shown: its type is not PNG, JPEG, GIF or WebP (nor SVG where images.allowSvg allows it), its bytes are not what its type says, or its SVG holds active content. The error stands in the image's place; the rest of the result is kept." },
  GW_ERR_DISCOVERY_TOOL_NOT_FOUND: { wire: 'tool-result', retryable: false, summary: 'get_tool_schema: no such tool the caller may run; closest names are suggested.' },
  GW_ERR_PLUGIN_INVALID: { wire: 'startup', retryable: false, summary: 'A plugin folder was refused at load or reload (manifest, schema, tool names outside its prefix or taking a meta-tool\'s name, source); the others still load.' },
  GW_ERR_PLUGIN_CLASH: { wire: 'startup', retryable: false, summary: 'Two plugins claim the same plugin name, tool name or tool prefix: at start-up neither loads; at a reload the one serving keeps serving and the newcomer is refused. The message names both and their folders.' },
  GW_ERR_POLICY_INVALID: { wire: 'startup', retryable: false, summary: 'The policy file does not validate; start-up stops with the field and the problem.' },
  GW_ERR_CONFIG_INVALID: { wire: 'startup', retryable: false, summary: 'An environment variable has an invalid value, or a required one is missing (WORKBENCH_ENCRYPTION_KEY with a PostgreSQL DATABASE_URL).' },
} as const satisfies Record<string, ErrorSpec>;

export type GatewayErrorCode = keyof typeof GATEWAY_ERRORS;

/** An error raised by the gateway itself, carrying a catalogue code. */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: GatewayErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
    this.details = details;
  }
}

export function isGatewayError(err: unknown): err is GatewayError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'GatewayError' && typeof (err as { code?: unknown }).code === 'string';
}
