/**
 * @module contracts/errors
 * The one catalogue of the error codes Workbench raises, in either process. Codes are stable and
 * never reused. Each entry says which family it belongs to (`group`), where the error goes
 * (`wire`: `tool-result`, an item or result the model reads; `http`, a status on REST/portal
 * routes; `jsonrpc`, a JSON-RPC error of /mcp; `startup`, start-up refuses to continue; `cli`, a
 * command exits with the message; `plugin`, plugin code gets it from ctx.http; `internal`, handled
 * inside the gateway and never shown as such), the HTTP status it is answered with on REST or the
 * portal where it has one (`status`; a REST execution failure without one answers 502), whether
 * retrying the same call can help, and the template its message is made from.
 *
 * Every error host/, sandbox/, contracts/ and common/ raise is a `WorkbenchError` (or a subclass)
 * made from this table, usually with `fail(code, params)`; the older lists (`GATEWAY_ERRORS`,
 * `SANDBOX_ERROR_CODES`, `BRIDGE_ERROR_CODES`, `CONNECTION_ERROR_CODES`) are views of it.
 * docs/errors.md lists the same codes with the same wire, status and retryability (a test keeps
 * them equal). Source text evaluated inside isolates (sandbox/isolate/*-source.ts) cannot import
 * this module; the codes it raises are listed here all the same.
 * One file on purpose (past 400 lines): it is the catalogue, one table read and checked whole.
 */

export type ErrorWire = 'tool-result' | 'http' | 'jsonrpc' | 'startup' | 'cli' | 'plugin' | 'internal';

/** The family a code belongs to: each has its own view and its own section of docs/errors.md. */
export type ErrorGroup = 'gateway' | 'sandbox' | 'bridge' | 'connection' | 'vault' | 'api-key' | 'operation' | 'signal';

export interface ErrorSpec<P = never> {
  group: ErrorGroup;
  wire: ErrorWire;
  /** the HTTP status on REST or the portal, where the error goes out over HTTP with one of its own */
  status?: number;
  /** Retry-After (seconds) sent with `status` when retrying later helps */
  retryAfterSec?: number;
  retryable: boolean;
  summary: string;
  /** makes the message text from the named parameters */
  message: (params: P) => string;
}

/** The message is composed where the error is raised (it names what only that place knows). */
const said = (p: { message: string }): string => p.message;

