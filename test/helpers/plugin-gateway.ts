/**
 * @module test/helpers/plugin-gateway
 * The one set-up every first-party plugin's test uses, from one table: where the plugin's API lives
 * (the origin a loopback stand-in answers for) and how the test connects an account. A test file
 * calls `usePluginGateway` once, at its top, and reads `upstream` and `gw` in its tests; a test that
 * needs the same plugin under another policy (a small response cap, a short timeout) starts one more
 * gateway with `startPluginGateway`, on the same stand-in.
 */
import { after, before } from 'node:test';
import { startGateway, type TestGateway } from './gateway.js';
import { startUpstream, type Upstream } from './upstream.js';

/** What `gw.connect` takes: an OAuth2 token (with its refresh token and lifetime) or API-key values and config. */
export type Credential = Parameters<TestGateway['connect']>[1];

/** The origin of each first-party plugin's API, as its manifest's egress names it. */
export const API_ORIGINS: Readonly<Record<string, string>> = {
  asana: 'https://app.asana.com',
  'atlassian-bitbucket': 'https://api.bitbucket.org',
  'atlassian-confluence': 'https://api.atlassian.com',
  'atlassian-jira': 'https://api.atlassian.com',
  clevertap: 'https://in1.api.clevertap.com',
  github: 'https://api.github.com',
  gitlab: 'https://gitlab.com',
  'google-calendar': 'https://www.googleapis.com',
  'google-docs': 'https://docs.googleapis.com',
  'google-drive': 'https://www.googleapis.com',
  'google-gemini': 'https://generativelanguage.googleapis.com',
  'google-gmail': 'https://gmail.googleapis.com',
  'google-sheets': 'https://sheets.googleapis.com',
  'google-slides': 'https://slides.googleapis.com',
  linear: 'https://api.linear.app',
  newrelic: 'https://api.newrelic.com',
  notion: 'https://api.notion.com',
  slack: 'https://slack.com',
};

/** A gateway that loads only `plugin`, with its API's origin (and any `more`) mapped to stand-ins, and the account connected. */
export async function startPluginGateway(
  plugin: string,
  upstream: Upstream,
  credential: Credential,
  options: { policy?: Record<string, unknown>; more?: Record<string, Upstream> } = {},
): Promise<TestGateway> {
  const origin = API_ORIGINS[plugin];
  if (!origin) throw new Error(`no API origin for plugin "${plugin}" in test/helpers/plugin-gateway.ts`);
  const upstreams: Record<string, string> = { [origin]: upstream.origin };
  for (const [o, u] of Object.entries(options.more ?? {})) upstreams[o] = u.origin;
  const gw = await startGateway({
    upstreams,
    plugins: [plugin],
    ...(options.policy ? { policy: options.policy } : {}),
  });
  await gw.connect(plugin, credential);
  return gw;
}

/**
 * Starts a loopback stand-in and a gateway for `plugin` before the file's tests and closes both
 * after them; `started` receives them (assign them to the file's `upstream` and `gw`).
 */
export function usePluginGateway(
  plugin: string,
  credential: Credential,
  started: (s: { upstream: Upstream; gw: TestGateway }) => void,
): void {
  let upstream: Upstream | undefined;
  let gw: TestGateway | undefined;
  before(async () => {
    upstream = await startUpstream();
    gw = await startPluginGateway(plugin, upstream, credential);
    started({ upstream, gw });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });
}
