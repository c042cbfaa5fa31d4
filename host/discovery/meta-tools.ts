/**
 * @module host/discovery/meta-tools
 * The discovery meta-tools: `search_tools` (ranked, policy-filtered, with the caller's connection
 * state; host/discovery/search-tools.ts) and `get_tool_schema` (the validated manifest's JSON
 * Schema, or "Tool not found" with suggestions; host/discovery/get-tool-schema.ts). A tool the
 * caller may not run is never shown, and asking for its schema looks exactly like asking for a
 * tool that does not exist.
 */
import type { MetaTool } from '../meta-tools/types.js';
import { createCatalogView } from './catalog-view.js';
import type { DiscoveryDeps } from './discovery-deps.js';
import { getToolSchemaTool } from './get-tool-schema.js';
import { searchToolsTool } from './search-tools.js';

export type { CatalogTool } from './catalog-tool.js';
export { DESCRIPTION_MAX_CHARS, trimDescription, type DiscoveryDeps } from './discovery-deps.js';
export { DISCOVERY_TOOL_NOT_FOUND, GET_TOOL_SCHEMA_DESCRIPTION } from './get-tool-schema.js';
export { namesIntegration, SEARCH_TOOLS_DESCRIPTION } from './search-tools.js';

/** The discovery meta-tools, in tools/list order. */
export function createDiscoveryMetaTools(deps: DiscoveryDeps): MetaTool[] {
  const view = createCatalogView(() => deps.catalog());
  const searchTools = searchToolsTool(deps, view);
  const getToolSchema = getToolSchemaTool(deps, view, () => [searchTools, getToolSchema]);
  return [searchTools, getToolSchema];
}