export const ERRORS = {
  // ---- gateway: engine, validation, policy, transport, results, discovery, plugins, configuration
  GW_ERR_ENGINE_TOOL_NOT_FOUND: {
    group: 'gateway',
    wire: 'tool-result',
    status: 404,
    retryable: false,
    summary: 'No tool of that name is registered (or the caller may not see it).',
    message: said,
  },
  GW_ERR_ENGINE_NOT_CONNECTED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 409,
    retryable: true,
    summary: 'The caller has no working connection for the integration; call connect.',
    message: said,
  },
  GW_ERR_VALIDATION_INVALID_ARGS: {
    group: 'gateway',
    wire: 'tool-result',
    status: 400,
    retryable: false,
    summary: 'The arguments do not match the tool schema; the message names the path.',
    message: said,
  },
  // the plugin's schema is broken: the plugin's failure, not the gateway's or the caller's
  GW_ERR_VALIDATION_SCHEMA_ERROR: {
    group: 'gateway',
    wire: 'tool-result',
    status: 502,
    retryable: false,
    summary: 'Validating the arguments threw (a plugin schema bug); audited as SAFEPARSE_ERROR.',
    message: said,
  },
  GW_ERR_POLICY_FORBIDDEN: {
    group: 'gateway',
    wire: 'tool-result',
    status: 403,
    retryable: false,
    summary: "The tenant's policy does not allow this plugin or tool; the rule is named.",
    message: said,
  },
  GW_ERR_POLICY_RATE_LIMITED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 429,
    retryable: true,
    summary:
      'The per-user or per-tenant rate limit is spent, or the user has too many connect links (30 per 10 minutes) or wait_for_connection calls waiting (4 at once); retryAfterSec says when to retry.',
    message: said,
  },
  GW_ERR_ENGINE_CREDENTIAL_FAILED: {
    group: 'gateway',
    wire: 'tool-result',
    retryable: true,
    summary:
      'The stored credential could not be loaded or refreshed (provider down or answered garbage), or this server cannot read it (the details for the operator are in its log).',
    message: said,
  },
  GW_ERR_ENGINE_CANCELLED: {
    group: 'gateway',
    wire: 'tool-result',
    retryable: true,
    summary:
      'The client cancelled the request (MCP notifications/cancelled): this execution was not started, or its ctx.http requests were stopped.',
    message: said,
  },
  // the key was revoked between the request's authentication and this execution
  GW_ERR_ENGINE_KEY_REVOKED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 401,
    retryable: false,
    summary:
      "The request's API key (or OAuth grant) was revoked while the request ran: this execution was not started (the ones already running finish).",
    message: said,
  },
  GW_ERR_ENGINE_INTERNAL: {
    group: 'gateway',
    wire: 'tool-result',
    status: 500,
    retryable: true,
    summary: 'An unexpected failure inside the gateway; the request id is in the logs.',
    message: said,
  },
  GW_ERR_INTERNAL_INVARIANT: {
    group: 'gateway',
    wire: 'internal',
    status: 500,
    retryable: false,
    summary:
      "An assertion about the gateway's own state failed (a bug, never a caller's mistake); it is logged and answered as GW_ERR_ENGINE_INTERNAL where a request is waiting.",
    message: said,
  },
  GW_ERR_TRANSPORT_UNAUTHORIZED: {
    group: 'gateway',
    wire: 'http',
    status: 401,
    retryable: false,
    summary:
      'No API key or OAuth access token, or an unknown, revoked or expired one, or an access token issued for another resource (HTTP 401).',
    message: said,
  },
  GW_ERR_TRANSPORT_BAD_BODY: {
    group: 'gateway',
    wire: 'http',
    status: 400,
    retryable: false,
    summary: 'The request body is not the expected JSON shape (HTTP 400).',
    message: said,
  },
  GW_ERR_TRANSPORT_UNSUPPORTED_MEDIA: {
    group: 'gateway',
    wire: 'http',
    status: 415,
    retryable: false,
    summary: 'The request body is not application/json (HTTP 415).',
    message: said,
  },
  GW_ERR_TRANSPORT_BODY_TOO_LARGE: {
    group: 'gateway',
    wire: 'http',
    status: 413,
    retryable: false,
    summary: 'The request body exceeds requests.bodyLimitBytes (HTTP 413).',
    message: said,
  },
  GW_ERR_TRANSPORT_BATCH_TOO_LARGE: {
    group: 'gateway',
    wire: 'http',
    status: 400,
    retryable: false,
    summary: 'More executions than requests.maxBatch in one call.',
    message: said,
  },
  GW_ERR_TRANSPORT_INTEGRATION_NOT_FOUND: {
    group: 'gateway',
    wire: 'http',
    status: 404,
    retryable: false,
    summary: 'No integration of that name (HTTP 404).',
    message: said,
  },
  GW_ERR_TRANSPORT_HOST_NOT_ALLOWED: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary: 'Host or Origin header refused on a loopback bind (HTTP 403, DNS-rebinding protection).',
    message: said,
  },
  GW_ERR_TRANSPORT_NOT_FOUND: {
    group: 'gateway',
    wire: 'http',
    status: 404,
    retryable: false,
    summary: 'No such route (HTTP 404).',
    message: said,
  },
  GW_ERR_TRANSPORT_SHUTTING_DOWN: {
    group: 'gateway',
    wire: 'http',
    status: 503,
    retryable: true,
    summary: 'The server is draining for shutdown (HTTP 503).',
    message: said,
  },
  GW_ERR_TRANSPORT_TOO_MANY_REQUESTS: {
    group: 'gateway',
    wire: 'http',
    status: 429,
    retryable: true,
    summary:
      'The user already has requests.maxInFlightPerUser POST requests in flight on this server (HTTP 429 with Retry-After; over MCP a JSON-RPC error body).',
    message: said,
  },
  // ---- the OAuth 2.1 authorization server for /mcp (host/oauth-server): the RFC error code is in the body
  GW_ERR_OAUTH_REFUSED: {
    group: 'gateway',
    wire: 'http',
    status: 400,
    retryable: false,
    summary:
      "An OAuth endpoint (/token, /register, /revoke) refused the request: the body's `error` is the RFC error code and `error_description` says why (HTTP 400; 401 for invalid_client).",
    message: said,
  },
  GW_ERR_OAUTH_AUTHORIZE_REFUSED: {
    group: 'gateway',
    wire: 'http',
    status: 400,
    retryable: false,
    summary:
      '/authorize cannot tell which app is asking or where to send the answer (unknown client_id, a client ID metadata document that cannot be fetched or is invalid, a redirect_uri the client did not register): an error page, never a redirect; logged at info with this code.',
    message: said,
  },
  GW_ERR_OAUTH_RATE_LIMITED: {
    group: 'gateway',
    wire: 'http',
    status: 429,
    retryable: true,
    summary:
      'Too many client registrations or client ID metadata document fetches from one address within the hour (oauthServer.registrationsPerHourPerAddress); HTTP 429 with Retry-After.',
    message: said,
  },
  GW_ERR_RESULT_CONTINUATION_UNKNOWN: {
    group: 'gateway',
    wire: 'tool-result',
    retryable: false,
    summary: "Unknown or expired continuation id (also for another user's id).",
    message: said,
  },
  GW_ERR_RESULT_BATCH_TOO_LARGE: {
    group: 'gateway',
    wire: 'tool-result',
    retryable: false,
    summary:
      "The batch's results together exceed requests.maxBatchResultBytes (UTF-8 bytes, counted as results arrive, so the items past it are those whose handlers finished last); this item's handler ran (what it did, happened) and its result was dropped. Split the batch or narrow the request.",
    message: said,
  },
  GW_ERR_RESULT_NOT_STORED: {
    group: 'gateway',
    wire: 'tool-result',
    retryable: true,
    summary:
      'The result was over the response budget and could not be stored for continue_tool_result (the database refused the write, or the stored results of the user are at resultCap.maxStoredCharsPerUser: the message says which); it was dropped. Retry later or narrow the request.',
    message: (p: { used: number; quota: number }) =>
      `the user's stored results take ${p.used} of the ${p.quota} characters allowed`,
  },
  GW_ERR_RESULT_PART_OUT_OF_RANGE: {
    group: 'gateway',
    wire: 'tool-result',
    retryable: false,
    summary: 'The continuation has no such part.',
    message: said,
  },
  GW_ERR_RESULT_IMAGE_REFUSED: {
    group: 'gateway',
    wire: 'tool-result',
    retryable: false,
    summary:
      "An image in a result was not shown: its type is not PNG, JPEG, GIF or WebP (nor SVG where images.allowSvg allows it), its bytes are not what its type says, or its SVG holds active content. The error stands in the image's place; the rest of the result is kept.",
    message: said,
  },
  GW_ERR_DISCOVERY_TOOL_NOT_FOUND: {
    group: 'gateway',
    wire: 'tool-result',
    retryable: false,
    summary: 'get_tool_schema: no such tool the caller may run; closest names are suggested.',
    message: said,
  },
  GW_ERR_PLUGIN_INVALID: {
    group: 'gateway',
    wire: 'startup',
    retryable: false,
    summary:
      "A plugin folder was refused at load or reload (manifest, schema, tool names outside its prefix or taking a meta-tool's name, source); the others still load.",
    message: said,
  },
  GW_ERR_PLUGIN_CLASH: {
    group: 'gateway',
    wire: 'startup',
    retryable: false,
    summary:
      'Two plugins claim the same plugin name, tool name or tool prefix: at start-up neither loads; at a reload the one serving keeps serving and the newcomer is refused. The message names both and their folders.',
    message: said,
  },
  GW_ERR_POLICY_INVALID: {
    group: 'gateway',
    wire: 'startup',
    retryable: false,
    summary: 'The policy file does not validate; start-up stops with the field and the problem.',
    message: said,
  },
  GW_ERR_CONFIG_INVALID: {
    group: 'gateway',
    wire: 'startup',
    retryable: false,
    summary:
      'An environment variable has an invalid value, or a required one is missing (WORKBENCH_ENCRYPTION_KEY with a PostgreSQL DATABASE_URL).',
    message: said,
  },

  // ---- built-in integrations (host/builtins): trusted host code serving tools like a plugin
  GW_ERR_BUILTIN_FAILED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 502,
    retryable: true,
    summary:
      'A built-in integration failed unexpectedly (a bug, or a resource it runs on failed); the request id is in the logs.',
    message: said,
  },
  GW_ERR_BUILTIN_TIMEOUT: {
    group: 'gateway',
    wire: 'tool-result',
    status: 504,
    retryable: true,
    summary:
      "A built-in tool ran past its wall-clock deadline (the integration's limits.wallMsPerCall); it was stopped.",
    message: said,
  },
  GW_ERR_BUILTIN_RESULT_TOO_LARGE: {
    group: 'gateway',
    wire: 'tool-result',
    status: 502,
    retryable: false,
    summary:
      "A built-in tool's result is over the integration's limits.maxResultBytes; ask for less (a smaller page, fewer characters).",
    message: said,
  },
  // the browser built-in (host/builtins/browser)
  GW_ERR_BROWSER_UNAVAILABLE: {
    group: 'gateway',
    wire: 'tool-result',
    status: 503,
    retryable: false,
    summary:
      'Chromium is not installed, cannot start, or would run as root without its sandbox; the message says how to fix it (docs/operations.md, Browser).',
    message: said,
  },
  GW_ERR_BROWSER_CRASHED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 502,
    retryable: true,
    summary:
      "The browser process died (crashed or was killed) while the call ran; the user's pages and cookies are gone, and the next call starts a new browser.",
    message: said,
  },
  GW_ERR_BROWSER_PAGE_CRASHED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 502,
    retryable: true,
    summary:
      "The page's renderer crashed (often its memory: builtins.browser.maxPageHeapMb); the page was closed, navigate again.",
    message: said,
  },
  GW_ERR_BROWSER_CLOSED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 409,
    retryable: true,
    summary:
      "The user's browser context was closed while the call ran (browser_close, or its idle timeout); the next call opens a new one.",
    message: said,
  },
  GW_ERR_BROWSER_URL_REFUSED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 400,
    retryable: false,
    summary: 'The URL is not an http(s) URL the browser may open (file:, chrome:, view-source:, data:, javascript: …).',
    message: said,
  },
  GW_ERR_BROWSER_ADDRESS_REFUSED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 403,
    retryable: false,
    summary:
      'The page (or a redirect to it) is on a loopback, private, link-local or metadata address, which the browser may not reach unless builtins.browser.allowPrivateCidrs allows it.',
    message: said,
  },
  GW_ERR_BROWSER_NAVIGATION_FAILED: {
    group: 'gateway',
    wire: 'tool-result',
    status: 502,
    retryable: true,
    summary:
      "The page could not be loaded (the name does not resolve, the connection was refused or reset, a TLS error); the message names Chromium's reason.",
    message: said,
  },
  GW_ERR_BROWSER_NAVIGATION_TIMEOUT: {
    group: 'gateway',
    wire: 'tool-result',
    status: 504,
    retryable: true,
    summary: 'The page did not finish loading within builtins.browser.navigationTimeoutMs.',
    message: said,
  },
  GW_ERR_BROWSER_ELEMENT_NOT_FOUND: {
    group: 'gateway',
    wire: 'tool-result',
    status: 404,
    retryable: false,
    summary:
      'No element matches the selector (or it did not become visible and usable) within builtins.browser.actionTimeoutMs.',
    message: said,
  },
  GW_ERR_BROWSER_TOO_MANY_CONTEXTS: {
    group: 'gateway',
    wire: 'tool-result',
    status: 503,
    retryable: true,
    summary:
      'The browser already holds builtins.browser.maxContexts contexts (all users), or this user maxContextsPerUser; retry once one closes (idle timeout, browser_close).',
    message: said,
  },
  GW_ERR_BROWSER_MEMORY_LIMIT: {
    group: 'gateway',
    wire: 'tool-result',
    status: 503,
    retryable: true,
    summary:
      "The browser's processes use more than builtins.browser.maxMemoryMb: the least recently used contexts are closed (this call's among them, or no new one is opened until memory is freed).",
    message: said,
  },
  GW_ERR_BROWSER_TAKEN_OVER: {
    group: 'gateway',
    wire: 'tool-result',
    status: 409,
    retryable: true,
    summary:
      'A person has taken control of this browser in the live view (browser_live_url); wait until they hand it back, then retry. Screenshots and reading text still work.',
    message: said,
  },
  // ---- gateway: signing in to the portal (a page that says why, with the code)
  GW_ERR_PORTAL_SIGN_IN_DISABLED: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary:
      'Signing in to the portal with an API key, or with a one-time sign-in link, is turned off by the policy (signIn.apiKey, signIn.loginLinks).',
    message: said,
  },
  GW_ERR_SSO_NOT_CONFIGURED: {
    group: 'gateway',
    wire: 'http',
    status: 404,
    retryable: false,
    summary: 'Single sign-on was asked for, and no OpenID Connect provider is configured (WORKBENCH_OIDC_ISSUER).',
    message: said,
  },
  GW_ERR_SSO_PROVIDER_UNAVAILABLE: {
    group: 'gateway',
    wire: 'http',
    status: 503,
    retryAfterSec: 30,
    retryable: true,
    summary:
      "The identity provider could not be reached, or its discovery document or token endpoint answered something unusable; the server's log says which.",
    message: said,
  },
  GW_ERR_SSO_RESPONSE_INVALID: {
    group: 'gateway',
    wire: 'http',
    status: 400,
    retryable: false,
    summary:
      'The answer that came back from the identity provider does not belong to a sign-in this browser started (no or another state, expired), or its code or ID token was refused by the checks (issuer, audience, signature, expiry, nonce, PKCE).',
    message: said,
  },
  GW_ERR_SSO_PROVIDER_REFUSED: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary: 'The identity provider answered with an error instead of a sign-in (access_denied, login_required, …).',
    message: said,
  },
  GW_ERR_SSO_EMAIL_MISSING: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary: 'The identity provider sent no email address for the person (the email scope or claim is missing).',
    message: said,
  },
  GW_ERR_SSO_EMAIL_UNVERIFIED: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary:
      'The identity provider does not say the email address is verified (email_verified), and the policy requires it (signIn.sso.requireVerifiedEmail).',
    message: said,
  },
  GW_ERR_SSO_DOMAIN_NOT_ALLOWED: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary: "The email address's domain is not one of the policy's signIn.sso.allowedDomains.",
    message: said,
  },
  GW_ERR_SSO_CLAIM_REQUIRED: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary: 'The person lacks the claim value the policy requires (signIn.sso.requiredClaim).',
    message: said,
  },
  GW_ERR_SSO_NO_ACCOUNT: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary:
      'No Workbench user has this email address, and the policy creates none on sign-in (signIn.sso sets neither allowedDomains nor requiredClaim).',
    message: said,
  },
  GW_ERR_SSO_NO_TENANT: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary:
      'A new user could not be placed in a tenant: the tenant claim holds no valid tenant name, and neither tenantByDomain nor defaultTenant gives one.',
    message: said,
  },
  GW_ERR_SSO_SUBJECT_MISMATCH: {
    group: 'gateway',
    wire: 'http',
    status: 403,
    retryable: false,
    summary:
      'The Workbench user with this email address is linked to another identity at this provider (another subject): an email address reused by someone else does not sign in as that user.',
    message: said,
  },

  // ---- jots (host/builtins/jots): the small static sites an agent publishes
  GW_ERR_JOTS_NOT_FOUND: {
    group: 'gateway',
    wire: 'tool-result',
    status: 404,
    retryable: false,
    summary:
      "No site with that id belongs to the caller (another user's site is not found either); jots_list shows the caller's own.",
    message: said,
  },
  GW_ERR_JOTS_FILE_NOT_FOUND: {
    group: 'gateway',
    wire: 'tool-result',
    status: 404,
    retryable: false,
    summary: 'jots_update was asked to delete a path the site does not hold; nothing was changed.',
    message: said,
  },
  GW_ERR_JOTS_INVALID_PATH: {
    group: 'gateway',
    wire: 'tool-result',
    status: 400,
    retryable: false,
    summary:
      'A file path is not a plain relative path (absolute, `..`, a backslash, a control character, `?` or `#`, an empty segment, too long or too deep), or names the same file twice; nothing was stored.',
    message: said,
  },
  GW_ERR_JOTS_BAD_CONTENT: {
    group: 'gateway',
    wire: 'tool-result',
    status: 400,
    retryable: false,
    summary: 'A file\'s content marked `encoding: "base64"` is not valid base64; nothing was stored.',
    message: said,
  },
  GW_ERR_JOTS_NO_INDEX: {
    group: 'gateway',
    wire: 'tool-result',
    status: 400,
    retryable: false,
    summary:
      'A site must have an `index.html` at its root (its address serves it): the deploy has none, or the update would delete it.',
    message: said,
  },
  GW_ERR_JOTS_QUOTA_SITES: {
    group: 'gateway',
    wire: 'tool-result',
    status: 409,
    retryable: false,
    summary:
      'The user already has `builtins.jots.maxSitesPerUser` sites; delete one (jots_delete) before deploying another.',
    message: said,
  },
  GW_ERR_JOTS_QUOTA_FILES: {
    group: 'gateway',
    wire: 'tool-result',
    status: 413,
    retryable: false,
    summary: 'The site would hold more than `builtins.jots.maxFilesPerSite` files; nothing was stored.',
    message: said,
  },
  GW_ERR_JOTS_QUOTA_FILE_BYTES: {
    group: 'gateway',
    wire: 'tool-result',
    status: 413,
    retryable: false,
    summary: 'A file is larger than `builtins.jots.maxFileBytes` (decoded); nothing was stored.',
    message: said,
  },
  GW_ERR_JOTS_QUOTA_SITE_BYTES: {
    group: 'gateway',
    wire: 'tool-result',
    status: 413,
    retryable: false,
    summary: "The site's files would add up to more than `builtins.jots.maxSiteBytes`; nothing was stored.",
    message: said,
  },
  GW_ERR_JOTS_QUOTA_USER_BYTES: {
    group: 'gateway',
    wire: 'tool-result',
    status: 413,
    retryable: false,
    summary:
      "The user's sites would add up to more than `builtins.jots.maxBytesPerUser`; delete or shrink a site first. Nothing was stored.",
    message: said,
  },
  // ---- sandbox: the handler run (an execute_tools item; REST 502 unless a status is given)
  GW_ERR_SANDBOX_HANDLER_THREW: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: false,
    summary: 'the handler threw or rejected: message is its own (sanitised)',
    message: said,
  },
  GW_ERR_SANDBOX_TOOL_MISSING: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: false,
    summary: 'the plugin module exports no handler for the tool',
    message: said,
  },
  GW_ERR_SANDBOX_LOAD_FAILED: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: false,
    summary: 'the plugin module failed to compile or evaluate',
    message: said,
  },
  GW_ERR_SANDBOX_TIMEOUT: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: false,
    summary: 'CPU timeout or wall-clock deadline',
    message: said,
  },
  GW_ERR_SANDBOX_MEMORY: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: false,
    summary: 'the isolate hit its memory limit',
    message: said,
  },
  GW_ERR_SANDBOX_RESULT_INVALID: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: false,
    summary: 'not JSON: functions, cycles, BigInt, undefined, …',
    message: said,
  },
  GW_ERR_SANDBOX_RESULT_TOO_LARGE: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: false,
    summary: 'over maxResultBytes',
    message: said,
  },
  // the caller sent arguments over the plugin's limits.maxArgsBytes: its request, not the plugin, is at fault
  GW_ERR_SANDBOX_ARGS_TOO_LARGE: {
    group: 'sandbox',
    wire: 'tool-result',
    status: 413,
    retryable: false,
    summary: 'over maxArgsBytes',
    message: said,
  },
  GW_ERR_SANDBOX_CRASHED: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: true,
    summary: 'the sandbox process or worker died while the call was in flight',
    message: said,
  },
  GW_ERR_SANDBOX_QUARANTINED: {
    group: 'sandbox',
    wire: 'tool-result',
    retryable: false,
    summary: 'the plugin crashed the sandbox too often and is suspended',
    message: said,
  },
  // the sandbox cannot take the call now: a full queue drains within a second or so; a sandbox restarting takes a few
  GW_ERR_SANDBOX_UNAVAILABLE: {
    group: 'sandbox',
    wire: 'tool-result',
    status: 503,
    retryAfterSec: 5,
    retryable: true,
    summary: 'the sandbox is shutting down or could not start',
    message: said,
  },
  GW_ERR_SANDBOX_OVERLOADED: {
    group: 'sandbox',
    wire: 'tool-result',
    status: 503,
    retryAfterSec: 1,
    retryable: true,
    summary: "the queue is full, or the plugin's or the user's share of it (the message says which)",
    message: said,
  },
  GW_ERR_SANDBOX_CANCELLED: {
    group: 'sandbox',
    wire: 'internal',
    retryable: true,
    summary: "the caller's signal was aborted while the call waited for a slot: it never started",
    message: said,
  },

  // ---- bridge: ctx.http failures, reaching plugin code as an Error with this `code`
  GW_ERR_BRIDGE_BAD_REQUEST: {
    group: 'bridge',
    wire: 'plugin',
    retryable: false,
    summary: 'malformed URL, method, header or body',
    message: said,
  },
  GW_ERR_BRIDGE_HOST_NOT_ALLOWED: {
    group: 'bridge',
    wire: 'plugin',
    retryable: false,
    summary: 'host not declared in the manifest / denied by policy',
    message: said,
  },
  GW_ERR_BRIDGE_ADDRESS_BLOCKED: {
    group: 'bridge',
    wire: 'plugin',
    retryable: false,
    summary: 'resolved to a private, loopback, link-local or metadata address',
    message: said,
  },
  GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED: {
    group: 'bridge',
    wire: 'plugin',
    retryable: false,
    summary: 'only https (or a mapped upstream) is allowed',
    message: said,
  },
  GW_ERR_BRIDGE_TOO_MANY_REQUESTS: {
    group: 'bridge',
    wire: 'plugin',
    retryable: false,
    summary: 'maxRequestsPerCall exceeded',
    message: said,
  },
  GW_ERR_BRIDGE_TOO_MANY_REDIRECTS: {
    group: 'bridge',
    wire: 'plugin',
    retryable: false,
    summary: 'too many redirects',
    message: said,
  },
  GW_ERR_BRIDGE_TIMEOUT: { group: 'bridge', wire: 'plugin', retryable: true, summary: 'timeout', message: said },
  GW_ERR_BRIDGE_RESPONSE_TOO_LARGE: {
    group: 'bridge',
    wire: 'plugin',
    retryable: false,
    summary: 'response too large',
    message: said,
  },
  GW_ERR_BRIDGE_NETWORK: {
    group: 'bridge',
    wire: 'plugin',
    retryable: true,
    summary: 'connection refused, reset, DNS failure, …',
    message: said,
  },
  GW_ERR_BRIDGE_CALL_ENDED: {
    group: 'bridge',
    wire: 'plugin',
    retryable: false,
    summary: 'the call the request belonged to is over',
    message: said,
  },
  GW_ERR_BRIDGE_CONNECTION_CHANGED: {
    group: 'bridge',
    wire: 'plugin',
    retryable: true,
    summary:
      "the connection was moved to another instance while the call ran: its credential is bound to the new instance's host, and is not sent to the old one; retry",
    message: said,
  },
  GW_ERR_BRIDGE_BUSY: {
    group: 'bridge',
    wire: 'plugin',
    retryable: true,
    summary:
      'the bridge holds as many response bodies as http.maxBufferedBytes allows (or the plugin its share); retry later',
    message: said,
  },

  // ---- connection: connect, the portal forms and `workbench connections import`
  GW_ERR_CONNECTION_INVALID_INPUT: {
    group: 'connection',
    wire: 'tool-result',
    retryable: false,
    summary: "a field is missing or does not match the manifest's rules",
    message: said,
  },
  GW_ERR_CONNECTION_NOT_NEEDED: {
    group: 'connection',
    wire: 'tool-result',
    retryable: false,
    summary: 'the integration uses auth "none"',
    message: said,
  },
  GW_ERR_CONNECTION_NO_CLIENT: {
    group: 'connection',
    wire: 'tool-result',
    retryable: false,
    summary: 'OAuth2 without <PLUGIN>_CLIENT_ID configured',
    message: said,
  },
  GW_ERR_CONNECTION_UNKNOWN_INTEGRATION: {
    group: 'connection',
    wire: 'tool-result',
    retryable: false,
    summary: 'no plugin of that name',
    message: said,
  },
  GW_ERR_CONNECTION_LINK_INVALID: {
    group: 'connection',
    wire: 'tool-result',
    retryable: false,
    summary: "unknown, used, expired or another user's connect link",
    message: said,
  },
  GW_ERR_CONNECTION_PROVIDER: {
    group: 'connection',
    wire: 'tool-result',
    retryable: true,
    summary: 'the provider refused or failed the exchange',
    message: said,
  },
  GW_ERR_CONNECTION_INSTANCE_INVALID: {
    group: 'connection',
    wire: 'tool-result',
    retryable: false,
    summary:
      'the instance URL is not an origin the gateway accepts (https unless the policy allows http; no user information, path, query or fragment), or the integration takes no instance',
    message: said,
  },
  GW_ERR_CONNECTION_INSTANCE_BLOCKED: {
    group: 'connection',
    wire: 'tool-result',
    retryable: false,
    summary:
      "the instance's host is denied by the policy, or resolves to a private, loopback, link-local or metadata address outside http.allowPrivateCidrs",
    message: said,
  },
  GW_ERR_CONNECTION_INSTANCE_UNRESOLVABLE: {
    group: 'connection',
    wire: 'tool-result',
    retryable: true,
    summary: "the instance's host name does not resolve (a typo, or a name only another network knows)",
    message: said,
  },
  GW_ERR_CONNECTION_CONFLICT: {
    group: 'connection',
    wire: 'tool-result',
    retryable: true,
    summary: 'the connection changed while it was being written or removed; try again',
    message: said,
  },

  // ---- vault: encryption keys and sealed values
  VAULT_BAD_KEY: {
    group: 'vault',
    wire: 'startup',
    retryable: false,
    summary:
      'an encryption key is malformed, or not the key the operation needs (keys rotate: no new key given, the key already in use, one the other servers do not have yet, an unfinished rotation)',
    message: said,
  },
  VAULT_UNKNOWN_KEY: {
    group: 'vault',
    wire: 'internal',
    retryable: false,
    summary: 'a value is sealed with a key this server does not have',
    message: said,
  },
  VAULT_DECRYPT_FAILED: {
    group: 'vault',
    wire: 'internal',
    retryable: false,
    summary: 'a sealed value does not decrypt (altered, or another key with the same id)',
    message: said,
  },
  VAULT_KEY_FILE: {
    group: 'vault',
    wire: 'startup',
    retryable: false,
    summary: 'a key file cannot be read or written, is readable by other users, or another keys rotate holds its lock',
    message: said,
  },
  VAULT_NOT_ROTATED_KEY: {
    group: 'vault',
    wire: 'cli',
    retryable: false,
    summary: 'keys reseal: the connections were rotated to a key this command does not run with as its current key',
    message: said,
  },

  // ---- api-key: the portal's and the CLI's API keys
  API_KEY_LIMIT: {
    group: 'api-key',
    wire: 'http',
    status: 409,
    retryable: false,
    summary: 'the user already holds the most unrevoked API keys an account may have',
    message: (p: { limit: number }) =>
      `this account already has ${p.limit} active API keys, the most it may have: revoke one it no longer uses, then create the new one`,
  },
  API_KEY_ORIGIN_REVOKED: {
    group: 'api-key',
    wire: 'http',
    status: 303,
    retryable: false,
    summary: "the portal session's own key was revoked while the request ran; the portal signs the session out",
    message: (p: { keyId: string }) =>
      `no key was created: the key it was to be created with (${p.keyId}) is revoked, and a key made with a revoked key would outlive it`,
  },

  // ---- operation: the command line, storage, the security report
  GW_ERR_CLI_USAGE: {
    group: 'operation',
    wire: 'cli',
    retryable: false,
    summary: 'a command was given a missing, repeated or malformed argument; the message says which and how to give it',
    message: said,
  },
  GW_ERR_CLI_REFUSED: {
    group: 'operation',
    wire: 'cli',
    retryable: false,
    summary:
      'a command cannot do what it was asked on the data as it is (no such user or key, the key is already revoked, the user exists)',
    message: said,
  },
  GW_ERR_PLUGIN_BUILD_FAILED: {
    group: 'operation',
    wire: 'cli',
    retryable: false,
    summary: "workbench plugin build: the plugin's definition or source has a problem; the message names the file",
    message: said,
  },
  GW_ERR_PLUGIN_TEST_FAILED: {
    group: 'operation',
    wire: 'cli',
    retryable: false,
    summary: 'workbench plugin test: a fixture file is not JSON or not of the documented shape',
    message: said,
  },
  GW_ERR_STORAGE_UNAVAILABLE: {
    group: 'operation',
    wire: 'startup',
    retryable: true,
    summary: 'the database cannot be opened or reached, or the first user cannot be created in it',
    message: said,
  },
  GW_ERR_REPORT_FAILED: {
    group: 'operation',
    wire: 'cli',
    retryable: false,
    summary:
      'the security report could not run a case (the gateway under test answered something else than a case needs)',
    message: said,
  },

  // ---- signal: codes passed between parts of the gateway, never shown to anyone as such
  // the resolver's refusal of a private address, read by the bridge and the provider fetch (never shown as such)
  WB_ADDRESS_BLOCKED: {
    group: 'signal',
    wire: 'internal',
    retryable: false,
    summary:
      'the DNS look-up of a guarded request resolved to a blocked address; surfaces as GW_ERR_BRIDGE_ADDRESS_BLOCKED',
    message: (p: { host: string; range: string }) => `${p.host} resolves to a ${p.range} address`,
  },
  // an answer of the gateway under test that held no item (counted as not contained)
  REPORT_NO_ITEM: {
    group: 'signal',
    wire: 'internal',
    retryable: false,
    summary: 'security report: an answer that held no item',
    message: said,
  },
} as const satisfies Record<string, ErrorSpec<never>>;

