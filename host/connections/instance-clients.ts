/**
 * @module host/connections/instance-clients
 * The operator's OAuth2 clients registered on instances of a provider (an application created on a
 * GitLab self-managed server for this gateway), one environment variable per plugin:
 *
 *   GITLAB_INSTANCE_CLIENTS='{"https://gitlab.example.com": {"clientId": "…", "clientSecret": "…"}}'
 *
 * keyed by the instance's exact origin, so that a client and its secret only ever go to the
 * instance they were registered on (a key made from the host name, GITLAB_EXAMPLE_COM, would be
 * the same for gitlab-example.com). Read once, at start-up: a value that is not such a map stops
 * start-up with GW_ERR_CONFIG_INVALID naming the variable and the problem.
 */
import { fail } from '../../contracts/errors.js';

/** A client as oauth.ts uses it (its OAuthClient): an id, and a secret unless it is a public client. */
interface OAuthClient {
  clientId: string;
  clientSecret?: string;
}

const SUFFIX = '_INSTANCE_CLIENTS';

/** Env prefix (`GITLAB`) → instance origin → client. */
export type InstanceClients = ReadonlyMap<string, ReadonlyMap<string, OAuthClient>>;

export function instanceClientsFromEnv(env: NodeJS.ProcessEnv): InstanceClients {
  const out = new Map<string, Map<string, OAuthClient>>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.endsWith(SUFFIX) || value === undefined || value.trim() === '') continue;
    out.set(name.slice(0, -SUFFIX.length), parseClients(name, value));
  }
  return out;
}

function parseClients(name: string, value: string): Map<string, OAuthClient> {
  const invalid = (why: string): Error =>
    fail('GW_ERR_CONFIG_INVALID', {
      message: `${name}: ${why}. Expected a JSON object such as {"https://gitlab.example.com": {"clientId": "…", "clientSecret": "…"}}`,
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid('is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('is not a JSON object');
  const clients = new Map<string, OAuthClient>();
  for (const [origin, entry] of Object.entries(parsed)) {
    const key = originOf(origin);
    if (key === undefined)
      throw invalid(`"${origin.slice(0, 100)}" is not an instance origin (https://host or https://host:port, no path)`);
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw invalid(`the client of ${key} is not an object`);
    const { clientId, clientSecret, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw invalid(`the client of ${key} has unknown keys (${unknown.join(', ')})`);
    if (typeof clientId !== 'string' || clientId.trim() === '') throw invalid(`the client of ${key} has no clientId`);
    if (clientSecret !== undefined && typeof clientSecret !== 'string')
      throw invalid(`the clientSecret of ${key} is not text`);
    const secret = clientSecret?.trim();
    clients.set(key, secret ? { clientId: clientId.trim(), clientSecret: secret } : { clientId: clientId.trim() });
  }
  return clients;
}

/** The origin `text` names exactly (a trailing slash allowed), or undefined. */
function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    return url.origin === text.replace(/\/$/, '').toLowerCase() ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
