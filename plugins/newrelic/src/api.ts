/**
 * @module plugins/newrelic/src/api
 * The one NerdGraph request (GraphQL, POST {query, variables}) in the connection's region, and the
 * one mapping from a NerdGraph answer to an Error an agent can act on: NerdGraph words failures as
 * an HTTP status or as `errors[]` in an HTTP-200 body, so a 2xx answer is read for errors too.
 * Also the account a tool acts on, and the quoting of entity-search literals.
 */
import { createApi, type PluginContext } from 'workbench/plugin-sdk';

const ENDPOINTS: Record<string, string> = {
  us: 'https://api.newrelic.com/graphql',
  eu: 'https://api.eu.newrelic.com/graphql',
};

export const HOUR_MS = 3600 * 1000;

/** Fields NerdGraph may leave out or answer with null. */
export type Fields<K extends string, V = string> = { [P in K]?: V | null };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function graphqlMessages(data: unknown): string[] {
  if (!isObject(data) || !Array.isArray(data['errors'])) return [];
  return (data['errors'] as unknown[]).map((e) => {
    const msg = isObject(e) && typeof e['message'] === 'string' ? e['message'] : 'unknown error';
    const ext = isObject(e) && isObject(e['extensions']) ? e['extensions'] : {};
    return `${msg}${ext['errorClass'] ? ` [${String(ext['errorClass'])}]` : ''}`;
  });
}

function nrError(action: string, status: number, retryAfter: string | null, data: unknown): Error {
  const messages = graphqlMessages(data);
  const detail = messages.length ? messages.join('; ') : typeof data === 'string' ? data.trim().slice(0, 300) : '';
  const said = detail ? ` New Relic said: ${detail}` : '';
  const text = detail.toLowerCase();
  if (status === 429 || /too[_ ]many[_ ]requests|rate limit/.test(text)) {
    const wait = retryAfter ? `retry after ${retryAfter} seconds` : 'wait a minute and retry';
    return new Error(`New Relic rate limited the request to ${action}: ${wait}.${said}`);
  }
  if (status === 401) {
    return new Error(
      `New Relic rejected the API key (401) while trying to ${action}: the connection needs a valid User API key (NRAK-…) for its region; reconnect newrelic.${said}`,
    );
  }
  if (status === 403 || /forbidden|access denied|not authorized|unauthorized/.test(text)) {
    return new Error(
      `New Relic refused permission to ${action}: the key's user lacks access to this account or capability (check the account id and the user's roles).${said}`,
    );
  }
  if (status === 404) return new Error(`New Relic found nothing while trying to ${action} (404).${said}`);
  if (status >= 500)
    return new Error(`New Relic had a server error (${status}) while trying to ${action}: retry later.${said}`);
  if (status >= 400) return new Error(`New Relic refused to ${action} (HTTP ${status}).${said}`);
  if (/timeout/.test(text))
    return new Error(
      `New Relic timed out while trying to ${action}: narrow the time window, or raise timeoutSeconds where a tool takes it (at most 12).${said}`,
    );
  return new Error(`New Relic could not ${action}: ${detail || 'the answer had no data'}.`);
}

/** The connection's region's endpoint. */
function endpoint(ctx: PluginContext): string {
  const region = String(ctx.config['region'] || 'us').toLowerCase();
  const url = Object.hasOwn(ENDPOINTS, region) ? ENDPOINTS[region] : undefined;
  if (!url)
    throw new Error(`The newrelic connection has an unknown region "${region}": reconnect and choose us or eu.`);
  return url;
}

const api = createApi({
  // every request names its region's endpoint in full
  base: ENDPOINTS['us'],
  provider: 'New Relic',
  // a failed answer: its body as JSON, or as text when it is not JSON
  failure: (f) => nrError(f.action, f.status, f.retryAfter, f.data !== undefined ? f.data : f.text || undefined),
  // An answer later than the gateway waits for one request (policy http.requestTimeoutMs, 15 s by
  // default) says what to do (`slowHint`); other refusals pass as they are.
  bridgeFailure: ({ code, error, action, options }) => {
    if (code !== 'GW_ERR_BRIDGE_TIMEOUT') return error;
    const hint = typeof options['slowHint'] === 'string' ? options['slowHint'] : 'ask for less, or retry later';
    return new Error(
      `New Relic took longer than the gateway allows for one request while trying to ${action} (GW_ERR_BRIDGE_TIMEOUT): ${hint}.`,
    );
  },
});

/** One NerdGraph request; resolves to `data`, or throws the mapped error (HTTP or `errors[]`). */
export async function nerdgraph<T>(
  ctx: PluginContext,
  action: string,
  query: string,
  variables: Record<string, unknown>,
  slowHint?: string,
): Promise<T> {
  const { status, headers, data } = await api.request(ctx, 'POST', endpoint(ctx), {
    action,
    body: { query, variables },
    lenient: true,
    slowHint,
  });
  if (!isObject(data)) throw nrError(action, status, null, data);
  if (Array.isArray(data['errors']) && data['errors'].length)
    throw nrError(action, status, headers.get('retry-after'), data);
  if (!data['data']) throw nrError(action, status, null, undefined);
  return data['data'] as T;
}

/** The account to act on: the argument, else the connection's default, else a clear error. */
export function accountOf(ctx: PluginContext, args: { accountId?: number | undefined }): number {
  if (args.accountId !== undefined) return args.accountId;
  const fallback = ctx.config['accountId'];
  const n = Number(fallback);
  if (fallback !== undefined && fallback !== null && fallback !== '' && Number.isInteger(n) && n > 0) return n;
  throw new Error(
    'No New Relic account id: pass accountId, or set a default account ID on the newrelic connection (newrelic_list_accounts lists the accounts this key can reach).',
  );
}

/**
 * An account-scoped query (`actor.account(id: $accountId)`): what `pick` reads of the account, or
 * the error naming an account this key cannot reach when there is none.
 */
export async function inAccount<A, T>(
  ctx: PluginContext,
  accountId: number,
  action: string,
  query: string,
  variables: Record<string, unknown>,
  pick: (account: A) => T | null | undefined,
  slowHint?: string,
): Promise<T> {
  const data = await nerdgraph<{ actor?: { account?: A | null } | null }>(
    ctx,
    action,
    query,
    { accountId, ...variables },
    slowHint,
  );
  const found = data.actor?.account ? pick(data.actor.account) : undefined;
  if (!found)
    throw new Error(
      `New Relic account ${accountId} is not reachable with this API key: check the id with newrelic_list_accounts.`,
    );
  return found;
}

/** A quoted literal for entity-search query strings (the one place values become query text). */
export const literal = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Epoch milliseconds as an ISO time; anything else as it is (null when missing). */
export const iso = (ms: unknown): unknown =>
  typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : (ms ?? null);