export type ErrorCatalogue = typeof ERRORS;
export type ErrorCode = keyof ErrorCatalogue;
/** The codes of one family. */
export type ErrorCodeOf<G extends ErrorGroup> = {
  [C in ErrorCode]: ErrorCatalogue[C]['group'] extends G ? C : never;
}[ErrorCode];
/** The parameters the message template of `C` takes. */
export type ErrorParams<C extends ErrorCode> = Parameters<ErrorCatalogue[C]['message']>[0];

/** The codes of one family, in catalogue order. */
export function codesOf<G extends ErrorGroup>(group: G): readonly ErrorCodeOf<G>[] {
  return (Object.keys(ERRORS) as ErrorCode[]).filter((c) => ERRORS[c].group === group) as ErrorCodeOf<G>[];
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERRORS, code);
}

/** The catalogue entry of a code (its wire, status, retryability and template). */
export function errorSpec(code: ErrorCode): ErrorSpec<never> {
  return ERRORS[code];
}

/** The message text of `code` made from its template. */
export function messageOf<C extends ErrorCode>(code: C, params: ErrorParams<C>): string {
  return (ERRORS[code].message as (p: ErrorParams<C>) => string)(params);
}

/**
 * An error Workbench raises itself, carrying a catalogue code. Its `name` stays "Error" (the
 * families' subclasses name themselves): wherever a name is shown (a stack, `String(err)`, the
 * sandbox's classification of isolate failures) it reads as the plain Error it replaced. Match on
 * `code`.
 */
export class WorkbenchError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: C, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }
}

/**
 * Only an error made here is one: an object that merely carries a catalogued `code` (plugin code
 * can throw `{ code: 'GW_ERR_ENGINE_NOT_CONNECTED' }`) is not.
 */
export function isWorkbenchError(err: unknown): err is WorkbenchError {
  return err instanceof WorkbenchError;
}

/** The error of `code`, its message made from `params`: `throw fail('GW_ERR_CLI_USAGE', { message })`. */
export function fail<C extends ErrorCode>(
  code: C,
  params: ErrorParams<C>,
  options?: { details?: Record<string, unknown>; cause?: unknown },
): WorkbenchError<C> {
  return new WorkbenchError(
    code,
    messageOf(code, params),
    options?.details,
    options?.cause === undefined ? undefined : { cause: options.cause },
  );
}
