/**
 * @module plugins/atlassian-bitbucket/src/api
 * The Bitbucket REST API 2.0 client: Bitbucket's error body and its wording of failures (the OAuth
 * scope a call lacks, a per-status hint such as what blocks a merge, its own 555 timeout), the
 * repository and pull-request paths, the opaque paging cursor and BBQL quoting.
 */
import {
  createApi,
  enc,
  fromBase64,
  query,
  segment,
  segments,
  toBase64Url,
  utf8,
  type ApiAnswer,
  type ApiFailure,
  type BridgeFailure,
  type Expect,
  type PluginContext,
  type QueryParams,
} from 'workbench/plugin-sdk';

export const WEB = 'https://bitbucket.org';

/** Bitbucket's error body: {"type":"error","error":{"message","detail","fields"}}; detail may be a string or an object. */
function parseError(text: string): { message: string; required: string[]; granted: string[] } {
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  const found = data && typeof data === 'object' ? (data as { error?: unknown }).error : undefined;
  const err = (found && typeof found === 'object' ? found : {}) as {
    message?: unknown;
    detail?: unknown;
    fields?: unknown;
  };
  const parts: string[] = [];
  if (typeof err.message === 'string' && err.message.trim()) parts.push(err.message.trim());
  if (typeof err.detail === 'string' && err.detail.trim() && err.detail.trim() !== parts[0])
    parts.push(err.detail.trim());
  if (err.fields && typeof err.fields === 'object') {
    for (const [field, msgs] of Object.entries(err.fields))
      parts.push(`${field}: ${Array.isArray(msgs) ? msgs.join(' ') : String(msgs)}`);
  }
  let message = parts.join(' — ').replace(/[.\s]+$/, '');
  if (!message && text && data === null)
    message = text
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 300);
  const detail = (err.detail && typeof err.detail === 'object' ? err.detail : {}) as {
    required?: unknown;
    granted?: unknown;
  };
  const strings = (x: unknown): string[] => (Array.isArray(x) ? x.map(String) : []);
  return { message: message.slice(0, 600), required: strings(detail.required), granted: strings(detail.granted) };
}

/** Bitbucket's own words; `scope` is the OAuth scope the call needs, `hints` a per-status sentence. 429 takes the SDK's. */
function bitbucketFailure({ status, text, action, options }: ApiFailure): Error | undefined {
  const { message, required, granted } = parseError(text);
  const said = message ? ` Bitbucket said: ${message}.` : '';
  const hint = (options['hints'] as Hints | undefined)?.[status];
  const then = hint ? ` ${hint}` : '';
  if (status === 401)
    return new Error(
      `Bitbucket rejected the access token (401) while trying to ${action}: reconnect atlassian-bitbucket.${said}`,
    );
  if (status === 403 && (required.length || /scope/i.test(message))) {
    const need = required.length ? required.join(', ') : String(options['scope']);
    const have = granted.length ? ` (the token has: ${granted.join(', ')})` : '';
    return new Error(
      `The Bitbucket connection lacks the OAuth scope needed to ${action} (403; needs ${need})${have}: the operator must grant that permission on the Bitbucket OAuth consumer, then reconnect atlassian-bitbucket.`,
    );
  }
  if (status === 403)
    return new Error(
      `Bitbucket refused permission to ${action} (403): ${message || 'your Bitbucket user lacks the repository or workspace permission for this'}.${then}`,
    );
  if (status === 404) {
    return new Error(
      `Bitbucket found nothing while trying to ${action} (404): it does not exist, or your account cannot see it. Check the workspace, repository, id, branch or path.${said}`,
    );
  }
  if (status === 555)
    return new Error(
      `Bitbucket timed out (555) while trying to ${action}.${hint ? then : ' Retry in a moment.'}${said}`,
    );
  if (status === 400 || status === 409 || status === 422)
    return new Error(`Bitbucket refused to ${action} (${status}): ${message || 'the request was not valid'}.${then}`);
  if (status >= 500)
    return new Error(`Bitbucket had a server error (${status}) while trying to ${action}: retry later.${said}`);
  if (status === 429) return undefined;
  return new Error(`Bitbucket answered HTTP ${status} while trying to ${action}.${said}`);
}

