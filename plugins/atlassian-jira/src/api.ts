/**
 * @module plugins/atlassian-jira/src/api
 * The Jira client: every call first resolves the site's cloud id from the token's accessible
 * resources, then goes to https://api.atlassian.com/ex/jira/{cloudId}/rest/api/3/… (or to the Jira
 * Software API, …/rest/agile/1.0/…, for boards). Jira's error bodies and its wording of failures
 * (naming the OAuth scope a call needs) live here.
 */
import {
  atlassianSite,
  createApi,
  path,
  type ApiFailure,
  type AtlassianSite,
  type PluginContext,
  type QueryParams,
} from 'workbench/plugin-sdk';

export const READ = 'read:jira-work';
export const WRITE = 'write:jira-work';
export const USERS = 'read:jira-user';
/** the Jira Software (Agile) API's scopes for reading boards */
export const BOARDS = 'read:board-scope:jira-software and read:project:jira';

/** The Jira site a call acts on. */
export type Site = AtlassianSite;

/** Jira's error body: `errorMessages` (array), `errors` (field → message map), or `message`. */
function jiraDetail(data: unknown, text: string): string {
  if (data === undefined) return text.trim().slice(0, 500);
  if (typeof data === 'string') return data.trim().slice(0, 500);
  if (data === null || typeof data !== 'object') return '';
  const d = data as { errorMessages?: unknown; errors?: unknown; message?: unknown; error?: unknown };
  const parts: string[] = [];
  if (Array.isArray(d.errorMessages))
    parts.push(...d.errorMessages.filter((m): m is string => typeof m === 'string' && m !== ''));
  if (d.errors && typeof d.errors === 'object') {
    for (const [field, msg] of Object.entries(d.errors)) parts.push(`${field}: ${String(msg)}`);
  }
  if (!parts.length && typeof d.message === 'string') parts.push(d.message);
  if (!parts.length && typeof d.error === 'string') parts.push(d.error);
  return parts.join('; ');
}

/** Jira's own words; 400/409/422 and 429 take the SDK's, which say the same. */
function jiraFailure({ status, detail, action, options }: ApiFailure): Error | undefined {
  const scope = String(options['scope']);
  if ((status === 401 || status === 403) && /scope/i.test(detail)) {
    return new Error(
      `The Jira connection lacks the OAuth scope needed to ${action} (${status}; needs ${scope}): reconnect atlassian-jira and approve that scope.`,
    );
  }
  const said = detail ? ` Jira said: ${detail}` : '';
  if (status === 401)
    return new Error(
      `Jira rejected the access token (401) while trying to ${action}: reconnect atlassian-jira.${said}`,
    );
  if (status === 403) {
    return new Error(
      `Jira refused permission to ${action} (403): ${detail || 'your Jira user lacks the project permission for this'}. This needs the ${scope} scope and the matching Jira project permission.`,
    );
  }
  if (status === 404)
    return new Error(
      `Jira found nothing while trying to ${action} (404): ${detail || 'it does not exist, or you cannot see it'}.`,
    );
  if (status >= 500)
    return new Error(`Jira had a server error (${status}) while trying to ${action}: retry later.${said}`);
  if (status === 429 || status === 400 || status === 409 || status === 422) return undefined;
  return new Error(`Jira answered HTTP ${status} while trying to ${action}${detail ? `: ${detail}` : ''}.`);
}

const api = createApi({
  base: 'https://api.atlassian.com',
  provider: 'Jira',
  integration: 'atlassian-jira',
  describe: jiraDetail,
  failure: jiraFailure,
});

export interface JiraRequest {
  /** what the call does, in words, for errors */
  action: string;
  /** the OAuth scope the call needs, named when it is missing */
  scope: string;
  query?: QueryParams;
  body?: unknown;
}

/** One request; an answer that is not JSON comes back as its text, an empty one as undefined. */
async function send<T>(ctx: PluginContext, method: string, url: string, req: JiraRequest): Promise<T | undefined> {
  return (await api.request<T | undefined>(ctx, method, url, { ...req, lenient: true })).data;
}

/** The Jira site this call acts on: `ctx.config.site` (URL, host, name or cloud id), else the first. */
export async function resolveSite(ctx: PluginContext): Promise<Site> {
  const data = await send<unknown>(ctx, 'GET', '/oauth/token/accessible-resources', {
    action: 'list the Jira sites this connection can reach',
    scope: READ,
  });
  return atlassianSite(data, {
    product: 'jira',
    wanted: ctx.config['site'],
    none: 'This Atlassian connection can reach no Jira site: reconnect atlassian-jira and choose a Jira site on the consent screen.',
    unmatched: (wanted, reachable) =>
      `No Jira site matching "${wanted}" is reachable with this connection; reachable: ${reachable}.`,
  });
}

/** One Jira REST v3 call on the resolved site; `rest` is the path below /rest/api/3. */
export function jira<T>(
  ctx: PluginContext,
  site: Site,
  method: string,
  rest: string,
  req: JiraRequest,
): Promise<T | undefined> {
  return send<T>(ctx, method, path`/ex/jira/${site.id}/rest/api/3` + rest, req);
}

/** One Jira Software (Agile) REST call on the resolved site; `rest` is the path below /rest/agile/1.0. */
export function agile<T>(
  ctx: PluginContext,
  site: Site,
  method: string,
  rest: string,
  req: JiraRequest,
): Promise<T | undefined> {
  return send<T>(ctx, method, path`/ex/jira/${site.id}/rest/agile/1.0` + rest, req);
}

/** The issue's page on the site. */
export const browse = (site: Site, key: string): string => `${site.url}/browse/${key}`;
