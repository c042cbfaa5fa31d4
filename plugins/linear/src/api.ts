/**
 * @module plugins/linear/src/api
 * The one GraphQL request (POST https://api.linear.app/graphql, `{query, variables}`) and the one
 * mapping from a Linear answer to an Error an agent can act on. Linear words most failures as
 * `errors[]` with `extensions.type`/`code` in an HTTP 200 (or 400) body, so a 2xx answer is read
 * for errors as well as a failed one; the gateway's own refusals say what to do by kind of request.
 */
import { createApi, type HttpHeaders, type PluginContext } from 'workbench/plugin-sdk';

/** Per request: `write` (a timeout may still have made the change) and what to do about an answer over the size cap. */
export interface GqlOptions {
  write?: boolean;
  tooLarge?: string;
}

/** `extensions.type` / `extensions.code` in one spelling: lower case, `_` as a space. */
const norm = (v: unknown): string => (typeof v === 'string' ? v.toLowerCase().replace(/_/g, ' ').trim() : '');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Linear's GraphQL errors: the friendliest message of each, and the first error's type and code. */
function linearErrors(data: unknown) {
  const list = isObject(data) && Array.isArray(data['errors']) ? (data['errors'] as unknown[]) : [];
  const messages: string[] = [];
  const raw: string[] = [];
  let kind = '';
  let code = '';
  for (const e of list) {
    if (!isObject(e)) continue;
    const ext = isObject(e['extensions']) ? e['extensions'] : {};
    const message = typeof e['message'] === 'string' ? e['message'] : '';
    const msg = typeof ext['userPresentableMessage'] === 'string' ? ext['userPresentableMessage'] : message;
    if (msg) messages.push(msg.slice(0, 500));
    if (typeof e['message'] === 'string') raw.push(message.slice(0, 200));
    if (!kind && !code) {
      kind = norm(ext['type']);
      code = norm(ext['code']);
    }
  }
  return {
    kind: kind || code,
    kinds: new Set([kind, code].filter(Boolean)),
    detail: messages.join('; ').slice(0, 1000),
    raw: raw.join(' '),
  };
}

function linearError(action: string, status: number, headers: HttpHeaders, data: unknown): Error {
  const { kind, kinds, detail: gqlDetail, raw } = linearErrors(data);
  const is = (...names: string[]) => names.some((n) => kinds.has(n));
  const detail = (gqlDetail || (typeof data === 'string' ? data.trim().slice(0, 300) : '')).replace(/[.\s]+$/, '');
  const said = detail ? ` Linear said: ${detail}.` : '';
  const text = `${kind} ${detail} ${raw}`.toLowerCase();
  if (status === 429 || is('ratelimited', 'rate limited')) {
    // Linear's Retry-After is quoted as sent; X-RateLimit-Requests-Reset is a time in milliseconds.
    const after = headers.get('retry-after');
    const reset = Number(headers.get('x-ratelimit-requests-reset'));
    const wait = after
      ? `retry after ${after} seconds`
      : Number.isFinite(reset) && reset > 0
        ? `retry after ${new Date(reset).toISOString()}`
        : 'wait a minute and retry';
    return new Error(`Linear rate limited the request to ${action}: ${wait}.${said}`);
  }
  if (status === 401 || is('authentication error', 'unauthenticated')) {
    return new Error(`Linear rejected the access token while trying to ${action}: reconnect linear.${said}`);
  }
  if (status === 403 || is('forbidden')) {
    if (/scope|write access|permission to write/.test(text)) {
      return new Error(
        `The Linear connection lacks the OAuth scope needed to ${action}: reconnect linear and approve read and write access.${said}`,
      );
    }
    return new Error(
      `Linear refused permission to ${action}: ${detail || 'your Linear user cannot see or change this'}.`,
    );
  }
  if (status === 404 || /entity not found|not found/.test(text)) {
    return new Error(
      `Linear found nothing while trying to ${action}: ${detail || 'the id or identifier does not exist, or you cannot see it'}.`,
    );
  }
  if (is('feature not accessible', 'usage limit exceeded')) {
    return new Error(`Linear refused to ${action} (${kind}): ${detail || 'your workspace plan does not allow it'}.`);
  }
  if (status >= 500 || is('internal error', 'internal server error', 'lock timeout')) {
    return new Error(`Linear had a server error (${status}) while trying to ${action}: retry later.${said}`);
  }
  if (status >= 400 || is('invalid input', 'user error', 'graphql error', 'bad user input')) {
    return new Error(`Linear refused to ${action}: ${detail || `HTTP ${status}`}.`);
  }
  return new Error(`Linear could not ${action}: ${detail || 'the answer had no data'}.`);
}