/** An answer over the gateway's cap: `tooLarge` says what to do where asking for less cannot help. The timeout takes the SDK's words. */
function bitbucketBridgeFailure({ code, action, options }: BridgeFailure): Error | undefined {
  if (code !== 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') return undefined;
  const instead =
    (options['tooLarge'] as string | undefined) || 'ask for less (a smaller pagelen, or narrower filters)';
  return Object.assign(
    new Error(
      `Bitbucket's answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${action}: ${instead}.`,
    ),
    { code },
  );
}

const api = createApi({
  base: 'https://api.bitbucket.org/2.0',
  provider: 'Bitbucket',
  failure: bitbucketFailure,
  bridgeFailure: bitbucketBridgeFailure,
});

/** A sentence added to the error of a given status (what blocks a merge, …). */
export type Hints = Partial<Record<number, string>>;

export interface BitbucketRequest {
  /** what the call does, in words, for errors */
  action: string;
  /** the OAuth scope the call needs, named when it is missing */
  scope: string;
  body?: unknown;
  accept?: string;
  expect?: Expect;
  hints?: Hints;
  /** what to do instead when the answer is over the gateway's cap */
  tooLarge?: string;
}

/** One request; `path` may end with a query string (from `pageQuery`). */
export function call<T>(
  ctx: PluginContext,
  method: string,
  path: string,
  req: BitbucketRequest,
): Promise<ApiAnswer<T>> {
  return api.request<T>(ctx, method, path, { ...req });
}

/** One request whose JSON answer (undefined when empty) is all the caller needs. */
export async function bb<T>(
  ctx: PluginContext,
  method: string,
  path: string,
  req: BitbucketRequest,
): Promise<T | undefined> {
  return (await api.request<T | undefined>(ctx, method, path, { ...req })).data;
}

/** The arguments naming a repository, and a pull request in it. */
export interface RepoArgs {
  workspace: string;
  repo_slug: string;
}
export const repoPath = (a: RepoArgs): string =>
  `/repositories/${segment(a.workspace, 'workspace')}/${segment(a.repo_slug, 'repo_slug')}`;
export const prPath = (a: RepoArgs & { pull_request_id: number }): string =>
  `${repoPath(a)}/pullrequests/${segment(a.pull_request_id, 'pull_request_id')}`;
export const webRepo = (a: RepoArgs): string => `${WEB}/${enc(a.workspace)}/${enc(a.repo_slug)}`;

/** A file path: each segment encoded, "/" kept between them; '' for the root. */
export function filePath(value: string): string {
  const s = value.replace(/^\/+|\/+$/g, '');
  return s === '' ? '' : segments(s, 'path');
}

// ---------------------------------------------------------------- paging ----

/**
 * A query string in one canonical form, or null: its `key=value` pairs split on "&", each key and
 * value percent-decoded and encoded again (a "+", a space in a query, is kept between the parts).
 * Bitbucket's `next` links leave some characters raw (`path=src/`); the canonical form has only
 * letters, digits, "-", "_", ".", "%XX", "=", "&" and "+", so it cannot carry a "#", a space or
 * a new path. cursorOf makes cursors of this form and queryOfCursor takes no other.
 */
function canonicalQuery(q: string): string | null {
  const strict = (x: string) => enc(x).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const part = (s: string) =>
    s
      .split('+')
      .map((x) => strict(decodeURIComponent(x)))
      .join('+');
  try {
    const pairs = q
      .split('&')
      .filter((p) => p !== '')
      .map((p) => {
        const eq = p.indexOf('=');
        return eq < 0 ? part(p) : `${part(p.slice(0, eq))}=${part(p.slice(eq + 1))}`;
      });
    return pairs.length ? pairs.join('&') : null;
  } catch {
    return null; // a malformed %-escape
  }
}

/** A Bitbucket page object. */
export interface Page<T> {
  values?: T[];
  next?: unknown;
  size?: number;
  page?: number;
  pagelen?: number;
}

export const values = <T>(page: Page<T> | null | undefined): T[] =>
  page && Array.isArray(page.values) ? page.values : [];
export const cursorOfQuery = (q: string): string => toBase64Url(utf8(q));

/**
 * The opaque cursor for a page object's `next` URL: its query string, in canonical form, in
 * base64url. Only a `next` on https://api.bitbucket.org/2.0 is taken; the next call rebuilds the
 * path from its arguments, so a cursor can change the query of the same endpoint and nothing else.
 */
export function cursorOf(page: Page<unknown> | null | undefined): string | null {
  const next = page && typeof page.next === 'string' ? page.next : '';
  const m = /^https:\/\/api\.bitbucket\.org\/2\.0\/[^?#\s]*\?([^#\s]+)$/.exec(next);
  const q = m ? canonicalQuery(m[1]) : null;
  return q ? cursorOfQuery(q) : null;
}

/** Query string carried by a cursor (a canonical one, as cursorOf makes), or an error that says what to pass instead. */
export function queryOfCursor(cursor: string): string {
  const bad = () =>
    new Error(
      `cursor "${cursor.slice(0, 40)}" is not a \`next\` value of an earlier result: pass \`next\` exactly as it was returned, or omit cursor for the first page.`,
    );
  let q: string;
  try {
    q = new TextDecoder('utf-8', { fatal: true }).decode(fromBase64(cursor));
  } catch {
    throw bad();
  }
  if (canonicalQuery(q) !== q) throw bad();
  return `?${q}`;
}

/** First page: the query from `params` (an array repeats its key: state=OPEN&state=MERGED); later pages: the cursor's. */
export const pageQuery = (a: { cursor?: string | undefined }, params: QueryParams): string =>
  a.cursor ? queryOfCursor(a.cursor) : query(params, { repeat: true });

// ---------------------------------------------------------------- BBQL ----

/** A BBQL string literal: double quotes, with backslash and double quote escaped. */
export const bbqlString = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Joins BBQL conditions with AND; a raw query from the agent is parenthesised. */
export function bbql(conditions: Array<string | false | undefined>, raw: string | undefined): string | undefined {
  const all = conditions.filter((c): c is string => !!c);
  if (raw && raw.trim()) all.push(all.length ? `(${raw.trim()})` : raw.trim());
  return all.length ? all.join(' AND ') : undefined;
}
