/**
 * @module host/discovery/catalog-tool
 * The catalog as discovery sees it (one entry per registered plugin tool, taken from the
 * validated manifest), and how one tool becomes a search entry: its input schema contributes the
 * property names, their descriptions and their enum values.
 */
import type { SearchEntry } from './index-build.js';

export interface CatalogTool {
  name: string;
  integration: string;
  integrationDisplayName: string;
  description: string;
  /** JSON Schema of the arguments ("type": "object"), as served by get_tool_schema */
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown> | undefined;
}

const MAX_DEPTH = 2;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** "name: description values" for each property, descending into nested objects and arrays. */
function collectParameters(schema: unknown, out: string[], depth: number): void {
  if (!isRecord(schema) || depth > MAX_DEPTH) return;
  const props = schema['properties'];
  if (isRecord(props)) {
    for (const [name, prop] of Object.entries(props)) {
      const parts = [name];
      if (isRecord(prop)) {
        if (typeof prop['description'] === 'string') parts.push(prop['description']);
        const values = prop['enum'];
        if (Array.isArray(values)) parts.push(values.filter((v) => typeof v === 'string').join(' '));
        collectParameters(prop, out, depth + 1);
        collectParameters(prop['items'], out, depth + 1);
      }
      out.push(parts.join(' '));
    }
  }
}

/** The search entry for one catalog tool. */
export function toSearchEntry(tool: CatalogTool): SearchEntry {
  const parameters: string[] = [];
  collectParameters(tool.inputSchema, parameters, 0);
  return {
    name: tool.name,
    integration: tool.integration,
    integrationDisplayName: tool.integrationDisplayName,
    description: tool.description,
    parameters,
  };
}
