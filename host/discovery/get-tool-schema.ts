/**
 * @module host/discovery/get-tool-schema
 * get_tool_schema: the validated manifest's JSON Schema of one tool the caller may run, a
 * meta-tool's own schema, or "Tool not found" with suggestions. A tool the caller may not run
 * looks exactly like one that does not exist.
 */
import * as z from 'zod';
import { metaToolJsonSchema } from '../meta-tools/json-schema.js';
import type { MetaTool, MetaToolResult } from '../meta-tools/types.js';
import type { CatalogTool } from './catalog-tool.js';
import { suggestToolNames, summariseIntegrations, type CatalogSnapshot } from './catalog-view.js';
import { connectionOf, WORKFLOW, type DiscoveryDeps } from './discovery-deps.js';

/** Stable code of the "Tool not found" answer of get_tool_schema. */
export const DISCOVERY_TOOL_NOT_FOUND = 'GW_ERR_DISCOVERY_TOOL_NOT_FOUND';

export const GET_TOOL_SCHEMA_DESCRIPTION =
  'Get the exact input JSON Schema of one tool (argument names, types, required fields, defaults, ' +
  'allowed values and descriptions) so that you can call it with execute_tools. Pass the exact name ' +
  'returned by search_tools, e.g. "github_create_issue". An unknown name returns "Tool not found" with ' +
  `the closest tool names as suggestions. ${WORKFLOW}`;

const schemaInput = z.strictObject({
  tool: z.string().trim().min(1).max(200).describe('The exact tool name, as returned by search_tools'),
});

/** get_tool_schema; `ownTools` are the discovery meta-tools, answered for when deps.metaTools is not given. */
export function getToolSchemaTool(
  deps: DiscoveryDeps,
  view: () => CatalogSnapshot,
  ownTools: () => readonly MetaTool[],
): MetaTool<typeof schemaInput> {
  return {
    name: 'get_tool_schema',
    order: 20,
    title: 'Get tool schema',
    description: GET_TOOL_SCHEMA_DESCRIPTION,
    inputSchema: schemaInput,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    async handler(ctx, args) {
      const snapshot = view();
      const allowed = (t: CatalogTool): boolean => deps.isAllowed(ctx.user, t);
      const wanted = args.tool.normalize('NFKC').trim();
      const tool = snapshot.byName.get(wanted) ?? snapshot.byName.get(wanted.toLowerCase());
      if (!tool || !allowed(tool)) {
        const meta = (deps.metaTools?.() ?? ownTools()).find((m) => m.name === wanted.toLowerCase());
        if (meta) return metaToolAnswer(meta);
        const suggestions = suggestToolNames(snapshot, wanted, allowed);
        const known = suggestions.length
          ? ''
          : summariseIntegrations(snapshot.tools, allowed)
              .map((i) => `${i.name} (${i.displayName})`)
              .join(', ');
        return toolNotFound(args.tool, suggestions, known);
      }
      const connected = (integration: string): Promise<boolean> =>
        deps.isConnected(ctx.user, integration).catch(() => false);
      return {
        json: {
          name: tool.name,
          integration: tool.integration,
          description: tool.description,
          inputSchema: tool.inputSchema,
          annotations: tool.annotations ?? {},
          ...(await connectionOf(deps, tool.integration, connected)),
        },
      };
    },
  };
}

function toolNotFound(tool: string, suggestions: string[], integrations: string): MetaToolResult {
  return {
    json: {
      error: 'Tool not found',
      code: DISCOVERY_TOOL_NOT_FOUND,
      tool,
      suggestions,
      hint: suggestions.length
        ? `No tool is named "${tool}". Did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?`
        : `No tool is named "${tool}" and none comes close. Integrations you can use: ${integrations || 'none'}. Use search_tools to find a tool.`,
    },
    isError: true,
  };
}

/** get_tool_schema for a meta-tool ("search_tools"): its schema, and that it is called directly. */
function metaToolAnswer(meta: MetaTool): MetaToolResult {
  return {
    json: {
      name: meta.name,
      metaTool: true,
      description: meta.description,
      inputSchema: metaToolJsonSchema(meta.inputSchema),
      hint: `"${meta.name}" is one of the gateway's own meta-tools, not a plugin tool: call it directly (tools/call "${meta.name}"), not through execute_tools.`,
    },
  };
}
