/**
 * @module host/connections/connectable
 * Whether `connect` can work for an integration at all: an OAuth2 integration needs the operator's
 * `<PLUGIN>_CLIENT_ID`, unless it takes a personal token the person pastes instead. One answer for list_integrations, search_tools, get_tool_schema and the
 * NOT_CONNECTED item, so that no agent is sent to a connect that must fail.
 */
import type { PluginManifest } from '../../contracts/manifest.js';
import { clientEnvPrefix, type OAuthClient } from './oauth.js';

/** Why the integration cannot be connected on this server, or undefined when it can (or needs no connection). */
export function whyNotConnectable(
  manifest: Pick<PluginManifest, 'name' | 'auth'>,
  clientFor: ((pluginName: string) => OAuthClient | undefined) | undefined,
): string | undefined {
  if (manifest.auth.type !== 'oauth2' || manifest.auth.personalToken || clientFor === undefined) return undefined;
  if (clientFor(manifest.name)) return undefined;
  return `the server has no ${clientEnvPrefix(manifest.name)}_CLIENT_ID configured`;
}
