/**
 * @module plugins/notion/src/api
 * The one Notion request (https://api.notion.com/v1 with the `Notion-Version` header) and the one
 * mapping from a failed answer, or a request the gateway refused, to an Error an agent can act
 * on. A failed answer's Error keeps its HTTP `status` (a 404 on /pages may be a block id).
 */
import { createApi, type PluginContext, type QueryParams } from 'workbench/plugin-sdk';

const NOTION_VERSION = '2022-06-28';

/** Notion's error body: `{object: "error", status, code, message}`. */
function notionDetail(data: unknown): string {
  if (data == null) return '';
  if (typeof data === 'string') return data.trim().slice(0, 500);
  const message = (data as { message?: unknown }).message;
  return typeof message === 'string' ? message.slice(0, 1000) : '';
}

function notionError(action: string, status: number, retryAfter: string | null, data: unknown): Error {
  const detail = notionDetail(data).replace(/[.\s]+$/, '');
  const code =
    data && typeof data === 'object' && typeof (data as { code?: unknown }).code === 'string'
      ? (data as { code: string }).code
      : '';
  const said = detail ? ` Notion said: ${detail}.` : '';
  if (status === 429) {
    const wait = retryAfter ? `retry after ${retryAfter} seconds` : 'wait a minute and retry';
    return new Error(`Notion rate limited the request to ${action} (429): ${wait}.`);
  }
  if (status === 401)
    return new Error(`Notion rejected the access token (401) while trying to ${action}: reconnect notion.${said}`);
  if (status === 403) {
    return new Error(
      `Notion refused to ${action} (403${code ? ` ${code}` : ''}): the integration lacks the capability this needs (read content, update content, insert content, read or insert comments: set in the integration's settings, then reconnect notion) or the user cannot do this.${said}`,
    );
  }
  if (status === 404) {
    return new Error(
      `Notion found nothing while trying to ${action} (404): it does not exist, or it is not shared with the integration (in Notion, open the page's ••• menu → Connections and add it, or reconnect notion and pick the page).${said}`,
    );
  }
  if (status === 409)
    return new Error(
      `Notion could not ${action} because of a conflicting change (409): read it again and retry.${said}`,
    );
  if (status === 400 || status === 422)
    return new Error(
      `Notion refused to ${action} (${status}${code ? ` ${code}` : ''}): ${detail || 'the request was not valid'}.`,
    );
  if (status >= 500)
    return new Error(`Notion had a server error (${status}) while trying to ${action}: retry later.${said}`);
  return new Error(`Notion answered HTTP ${status} while trying to ${action}${detail ? `: ${detail}` : ''}.`);
}

/** The gateway's refusals in words; a timed-out write may still have been done. */
function bridgeMessage(code: string, method: string, action: string): string | undefined {
  if (code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE')
    return `Notion's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ask for less (a smaller limit).`;
  if (code === 'GW_ERR_BRIDGE_TIMEOUT') {
    const write =
      method !== 'GET' && !/^(search|query|read|list)/.test(action)
        ? ' It may still have been done: check before trying again.'
        : ' Try again in a moment.';
    return `Notion did not answer in time (GW_ERR_BRIDGE_TIMEOUT) while trying to ${action}.${write}`;
  }
  if (code === 'GW_ERR_BRIDGE_TOO_MANY_REQUESTS')
    return `Too many requests in one call while trying to ${action} (GW_ERR_BRIDGE_TOO_MANY_REQUESTS): do it in smaller parts.`;
  return undefined;
}

const api = createApi({
  base: 'https://api.notion.com/v1',
  provider: 'Notion',
  headers: { 'notion-version': NOTION_VERSION },
  // a failed answer: its body as JSON, or as text when it is not JSON
  failure: (f) =>
    Object.assign(notionError(f.action, f.status, f.retryAfter, f.data !== undefined ? f.data : f.text || undefined), {
      status: f.status,
    }),
  bridgeFailure: ({ code, error, method, action }) => {
    const message = bridgeMessage(code, method, action);
    return message === undefined ? error : Object.assign(new Error(message), { code });
  },
});

/** One request; resolves to the JSON object answered ({} for anything else), or throws the mapped error. */
export function notion<T extends object = Json>(
  ctx: PluginContext,
  method: string,
  path: string,
  options: { action: string; query?: QueryParams; body?: unknown },
): Promise<T> {
  return api.json<T>(ctx, method, path, { ...options, lenient: true });
}

/** A JSON object from Notion, read field by field (every shaper checks what it reads). */
export type Json = Record<string, unknown>;

/** A Notion list: `results`, with `next_cursor` while `has_more`. */
export interface List {
  results?: unknown;
  has_more?: unknown;
  next_cursor?: unknown;
}
export const nextOf = (list: List): string | null =>
  list.has_more && typeof list.next_cursor === 'string' && list.next_cursor ? list.next_cursor : null;
export const results = (list: List): Json[] => (Array.isArray(list.results) ? (list.results as Json[]) : []);

/** The HTTP status of a failed answer's Error, if it is one. */
export const statusOf = (err: unknown): unknown =>
  err && typeof err === 'object' ? (err as { status?: unknown }).status : undefined;
