/**
 * @module plugins/clevertap/src/api
 * The CleverTap REST API (v1) for one project of the connection: the project a call acts on (the
 * `project` argument, else the connection's default, else the first), its region's host, the
 * account-id header that tells the gateway which project's passcode to send (the plugin never holds
 * a passcode), and the one mapping from a failed answer — an HTTP status, or `{"status": "fail"}`
 * in a 200 — to words an agent can act on.
 */
import { createApi, type ApiFailure, type PluginContext } from 'workbench/plugin-sdk';

/** CleverTap's data-centre regions and their API hosts. */
export const REGIONS = ['eu1', 'in1', 'us1', 'sg1', 'aps3', 'mec1'] as const;
export type Region = (typeof REGIONS)[number];
export const HOSTS = REGIONS.map((r) => `${r}.api.clevertap.com`);

/** A project of the connection, as ctx.config has it: never its passcode. */
export interface Project {
  name: string;
  accountId: string;
  region: Region;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The connection's projects, in the order they were entered. */
export function projectsOf(ctx: PluginContext): Project[] {
  const list = ctx.config['projects'];
  if (!Array.isArray(list) || list.length === 0)
    throw new Error('The clevertap connection lists no projects: reconnect clevertap and enter at least one project.');
  return (list as unknown[]).filter(isObject).map((p) => {
    const accountId = String(p['accountId'] ?? '');
    const region = String(p['region'] ?? '').toLowerCase();
    const name = typeof p['name'] === 'string' && p['name'] ? p['name'] : accountId;
    if (!(REGIONS as readonly string[]).includes(region))
      throw new Error(
        `Project "${name}" has the region "${region}", which CleverTap does not have (${REGIONS.join(', ')}): reconnect clevertap with the region shown in its dashboard settings.`,
      );
    return { name, accountId, region: region as Region };
  });
}

const listed = (projects: Project[]): string =>
  projects.map((p) => `"${p.name}" (${p.accountId}, ${p.region})`).join(', ');

/** One project by its name (any case) or account id. */
function findProject(projects: Project[], wanted: string): Project | undefined {
  const w = wanted.trim().toLowerCase();
  return projects.find((p) => p.accountId.toLowerCase() === w) ?? projects.find((p) => p.name.toLowerCase() === w);
}

/** The project a call acts on: `project`, else the connection's default project, else the first. */
export function projectFor(ctx: PluginContext, project: string | undefined): Project {
  const projects = projectsOf(ctx);
  if (project) {
    const found = findProject(projects, project);
    if (!found)
      throw new Error(`No project "${project}" in the clevertap connection; its projects are ${listed(projects)}.`);
    return found;
  }
  const fallback = defaultProject(ctx, projects);
  return fallback ?? projects[0];
}

/** The connection's default project, when it names one that exists. */
export function defaultProject(ctx: PluginContext, projects: Project[]): Project | undefined {
  const named = ctx.config['defaultProject'];
  if (typeof named !== 'string' || !named) return undefined;
  const found = findProject(projects, named);
  if (!found)
    throw new Error(
      `The clevertap connection's default project "${named}" is not one of its projects (${listed(projects)}): pass project, or reconnect clevertap with a default that exists.`,
    );
  return found;
}

/** How a project appears in results. */
export const shown = (p: Project) => ({ name: p.name, accountId: p.accountId, region: p.region });

/** CleverTap's words for a failure: `{"status": "fail", "error": "…", "code": 401}`. */
function failureWords(f: ApiFailure): Error | undefined {
  const project = f.options['project'] as Project | undefined;
  const which = project ? ` of project "${project.name}" (${project.accountId}, ${project.region})` : '';
  const said = f.detail ? ` CleverTap said: ${f.detail}.` : '';
  if (f.status === 401 || f.status === 403)
    return new Error(
      `CleverTap refused the account id and passcode${which} (${f.status}) while trying to ${f.action}: check that the project's region is right and its passcode current, then reconnect clevertap.${said}`,
    );
  if (f.status === 429) {
    const wait =
      f.retryAfterSec !== undefined ? `retry after ${f.retryAfterSec} seconds` : 'wait a few seconds and retry';
    return new Error(
      `CleverTap rate limited the request to ${f.action} (429; it allows a few concurrent requests per account): ${wait}.`,
    );
  }
  return undefined;
}

export const api = createApi({
  // every request names its project's regional host in full
  base: 'https://eu1.api.clevertap.com/1',
  provider: 'CleverTap',
  integration: 'clevertap',
  failure: failureWords,
});

/** The URL of `path` (under /1) at the project's regional host. */
export const urlOf = (p: Project, path: string): string => `https://${p.region}.api.clevertap.com/1${path}`;

/** What CleverTap answers: `status` success, partial or fail, and the rest of the body. */
export type Answer = Record<string, unknown> & { status?: unknown; error?: unknown };

/**
 * One request for `project`, read as JSON; a 200 whose status is "fail" is an error too. `req_id`
 * is a 64-bit integer that JSON.parse would round, so it is taken from the text as written.
 */
export async function call(
  ctx: PluginContext,
  project: Project,
  method: 'GET' | 'POST',
  path: string,
  action: string,
  options: { query?: Record<string, string | number | boolean | undefined>; body?: unknown } = {},
): Promise<{ data: Answer; reqId: string | null }> {
  const { data: text } = await api.request<string>(ctx, method, urlOf(project, path), {
    action,
    expect: 'text',
    headers: { 'x-clevertap-account-id': project.accountId, 'content-type': 'application/json; charset=utf-8' },
    ...(options.query ? { query: options.query } : {}),
    ...(options.body !== undefined ? { body: options.body, contentType: 'application/json; charset=utf-8' } : {}),
    project,
  });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`CleverTap answered something that is not JSON while trying to ${action}: ${text.slice(0, 200)}`);
  }
  if (!isObject(data)) throw new Error(`CleverTap answered an unexpected shape while trying to ${action}.`);
  if (data['status'] === 'fail')
    throw new Error(
      `CleverTap could not ${action}: ${typeof data['error'] === 'string' ? data['error'] : 'it answered status "fail"'}.`,
    );
  const m = /"req_id"\s*:\s*"?(\d{1,30})"?/.exec(text);
  return { data, reqId: m ? m[1] : null };
}
