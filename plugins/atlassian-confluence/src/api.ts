/**
 * @module plugins/atlassian-confluence/src/api
 * Calling Confluence Cloud through api.atlassian.com, and the one place where a Confluence answer
 * becomes a message an agent can act on. Each call first resolves the site's cloud id from the
 * token's accessible resources, then calls /ex/confluence/{cloudId}/wiki/api/v2/… (REST v2), or
 * …/wiki/rest/api/… (v1) for the two things v2 lacks: CQL search and adding labels.
 */
import {
  atlassianSite,
  createApi,
  segment,
  type ApiFailure,
  type AtlassianSite,
  type BridgeFailure,
  type PluginContext,
  type QueryParams,
} from 'workbench/plugin-sdk';

/** The scope each kind of call needs, as the errors name it. */
export const SCOPES = {
  space: 'read:space:confluence',
  readPage: 'read:page:confluence',
  writePage: 'write:page:confluence',
  deletePage: 'delete:page:confluence',
  readComment: 'read:comment:confluence',
  writeComment: 'write:comment:confluence',
  attachment: 'read:attachment:confluence',
  search: 'search:confluence (or read:content-details:confluence)',
  label: 'write:label:confluence and read:label:confluence',
};

type Texts = { title?: unknown; detail?: unknown; message?: unknown } | null;

/** Confluence's error bodies: v2 `{errors: [{title, detail}]}`, v1 `{message, data: {errors}}`, the gateway's `{message}`. */
function errorDetail(data: unknown): string {
  if (data == null) return '';
  if (typeof data === 'string') return /^\s*</.test(data) ? '' : data.trim().slice(0, 500);
  const d = data as { errors?: unknown; data?: { errors?: unknown }; message?: unknown; error?: unknown };
  const parts: string[] = [];
  for (const e of Array.isArray(d.errors) ? (d.errors as Texts[]) : []) {
    if (!e || typeof e !== 'object') continue;
    const text = [e.title, e.detail].filter((x) => typeof x === 'string' && x).join(': ');
    if (text) parts.push(text);
  }
  for (const e of Array.isArray(d.data?.errors) ? (d.data.errors as Texts[]) : []) {
    const m = e?.message as string | { translation?: unknown; key?: unknown } | undefined;
    const text = typeof m === 'string' ? m : m && (m.translation || m.key);
    if (typeof text === 'string' && text) parts.push(text);
  }
  if (!parts.length && typeof d.message === 'string' && d.message) parts.push(d.message);
  if (!parts.length && typeof d.error === 'string') parts.push(d.error);
  return parts.join('; ').slice(0, 1000);
}

function confluenceError(f: ApiFailure): Error | undefined {
  const { action, status, detail } = f;
  // 429 (with its Retry-After), 400 and 422 as the SDK words them
  if (status === 429 || status === 400 || status === 422) return undefined;
  const scope = String(f.options['scope']);
  const said = detail ? ` Confluence said: ${detail}` : '';
  if ((status === 401 || status === 403) && /scope/i.test(detail)) {
    return new Error(
      `The Confluence connection lacks the OAuth scope needed to ${action} (${status}; needs ${scope}): reconnect atlassian-confluence and approve that scope.`,
    );
  }
  if (status === 401)
    return new Error(
      `Confluence rejected the access token (401) while trying to ${action}: reconnect atlassian-confluence.${said}`,
    );
  if (status === 403) {
    const why = detail || 'your Confluence user lacks the space or page permission for this';
    return new Error(
      `Confluence refused permission to ${action} (403): ${why}. This needs the ${scope} scope and the matching space permission.`,
    );
  }
  if (status === 404)
    return new Error(
      `Confluence found nothing while trying to ${action} (404): ${detail || 'it does not exist, or you cannot see it'}.`,
    );
  if (status === 409)
    return new Error(
      `Confluence reported a conflict while trying to ${action} (409): ${detail || 'the content changed meanwhile'}. Read it again and retry.`,
    );
  if (status === 413)
    return new Error(`Confluence refused to ${action} (413): ${detail || 'the request was not valid'}.`);
  if (status >= 500)
    return new Error(`Confluence had a server error (${status}) while trying to ${action}: retry later.${said}`);
  return new Error(`Confluence answered HTTP ${status} while trying to ${action}${detail ? `: ${detail}` : ''}.`);
}

/** An answer over the gateway's cap: `tooLarge` says what to do where asking for less cannot help. */
function bridgeFailure(f: BridgeFailure): Error | undefined {
  if (f.code !== 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') return undefined;
  const instead = typeof f.options['tooLarge'] === 'string' ? f.options['tooLarge'] : 'ask for less (a smaller limit)';
  const err = new Error(
    `Confluence's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${f.action}: ${instead}.`,
  );
  return Object.assign(err, { code: f.code });
}

const api = createApi({
  base: 'https://api.atlassian.com',
  provider: 'Confluence',
  integration: 'atlassian-confluence',
  // a body that is not JSON is read as its text (an HTML error page says nothing)
  describe: (data, text) => errorDetail(data ?? text),
  failure: confluenceError,
  bridgeFailure,
});

/** The Confluence site a call acts on (`wiki`: the wiki's base URL, for links). */
export type Site = AtlassianSite & { wiki: string };

/** The Confluence site this call acts on: `ctx.config.site` (URL, host, name or cloud id), else the first. */
export async function resolveSite(ctx: PluginContext): Promise<Site> {
  const data = await api.json<unknown>(ctx, 'GET', '/oauth/token/accessible-resources', {
    action: 'list the Confluence sites this connection can reach',
    scope: SCOPES.readPage,
  });
  const site = atlassianSite(data, {
    product: 'confluence',
    wanted: ctx.config['site'],
    none: 'This Atlassian connection can reach no Confluence site: reconnect atlassian-confluence and choose a Confluence site on the consent screen.',
    unmatched: (wanted, reachable) =>
      `No Confluence site matching "${wanted}" is reachable with this connection; reachable: ${reachable}.`,
  });
  return { ...site, wiki: `${site.url}/wiki` };
}

/**
 * A call's options: `scope` is the OAuth scope it needs and `tooLarge` what to do instead when the
 * answer is over the gateway's cap (both for the errors). A type, not an interface: the SDK's request
 * options take such extra keys as hints.
 */
export type WikiOptions = { action: string; scope: string; query?: QueryParams; body?: unknown; tooLarge?: string };

/** One Confluence REST call on the resolved site; `path` starts with /api/v2/ or /rest/api/. */
export function wiki<T = Record<string, unknown>>(
  ctx: PluginContext,
  site: Site,
  method: string,
  path: string,
  options: WikiOptions,
): Promise<T> {
  return api.json<T>(ctx, method, `/ex/confluence/${segment(site.id, 'cloud id')}/wiki${path}`, options);
}

/** A list answer: its results and where the next page starts. */
export type Listing<T> = { results?: T[]; totalSize?: number; _links?: { next?: string } };

export const results = <T>(data: Listing<T>): T[] => (Array.isArray(data.results) ? data.results : []);

/**
 * The opaque cursor of a `_links.next` URL (v2 and v1 search both carry it as `cursor=`). Decoded
 * with decodeURIComponent, not queryOf(): a "+" in it stays a "+".
 */
export function nextCursor(data: Listing<unknown>): string | null {
  const next = typeof data._links?.next === 'string' ? data._links.next : '';
  const m = /[?&]cursor=([^&#]*)/.exec(next);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}
