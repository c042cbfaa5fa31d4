/**
 * @module host/discovery/discovery-deps
 * What the discovery meta-tools need from the gateway, and what both answer about a tool: its
 * description, trimmed, and whether the caller is connected to its integration (or can be at all).
 */
import type { User } from '../storage/users.js';
import type { MetaTool } from '../meta-tools/types.js';
import type { CatalogTool } from './catalog-tool.js';

export interface DiscoveryDeps {
  /** every registered tool; return the same array until the catalog changes */
  catalog(): readonly CatalogTool[];
  /** the policy that gates execution: may this user run this tool? */
  isAllowed(user: User, tool: CatalogTool): boolean;
  /** does this user have a usable connection to the integration (always true for auth "none")? */
  isConnected(user: User, integration: string): Promise<boolean>;
  /** why connect cannot work for the integration on this server (no OAuth client), or undefined when it can */
  whyNotConnectable?(integration: string): string | undefined;
  /** every meta-tool the gateway serves (default: the two discovery ones), so that get_tool_schema can answer for them */
  metaTools?(): readonly MetaTool[];
}

export const DESCRIPTION_MAX_CHARS = 300;

export const WORKFLOW =
  'Workflow: 1) search_tools with what you want to do → 2) get_tool_schema for the tool you pick → ' +
  '3) execute_tools with arguments matching that schema → 4) if an execution returns NOT_CONNECTED, call ' +
  'connect with its integration, let the user finish, then run it again (unless the tool is marked ' +
  '`connectable: false`: then only an operator can set it up, and connect would fail).';

/** Shortens a description to about `max` characters, at a sentence or word boundary. */
export function trimDescription(text: string, max = DESCRIPTION_MAX_CHARS): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (clean.length <= max) return clean;
  const head = clean.slice(0, max);
  const sentence = Math.max(head.lastIndexOf('. '), head.lastIndexOf('; '));
  if (sentence >= max / 2) return head.slice(0, sentence + 1);
  const space = head.lastIndexOf(' ');
  return `${(space > max / 2 ? head.slice(0, space) : head).replace(/[,;:.\s]+$/, '')}…`;
}

/**
 * `connected`, and for an integration the user has not connected and cannot connect on this server,
 * `connectable: false` with `why` (so that no agent calls a connect that must fail).
 */
export async function connectionOf(
  deps: DiscoveryDeps,
  integration: string,
  connected: (integration: string) => Promise<boolean>,
): Promise<{ connected: boolean; connectable?: false; why?: string }> {
  if (await connected(integration)) return { connected: true };
  const why = deps.whyNotConnectable?.(integration);
  return why === undefined ? { connected: false } : { connected: false, connectable: false, why };
}
