/**
 * @module plugins/gitlab/src/api
 * The GitLab REST API v4 client: on gitlab.com, or on the connection's own instance (GitLab
 * self-managed or Dedicated: `ctx.config.instanceUrl`, which the gateway checked at connect time and
 * binds the credential to), the one mapping from a failed answer to the words an agent reads,
 * paging by `x-next-page`, and the GitLab-specific path forms: a project as one %2F-encoded segment
 * (from an id, a path or its web URL) and a repository file path with `.` as %2E. The credential is
 * added by the gateway: this code never sets Authorization.
 */
import {
  createApi,
  enc,
  instanceUrl,
  type ApiFailure,
  type BridgeFailure,
  type HttpHeaders,
  type PluginContext,
  type RequestOptions,
} from 'workbench/plugin-sdk';

const TOO_LARGE = 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE';

/** A failed GitLab answer in words; `status` and GitLab's own message (`said`) stay readable for a tool's own mapping. */
export class GitLabError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly said: string,
  ) {
    super(message);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * GitLab's error text: `message` is a string ("404 Project Not Found"), an array, or an object of
 * field → messages ({"title": ["can't be blank"]}, {"base": ["Reference not found"]}); OAuth
 * failures answer {"error", "error_description"}.
 */
function gitlabMessage(body: unknown, text: string): string {
  if (isRecord(body)) {
    const m = body['message'];
    if (typeof m === 'string' && m.trim()) return m.trim();
    if (Array.isArray(m)) return m.map(String).join('; ');
    if (isRecord(m)) {
      return Object.entries(m)
        .slice(0, 10)
        .map(([field, v]) => {
          const said = Array.isArray(v) ? v.join(', ') : String(v);
          return field === 'base' ? said : `${field} ${said}`;
        })
        .join('; ');
    }
    if (typeof body['error_description'] === 'string') return body['error_description'];
    if (typeof body['error'] === 'string') return body['error'];
  }
  return text.trim().slice(0, 300);
}

/** Seconds to wait after a 429: Retry-After, else RateLimit-Reset (epoch seconds), else 60. */
function retryAfter(f: ApiFailure): number {
  if (f.retryAfterSec !== undefined) return Math.max(1, f.retryAfterSec);
  const reset = Number(f.headers.get('ratelimit-reset'));
  if (reset > 0) return Math.max(1, Math.ceil(reset - Date.now() / 1000));
  return 60;
}

/** Turns a failed GitLab answer into the Error the agent sees. Every request goes through it. */
function gitlabError(f: ApiFailure): GitLabError {
  const body = isRecord(f.data) ? f.data : {};
  const said = gitlabMessage(f.data, f.text);
  const message = said || f.statusText || '';
  const status = f.status;
  const about = ` (${f.action})`;
  const saidTail = message ? ` GitLab said: ${message}` : '';
  const error = (text: string) => new GitLabError(text, status, said);
  if (status === 401) {
    return error(
      `GitLab rejected the credential${about} (401 ${message || 'Unauthorized'}): the token is invalid, expired or revoked. Reconnect the gitlab integration.`,
    );
  }
  if (status === 403 && body['error'] === 'insufficient_scope') {
    const scope = typeof body['scope'] === 'string' ? body['scope'] : 'api';
    return error(
      `GitLab refused${about} (403): the token lacks the OAuth scope this needs (${scope}). Reconnect gitlab and grant the ${scope} scope.`,
    );
  }
  if (status === 429)
    return error(`GitLab rate limit reached${about}: rate limited, retry after ${retryAfter(f)} s.${saidTail}`);
  if (status === 403)
    return error(
      `GitLab refused${about} (403): your role in this project or group does not allow it, or the feature is disabled for the project.${saidTail}`,
    );
  if (status === 404) {
    return error(
      `Not found or no access${about}: GitLab answers 404 both when it does not exist and when you may not see it. Check the project (numeric id or full path such as group/subgroup/project), the iid, the branch or ref, and the file path.${saidTail}`,
    );
  }
  if (status === 405) return error(`GitLab does not allow this${about} (405).${saidTail}`);
  if (status === 409) return error(`GitLab reported a conflict${about} (409): ${message || 'no details'}`);
  if (status === 400 || status === 422)
    return error(`GitLab rejected the input${about} (${status}): ${message || 'no details'}`);
  if (status >= 500)
    return error(`GitLab server error ${status}${about}: ${message || 'no details'}. Try again later.`);
  return error(`GitLab returned ${status}${about}: ${message || 'no details'}`);
}

/** The gateway's refusals in GitLab's words; the code stays on the error (see `whole`). */
function bridgeWords(f: BridgeFailure): Error {
  let message: string;
  if (f.code === TOO_LARGE) {
    message = `GitLab's answer for ${f.action} is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE): ask for less (a smaller per_page, one file or one job at a time).`;
  } else if (f.code === 'GW_ERR_BRIDGE_TIMEOUT') {
    message = `GitLab did not answer in time (${f.action}) (GW_ERR_BRIDGE_TIMEOUT): try again, or ask for less.`;
  } else {
    return f.error;
  }
  return Object.assign(new Error(message), { code: f.code });
}

/** gitlab.com: where a connection that names no instance of its own goes. */
export const GITLAB_COM = 'https://gitlab.com';

/** The connection's GitLab: its own instance, or gitlab.com. */
export const gitlabUrl = (ctx: PluginContext): string => instanceUrl(ctx, GITLAB_COM);

export const api = createApi({
  base: (ctx) => `${gitlabUrl(ctx)}/api/v4`,
  provider: 'GitLab',
  failure: gitlabError,
  bridgeFailure: bridgeWords,
});

/** One GitLab request whose JSON object answer is all the caller needs. */
export const get = <T>(ctx: PluginContext, path: string, options: RequestOptions): Promise<T> =>
  api.json<T>(ctx, 'GET', path, options);
export const send = <T>(
  ctx: PluginContext,
  method: 'POST' | 'PUT',
  path: string,
  body: object,
  action: string,
): Promise<T> => api.json<T>(ctx, method, path, { body, action });

/** A list answer (GitLab answers a list endpoint with an array) and the next page, null on the last. */
export interface Listed<T> {
  rows: T[];
  next: number | null;
}

/** `x-next-page`: the next page number, empty on the last page. */
function nextPage(headers: HttpHeaders): number | null {
  const v = (headers.get('x-next-page') ?? '').trim();
  return /^\d+$/.test(v) ? Number(v) : null;
}

export async function list<T>(ctx: PluginContext, path: string, options: RequestOptions): Promise<Listed<T>> {
  const { data, headers } = await api.request<unknown>(ctx, 'GET', path, options);
  return { rows: Array.isArray(data) ? (data as T[]) : [], next: nextPage(headers) };
}

/**
 * A request for something GitLab sends whole (one file, one job log): over the gateway's response
 * cap, asking for less does not help, so the error says what `instead` says (where to see it).
 */
export async function whole<T>(request: Promise<T>, instead: () => Promise<string> | string): Promise<T> {
  try {
    return await request;
  } catch (err) {
    if (isRecord(err) && err['code'] === TOO_LARGE) throw new Error(await instead());
    throw err;
  }
}

/** The host (and port, when not the default) of a URL's authority, lower-cased, without user information. */
const hostOf = (authority: string): string =>
  authority
    .replace(/^[^@]*@/, '')
    .replace(/:(443|80)?$/, '')
    .toLowerCase();

/**
 * A project as GitLab's `:id` wants it: a numeric id as is, a path (`group/sub/project`) URL-encoded
 * as one segment (`group%2Fsub%2Fproject`). A project's web URL on the connection's GitLab (its
 * instance, or gitlab.com) is accepted too.
 */
export function projectRef(ctx: PluginContext, value: unknown): string {
  let s = String(value ?? '').trim();
  if (/^\d+$/.test(s)) return s;
  const url = /^https?:\/\/([^/?#]*)(.*)$/i.exec(s);
  if (url) {
    // only a URL on the connection's GitLab names a project here: the same path on another host is another project
    const host = hostOf(url[1]);
    const home = hostOf(/^https?:\/\/([^/?#]*)/i.exec(gitlabUrl(ctx))?.[1] ?? '');
    if (host !== home && !(home === 'gitlab.com' && host === 'www.gitlab.com')) {
      throw new Error(
        `Invalid project "${String(value)}": that URL is on ${host || 'no host'}, not ${home}, the GitLab this connection reaches. Pass the project's numeric id or its full path with namespace (e.g. "group/subgroup/project") instead.`,
      );
    }
    s = url[2]
      .split(/[?#]/)[0]
      .split('/-/')[0]
      .replace(/\.git$/, '');
  }
  s = s.replace(/^\/+|\/+$/g, '');
  const parts = s.split('/');
  if (s === '' || parts.length < 2 || parts.some((p) => p === '' || p === '.' || p === '..' || /\s/.test(p))) {
    throw new Error(
      `Invalid project "${String(value)}": pass its numeric id (e.g. 278964) or its full path with namespace (e.g. "gitlab-org/gitlab", "group/subgroup/project").`,
    );
  }
  return enc(parts.join('/'));
}

/** `/projects/:id` for a tool's `project` argument. */
export const projectPath = (ctx: PluginContext, a: { project?: unknown }): string =>
  `/projects/${projectRef(ctx, a.project)}`;

/** A repository file path for /repository/files/:file_path: one segment, `/` as %2F and `.` as %2E, as GitLab documents. */
export function filePath(value: string): string {
  const s = value.replace(/^\/+/, '');
  if (s === '' || s.split('/').some((p) => p === '' || p === '.' || p === '..'))
    throw new Error(`Invalid file path "${value}".`);
  return enc(s).replace(/\./g, '%2E');
}

/** Query parameters for a page of a list. */
export const paging = (a: { per_page: number; page: number }) => ({ per_page: a.per_page, page: a.page });

/** GitLab user ids for usernames (`GET /users?username=`), in order; an unknown name fails the call. */
export async function userIds(ctx: PluginContext, usernames: readonly string[], role: string): Promise<number[]> {
  const ids: number[] = [];
  for (const raw of usernames) {
    const username = raw.replace(/^@/, '');
    const { rows } = await list<{ id: number; username?: string }>(ctx, '/users', {
      query: { username },
      action: `looking up ${role} @${username}`,
    });
    const user = rows.find((u) => String(u?.username).toLowerCase() === username.toLowerCase()) ?? rows[0];
    if (!user)
      throw new Error(
        `No GitLab user with the username "${username}" (${role}): check the spelling; a username is the @handle, not the display name.`,
      );
    ids.push(user.id);
  }
  return ids;
}

/** `assignee_ids` / `reviewer_ids` for a list of usernames: [0] (GitLab's "nobody") for an empty list. */
export async function idsFor(
  ctx: PluginContext,
  usernames: readonly string[] | undefined,
  role: string,
): Promise<number[] | undefined> {
  if (usernames === undefined) return undefined;
  if (usernames.length === 0) return [0];
  return userIds(ctx, usernames, role);
}

/** The ids for usernames when some are given (creating: nobody is GitLab's default). */
export const someIds = async (
  ctx: PluginContext,
  usernames: readonly string[] | undefined,
  role: string,
): Promise<number[] | undefined> => (usernames?.length ? userIds(ctx, usernames, role) : undefined);

export async function defaultBranch(ctx: PluginContext, a: { project: unknown }): Promise<string> {
  const project = await get<{ default_branch?: string }>(ctx, projectPath(ctx, a), {
    action: `project ${String(a.project)}`,
  });
  if (!project.default_branch)
    throw new Error(
      `Project ${String(a.project)} has no default branch (its repository is empty): pass the ref explicitly.`,
    );
  return project.default_branch;
}

/**
 * `scope` of a list across projects (/issues, /merge_requests): GitLab's default there is
 * created_by_me, which a filter by another user (reviewer, assignee, author) would narrow to
 * almost nothing, so such a filter without a scope asks for all. In a project, GitLab's default
 * is all already.
 */
export function crossProjectScope<S extends string>(
  a: { scope?: S; project?: unknown },
  userFilters: Array<string | undefined>,
): S | 'all' | undefined {
  if (a.scope !== undefined || a.project !== undefined) return a.scope;
  return userFilters.some((u) => u !== undefined) ? 'all' : undefined;
}

/** True when a PUT body would change nothing (JSON leaves undefined values out). */
export const isEmpty = (body: object): boolean => Object.values(body).every((v) => v === undefined);