/** What to do about an answer over the gateway's size cap, by kind of request (or `tooLarge`). */
function tooLargeHint(opts: GqlOptions): string {
  if (opts.tooLarge) return opts.tooLarge;
  if (opts.write)
    return 'the change was probably made: check (linear_get_issue, linear_list_comments) before trying again';
  return 'this answer cannot be made smaller: try again later, or reach it in Linear itself';
}

const linear = createApi({
  base: 'https://api.linear.app',
  provider: 'Linear',
  // a failed answer: its body as JSON, or as text when it is not JSON
  failure: (f) => linearError(f.action, f.status, f.headers, f.data !== undefined ? f.data : f.text || undefined),
  bridgeFailure: ({ code, error, action, options }) => {
    const opts = options as GqlOptions;
    let message: string;
    if (code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
      message = `Linear's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ${tooLargeHint(opts)}.`;
    } else if (code === 'GW_ERR_BRIDGE_TIMEOUT') {
      const tail = opts.write ? ' It may still have been done: check before trying again.' : ' Try again in a moment.';
      message = `Linear did not answer in time (GW_ERR_BRIDGE_TIMEOUT) while trying to ${action}.${tail}`;
    } else {
      return error;
    }
    return Object.assign(new Error(message), { code });
  },
});

/** One GraphQL request; resolves to `data`, or throws the mapped error (HTTP or `errors[]`). */
export async function gql<T>(
  ctx: PluginContext,
  action: string,
  query: string,
  variables: Record<string, unknown>,
  opts: GqlOptions = {},
): Promise<T> {
  const { status, headers, data } = await linear.request(ctx, 'POST', '/graphql', {
    action,
    body: { query, variables },
    lenient: true,
    ...opts,
  });
  if (!isObject(data)) throw linearError(action, status, headers, data);
  if (Array.isArray(data['errors']) && data['errors'].length) throw linearError(action, status, headers, data);
  if (!isObject(data['data'])) throw linearError(action, status, headers, undefined);
  return data['data'] as T;
}

/** The error code the gateway gave a refused request (GW_ERR_BRIDGE_…), if any. */
export const codeOf = (err: unknown): unknown => (isObject(err) ? err['code'] : undefined);

/** A Linear connection as far as the tools read it. */
export interface Connection {
  nodes?: unknown;
  pageInfo?: { hasNextPage?: boolean; endCursor?: unknown } | null;
}

export const PAGE = 'pageInfo { hasNextPage endCursor }';
export const LIMIT_HINT: GqlOptions = { tooLarge: 'ask for fewer with a smaller limit and page with cursor' };

/** A connection's nodes: objects only, at most `max` (what was asked for) whatever the answer holds. */
export function nodes<T>(conn: Connection | null | undefined, max = 100): T[] {
  const list = conn && typeof conn === 'object' && Array.isArray(conn.nodes) ? (conn.nodes as unknown[]) : [];
  return list.filter((n) => isObject(n) && !Array.isArray(n)).slice(0, max) as T[];
}

/** The cursor of the next page, or null on the last one. */
export const nextOf = (conn: Connection | null | undefined): string | null =>
  conn && conn.pageInfo && conn.pageInfo.hasNextPage && typeof conn.pageInfo.endCursor === 'string'
    ? conn.pageInfo.endCursor
    : null;
