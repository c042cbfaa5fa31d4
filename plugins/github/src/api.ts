/**
 * @module plugins/github/src/api
 * The GitHub REST client (version 2022-11-28) on the SDK's createApi, with GitHub's own words for
 * every failed answer (missing OAuth scope, SAML SSO, rate limits, 404 that may mean "no access",
 * validation details), and GitHub's paging: `next` is a page number or the cursor parameters of
 * the rel="next" link, and `page` takes either back. The gateway adds the credential: this code
 * never sets Authorization.
 */
import {
  createApi,
  enc,
  linkNext,
  queryOf,
  segment,
  type ApiFailure,
  type HttpHeaders,
  type PluginContext,
  type QueryParams,
} from 'workbench/plugin-sdk';

/** A scope is also satisfied by the broader scopes listed here (GitHub's scope hierarchy). */
const BROADER_SCOPES: Record<string, string[]> = {
  public_repo: ['repo'],
  'repo:status': ['repo'],
  repo_deployment: ['repo'],
  'repo:invite': ['repo'],
  security_events: ['repo'],
  notifications: ['repo'],
  'read:org': ['write:org'],
  'write:org': ['admin:org'],
  'read:user': ['user'],
  'user:email': ['user'],
  'user:follow': ['user'],
  'read:discussion': ['write:discussion'],
  'read:packages': ['write:packages'],
};

function scopeGranted(granted: string[], scope: string): boolean {
  if (granted.includes(scope)) return true;
  return (BROADER_SCOPES[scope] ?? []).some((broader) => scopeGranted(granted, broader));
}

function scopeList(value: string | null): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Seconds to wait when the answer is a rate-limit refusal (429, or 403 saying so), else undefined. */
function rateLimitWait(f: ApiFailure, message: string): number | undefined {
  const remaining = f.headers.get('x-ratelimit-remaining');
  const limited =
    f.status === 429 ||
    (f.status === 403 && (f.retryAfter !== null || remaining === '0' || /rate limit/i.test(message)));
  if (!limited) return undefined;
  if (f.retryAfterSec !== undefined) return Math.max(1, f.retryAfterSec);
  const reset = Number(f.headers.get('x-ratelimit-reset'));
  if (reset > 0) return Math.max(1, Math.ceil(reset - Date.now() / 1000));
  return 60;
}

/** GitHub's 422 `errors[]`: each entry's message, or `resource.field code`. */
function describeValidation(errors: unknown): string {
  if (!Array.isArray(errors) || errors.length === 0) return '';
  const parts = errors.slice(0, 10).map((e: unknown) => {
    if (typeof e === 'string') return e;
    if (e !== null && typeof e === 'object') {
      const { message, resource, field, code } = e as Record<string, unknown>;
      if (typeof message === 'string') return message;
      return [resource, field].filter(Boolean).join('.') + (code ? ` ${String(code)}` : '');
    }
    return String(e);
  });
  return ` Details: ${parts.join('; ')}.`;
}

/** Turns a failed GitHub answer into the Error the agent reads. Every request goes through it. */
function githubError(f: ApiFailure): Error {
  const body = f.data !== null && typeof f.data === 'object' ? (f.data as { message?: unknown; errors?: unknown }) : {};
  const own = typeof body.message === 'string' ? body.message : undefined;
  const message = own ?? (f.text || f.statusText || '').slice(0, 300);
  const about = ` (${f.action})`;
  const status = f.status;
  if (status === 401) {
    return new Error(
      `GitHub rejected the credential (401 ${message || 'Unauthorized'}): the token is invalid, expired or revoked. Reconnect the GitHub integration.`,
    );
  }
  const wait = rateLimitWait(f, message);
  if (wait !== undefined)
    return new Error(`GitHub rate limit exceeded${about}: rate limited, retry after ${wait} s. ${message}`.trim());
  if (status === 403 || status === 404) {
    const sso = f.headers.get('x-github-sso');
    if (sso) {
      const url = /url=(\S+)/.exec(sso)?.[1];
      return new Error(
        `GitHub ${status}${about}: the organisation requires SAML single sign-on for this token.${url ? ` Authorise it at ${url}` : ' Authorise the token for the organisation in GitHub settings.'}`,
      );
    }
    const accepted = scopeList(f.headers.get('x-accepted-oauth-scopes'));
    const granted = scopeList(f.headers.get('x-oauth-scopes'));
    if (accepted.length > 0 && !accepted.some((s) => scopeGranted(granted, s))) {
      return new Error(
        `GitHub ${status}${about}: the token is missing the OAuth scope this needs (one of: ${accepted.join(', ')}; the token has: ${granted.join(', ') || 'none'}). Reconnect GitHub and grant that scope.`,
      );
    }
  }
  if (status === 403) return new Error(`GitHub refused the request${about} (403): ${message}`);
  if (status === 404) {
    // GitHub's own message names what is missing ("Branch foo not found", "No commit found for the
    // ref foo"); the bare "Not Found" adds nothing
    const said = own?.trim() && !/^not found\.?$/i.test(own.trim()) ? ` GitHub said: ${own.trim().slice(0, 300)}` : '';
    return new Error(
      `Not found or no access${about}: GitHub answers 404 both when it does not exist and when the token may not see it. Check the owner, repository, number, branch or path.${said}`,
    );
  }
  if (status === 405) return new Error(`GitHub does not allow this${about} (405): ${message}`);
  if (status === 409) return new Error(`GitHub reported a conflict${about} (409): ${message}`);
  if (status === 422)
    return new Error(`GitHub rejected the input${about} (422): ${message}.${describeValidation(body.errors)}`);
  if (status >= 500)
    return new Error(`GitHub server error ${status}${about}: ${message || 'no details'}. Try again later.`);
  return new Error(`GitHub returned ${status}${about}: ${message || 'no details'}`);
}

