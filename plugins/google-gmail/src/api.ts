/**
 * @module plugins/google-gmail/src/api
 * The Gmail API v1 client for the connected user's mailbox (users/me) on the SDK's createApi, with
 * Gmail's own words for a failed answer (rate limits Google sends as 403, a missing OAuth scope, the
 * API not enabled in the operator's project) and for the gateway's refusals, which some reads skip
 * instead of failing (SKIPPABLE). The gateway adds the credential: this code never sets it.
 */
import {
  createApi,
  googleErrorInfo,
  googleReasonKind,
  query,
  UpstreamError,
  type ApiFailure,
  type BridgeFailure,
  type PluginContext,
  type QueryParams,
} from 'workbench/plugin-sdk';

const SCOPE = 'https://www.googleapis.com/auth/gmail.modify';

/** Bridge failures of one optional request that leave that one part of the answer out instead of failing the call. */
export const SKIPPABLE: Record<string, string> = {
  GW_ERR_BRIDGE_RESPONSE_TOO_LARGE: "too large to download (over the gateway's response cap)",
  GW_ERR_BRIDGE_TIMEOUT: 'Gmail did not answer in time',
  GW_ERR_BRIDGE_TOO_MANY_REQUESTS: 'over the number of requests one call may make',
};

/** Why a request was skipped, when SKIPPABLE names its error's code; else undefined. */
export function skipReason(err: unknown): string | undefined {
  const code = String((err as { code?: unknown } | null)?.code);
  return Object.hasOwn(SKIPPABLE, code) ? SKIPPABLE[code] : undefined;
}

/** True for the error a 404 answer became (a message deleted meanwhile). */
export const isNotFound = (err: unknown): boolean => err instanceof UpstreamError && err.status === 404;

/** The words for a failed Gmail answer. */
function gmailWords(f: ApiFailure): string {
  const { status, action, detail } = f;
  const info = googleErrorInfo(f.data);
  const { status: gStatus, reasons } = info;
  const kind = googleReasonKind(info);
  const said = detail ? ` Gmail said: ${detail}.` : '';
  if (status === 429 || (status === 403 && (kind === 'rate-limit' || kind === 'daily-limit'))) {
    const wait = f.retryAfterSec !== undefined ? `retry after ${f.retryAfterSec} seconds` : 'wait a minute and retry';
    return `Gmail rate limited the request to ${action} (${status}${reasons.length ? ` ${reasons[0]}` : ''}): ${wait}.`;
  }
  if (status === 401)
    return `Google rejected the access token (401) while trying to ${action}: reconnect google-gmail.${said}`;
  if (status === 403 && (kind === 'scope' || /scope/i.test(detail)))
    return `The Gmail connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-gmail and approve every permission on Google's consent screen.`;
  if (status === 403 && kind === 'disabled')
    return `The Gmail API is not enabled in the Google Cloud project of this Workbench's OAuth client (403): the operator must enable it, then retry.${said}`;
  if (status === 403)
    return `Gmail refused permission to ${action} (403).${said || ' Your account or its Google Workspace domain policy does not allow this.'}`;
  if (status === 404)
    return `Gmail found nothing while trying to ${action} (404): the id is wrong or the message is gone (ids come from gmail_search_emails).${said}`;
  if (status === 400 || status === 409 || status === 412 || status === 422)
    return `Gmail refused to ${action} (${status}${gStatus ? ` ${gStatus}` : ''}): ${detail || 'the request was not valid'}.`;
  if (status >= 500) return `Gmail had a server error (${status}) while trying to ${action}: retry later.${said}`;
  return `Gmail answered HTTP ${status} while trying to ${action}.${said}`;
}

/** The gateway's refusals in Gmail's words, keeping their code (skipReason reads it); others as they are. */
function gmailBridgeError(f: BridgeFailure): Error {
  if (f.code === 'GW_ERR_BRIDGE_TIMEOUT')
    return Object.assign(
      new Error(`Gmail did not answer in time while trying to ${f.action} (${f.code}): retry later.`),
      { code: f.code },
    );
  if (f.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE')
    return Object.assign(
      new Error(`Gmail's answer while trying to ${f.action} is larger than the gateway accepts (${f.code}).`),
      { code: f.code },
    );
  return f.error;
}

const api = createApi({
  base: 'https://gmail.googleapis.com/gmail/v1/users/me',
  provider: 'Gmail',
  // a failed answer's `status` stays readable (isNotFound)
  failure: (f) => new UpstreamError(gmailWords(f), f.status, f.retryAfterSec),
  bridgeFailure: gmailBridgeError,
});

/**
 * One Gmail request (`action` words its errors) whose answer is a JSON object: {} when it is empty,
 * or (lenient) not JSON. An array in `query` repeats its key (metadataHeaders=From&metadataHeaders=To),
 * as Gmail reads it: so the query goes in the path.
 */
export function gmail<T>(
  ctx: PluginContext,
  method: string,
  path: string,
  { action, query: params, body }: { action: string; query?: QueryParams; body?: unknown },
): Promise<T> {
  return api.json<T>(ctx, method, `${path}${query(params, { repeat: true })}`, { action, body, lenient: true });
}
