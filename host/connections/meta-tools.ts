/**
 * @module host/connections/meta-tools
 * The agent's side of connecting: list_integrations (the truthful state of each connection),
 * connect (a link for the user, OAuth2 or API key), wait_for_connection (long-polls the database
 * with back-off, woken early by this process's events, with progress notifications) and disconnect
 * (revokes at the provider where it can). Each is a module of host/connections/tools.
 */
import type { MetaTool } from '../meta-tools/types.js';
import { connectTool } from './tools/connect.js';
import { integrationLookup, type ConnectionMetaToolDeps } from './tools/deps.js';
import { disconnectTool } from './tools/disconnect.js';
import { listIntegrationsTool } from './tools/list-integrations.js';
import { waitForConnectionTool } from './tools/wait-for-connection.js';

export type { ConnectionMetaToolDeps, PluginCatalog } from './tools/deps.js';
export { MAX_WAITS_PER_USER } from './tools/wait-for-connection.js';
export type { WaitStatus } from './tools/wait-until-settled.js';

export function createConnectionMetaTools(deps: ConnectionMetaToolDeps): MetaTool[] {
  const lookup = integrationLookup(deps);
  return [
    listIntegrationsTool(deps, lookup),
    connectTool(deps, lookup),
    waitForConnectionTool(deps),
    disconnectTool(deps, lookup),
  ];
}