/** True for the error githubError words a 404 with (not the missing-scope or SSO 404s). */
export const isNotFound = (err: unknown): boolean => err instanceof Error && /^Not found/.test(err.message);

const api = createApi({
  base: 'https://api.github.com',
  provider: 'GitHub',
  headers: {
    accept: 'application/vnd.github+json',
    'x-github-api-version': '2022-11-28',
    'user-agent': 'workbench-github-plugin',
  },
  failure: githubError,
  // the gateway's own refusals (answer too large, timeout) reach the agent as the gateway words them
  bridgeFailure: (f) => f.error,
});

/** query parameters of a rel="next" link that say where the next page starts */
const PAGE_KEYS = ['page', 'after', 'before', 'since', 'cursor'];

/** Where a list goes on: a page number, a cursor string (`after=…`), or null on the last page. */
export type Next = number | string | null;

/**
 * Where the rel="next" link starts: its page number, or, where GitHub pages by cursor (large
 * result sets answer `after=`, some lists `since=`), those parameters as one string the tool takes
 * back as `page`. Null when this is the last page.
 */
function nextPage(headers: HttpHeaders): Next {
  const link = linkNext(headers);
  if (link === null) return null;
  const params = Object.entries(queryOf(link)).filter(([k, v]) => PAGE_KEYS.includes(k) && v !== '');
  const page = params.find(([k]) => k === 'page');
  if (page && /^\d+$/.test(page[1])) return Number(page[1]);
  return params.length > 0 ? params.map(([k, v]) => `${k}=${enc(v)}`).join('&') : null;
}

export interface GhOptions {
  /** what the request is about, in words, for errors ("issue #7", "creating the issue") */
  what: string;
  query?: QueryParams;
  body?: unknown;
  accept?: string;
}

export interface GhAnswer<T> {
  status: number;
  data: T;
  next: Next;
}

/** One GitHub request whose answer is JSON (or empty); throws githubError's words on anything but 2xx. */
export async function gh<T>(
  ctx: PluginContext,
  method: string,
  path: string,
  { what, ...options }: GhOptions,
): Promise<GhAnswer<T>> {
  const answer = await api.request<unknown>(ctx, method, path, { ...options, action: what, lenient: true });
  // lenient: an answer that is not JSON comes back as its text, to be worded here as before
  if (typeof answer.data === 'string')
    throw new Error(`GitHub returned a response that is not JSON (${answer.status}) for ${what}.`);
  // an empty answer (204) is null, as handlers test it
  return { status: answer.status, data: (answer.data ?? null) as T, next: nextPage(answer.headers) };
}

/** One GitHub request whose answer is text (a diff). */
export async function ghText(ctx: PluginContext, path: string, what: string, accept: string): Promise<string> {
  return (await api.request<string>(ctx, 'GET', path, { action: what, accept, expect: 'text' })).data;
}

export interface RepoArgs {
  owner: string;
  repo: string;
}

/**
 * `/repos/{owner}/{repo}`, each one checked path segment. Numbers the schema checked as integers
 * (issue_number, pull_number, run_id…) follow it as they are: they cannot be `..` or hold a `/`.
 */
export const repoPath = (a: RepoArgs): string => `/repos/${segment(a.owner, 'owner')}/${segment(a.repo, 'repo')}`;

export async function defaultBranch(ctx: PluginContext, a: RepoArgs): Promise<string> {
  return (await gh<{ default_branch: string }>(ctx, 'GET', repoPath(a), { what: `repository ${a.owner}/${a.repo}` }))
    .data.default_branch;
}

/** The paging arguments every list tool takes. */
export interface PageArgs {
  per_page: number;
  page: number | string;
}

/**
 * per_page, and where to start: a page number, or the cursor parameters a `next` carried. A page
 * string that is not such a `next` value (an unknown parameter, an empty value, or a broken
 * percent-escape such as `after=%E0`, on which decodeURIComponent throws URIError) is refused with
 * the one argument error below rather than a bare "URI malformed".
 */
export function paging(a: PageArgs): Record<string, string | number> {
  if (typeof a.page === 'number' || /^\d+$/.test(a.page)) return { per_page: a.per_page, page: Number(a.page) };
  const notNext = () =>
    new Error(
      `page "${a.page}" is neither a page number nor a \`next\` value of an earlier result: pass the \`next\` value as it was returned.`,
    );
  const out: Record<string, string | number> = { per_page: a.per_page };
  for (const kv of a.page.split('&')) {
    const [k = '', v] = kv.split('=');
    if (!PAGE_KEYS.includes(k) || !v) throw notNext();
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      throw notNext();
    }
  }
  return out;
}
