/**
 * @module plugins/asana/src/api
 * The Asana REST API 1.0 client: writes wrap their fields in `{data: …}` and answers carry theirs
 * in `data`; lists page with an `offset` token (`next_page.offset`) that results hand back as
 * `next`. Asana's error bodies and its wording of failures (a paid plan, the error phrase of a
 * server error) live here, with the workspace a call defaults to.
 */
import {
  createApi,
  type ApiFailure,
  type BridgeFailure,
  type PluginContext,
  type QueryParams,
} from 'workbench/plugin-sdk';

/** Asana's error body: `{errors: [{message, help, phrase}]}`. */
function asanaDetail(data: unknown, text: string): string {
  if (data === undefined) return text.trim().slice(0, 500);
  if (typeof data === 'string') return data.trim().slice(0, 500);
  if (data === null || typeof data !== 'object') return '';
  const d = data as { errors?: unknown; message?: unknown; error?: unknown; error_description?: unknown };
  const msgs = Array.isArray(d.errors)
    ? d.errors
        .map((e: { message?: unknown } | null) => (e && typeof e.message === 'string' ? e.message : ''))
        .filter(Boolean)
    : [];
  if (!msgs.length && typeof d.message === 'string') msgs.push(d.message);
  if (!msgs.length && typeof d.error === 'string') msgs.push(String(d.error_description || d.error));
  return msgs.join('; ').slice(0, 1000);
}

/** Asana's phrase for a server error (what its support looks incidents up by). */
function asanaPhrase(data: unknown): string {
  const errors = (data as { errors?: unknown } | null)?.errors;
  const e: unknown = Array.isArray(errors)
    ? errors.find((x: { phrase?: unknown } | null) => x && typeof x.phrase === 'string')
    : undefined;
  return e ? (e as { phrase: string }).phrase : '';
}

/** Asana's own words; `paid` words a 402 where a plan is needed. 400/409/422 and 429 take the SDK's, which say the same. */
function asanaFailure({ status, data, detail, action, options }: ApiFailure): Error | undefined {
  const said = detail ? ` Asana said: ${detail}.` : '';
  if (status === 401)
    return new Error(`Asana rejected the access token (401) while trying to ${action}: reconnect asana.${said}`);
  if (status === 402) {
    const paid =
      (options['paid'] as string | undefined) ||
      'this needs a paid (premium) Asana plan for the workspace or one of your teams';
    return new Error(`Asana refused to ${action} (402 Payment Required): ${paid}.${said}`);
  }
  if (status === 403 && /scope/i.test(detail))
    return new Error(
      `The Asana connection lacks the OAuth permission needed to ${action} (403): reconnect asana and approve full access.${said}`,
    );
  if (status === 403)
    return new Error(
      `Asana refused permission to ${action} (403): ${detail || 'your Asana user cannot see or change this'}.`,
    );
  if (status === 404)
    return new Error(
      `Asana found nothing while trying to ${action} (404): ${detail || 'the gid does not exist, or you cannot see it'}.`,
    );
  if (status >= 500) {
    const phrase = asanaPhrase(data);
    return new Error(
      `Asana had a server error (${status}) while trying to ${action}: retry later.${phrase ? ` Error phrase: ${phrase}.` : ''}`,
    );
  }
  if (status === 429 || status === 400 || status === 409 || status === 422) return undefined;
  return new Error(`Asana answered HTTP ${status} while trying to ${action}${detail ? `: ${detail}` : ''}.`);
}

/** An answer over the gateway's cap: a single item that large cannot be read here. The timeout takes the SDK's words. */
function asanaBridgeFailure({ code, action }: BridgeFailure): Error | undefined {
  if (code !== 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') return undefined;
  const message = `Asana's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ask for less (a smaller limit, where the tool takes one); a single item this large cannot be read here: open it in Asana.`;
  return Object.assign(new Error(message), { code });
}

const api = createApi({
  base: 'https://app.asana.com/api/1.0',
  provider: 'Asana',
  describe: asanaDetail,
  failure: asanaFailure,
  bridgeFailure: asanaBridgeFailure,
  wrapBody: (data) => ({ data }),
});

/** Asana's answer: the object or list in `data`, and `next_page` on lists. */
export interface Envelope<T> {
  data?: T;
  next_page?: { offset?: unknown } | null;
}

export interface AsanaRequest {
  /** what the call does, in words, for errors */
  action: string;
  query?: QueryParams;
  /** the fields; sent as `{data: body}` */
  body?: unknown;
  /** what a 402 (a paid plan needed) means for this call */
  paid?: string;
}

/** One Asana call; the answer's envelope is returned whole ({} when it is empty or not JSON). */
export function asana<T>(ctx: PluginContext, method: string, path: string, req: AsanaRequest): Promise<Envelope<T>> {
  return api.json<Envelope<T>>(ctx, method, path, { ...req, lenient: true });
}

export const nextOf = (env: Envelope<unknown>): string | null => {
  const offset = env.next_page?.offset;
  return typeof offset === 'string' && offset ? offset : null;
};
export const list = <T>(env: Envelope<T[]>): T[] => (Array.isArray(env.data) ? env.data : []);

/** The workspace a call acts in: the one given, else the user's only workspace. */
export async function workspaceOf(ctx: PluginContext, given?: string): Promise<string> {
  if (given) return given;
  const all = list(
    await asana<Array<{ gid: string; name?: string }>>(ctx, 'GET', '/workspaces', {
      query: { limit: 100, opt_fields: 'name' },
      action: 'list your workspaces',
    }),
  );
  if (all.length === 1) return all[0].gid;
  if (!all.length) throw new Error('This Asana account belongs to no workspace the connection can reach.');
  const names = all
    .slice(0, 10)
    .map((w) => `${w.name} (${w.gid})`)
    .join(', ');
  throw new Error(
    `You belong to several Asana workspaces: ${names}${all.length > 10 ? ', …' : ''}. Pass \`workspace\` with the gid of the one you mean.`,
  );
}
