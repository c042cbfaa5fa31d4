/**
 * @module test/helpers/mcp-call
 * One meta-tool call over an MCP client, read the way the discovery tests read answers: the JSON of
 * its first text block, and whether the call was an error.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

// Assertions read arbitrary JSON.
export async function callJson(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ json: any; isError: boolean }> {
  const res = await client.callTool({ name, arguments: args });
  const content = res.content as { type: string; text: string }[];
  return { json: JSON.parse(content[0]?.text ?? 'null'), isError: res.isError === true };
}
