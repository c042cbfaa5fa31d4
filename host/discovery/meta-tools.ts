/**
 * @module host/discovery/meta-tools
 * The discovery meta-tools: `search_tools` (ranked, policy-filtered, with the caller's connection
 * state) and `get_tool_schema` (the validated manifest's JSON Schema, or "Tool not found" with
 * suggestions). A tool the caller may not run is never shown, and asking for its schema looks
 * exactly like asking for a tool that does not exist.
 */
import * as z from 'zod';
import type { User } from '../storage/users.js';
import { metaToolJsonSchema } from '../meta-tools/json-schema.js';
import type { MetaTool, MetaToolResult } from '../meta-tools/types.js';
import type { CatalogTool } from './catalog-tool.js';
import { createCatalogView, suggestToolNames, summariseIntegrations } from './catalog-view.js';
import { DEFAULT_LIMIT, isIntegrationNamed, MAX_LIMIT } from './search-index.js';
import { tokenizeRuns } from './tokenize.js';
import { isWeakMatch, weakMatchAdvice } from './weak-match.js';

export type { CatalogTool } from './catalog-tool.js';

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

/** Stable code of the "Tool not found" answer of get_tool_schema. */
export const DISCOVERY_TOOL_NOT_FOUND = 'GW_ERR_DISCOVERY_TOOL_NOT_FOUND';
export const DESCRIPTION_MAX_CHARS = 300;

const WORKFLOW =
  'Workflow: 1) search_tools with what you want to do → 2) get_tool_schema for the tool you pick → ' +
  '3) execute_tools with arguments matching that schema → 4) if an execution returns NOT_CONNECTED, call ' +
  'connect with its integration, let the user finish, then run it again (unless the tool is marked ' +
  '`connectable: false`: then only an operator can set it up, and connect would fail).';

export const SEARCH_TOOLS_DESCRIPTION =
  'Find the right tool among the integrations installed on this gateway, whether or not the user has connected them ' +
  '(e.g. GitHub, Slack, Jira, New Relic; list_integrations names them all). ' +
  'Describe the task in plain words — a verb and an object works best: "create a pull request", ' +
  '"post a message to a channel", "open incidents", "move ticket to done". Typos, plurals and synonyms ' +
  '(pr/pull request, ticket/issue, msg/message) are understood. Returns up to `limit` tools (default 10, ' +
  'max 50) and `total`, how many match in all, best first (tools doing the same job in several integrations, such as merging a pull request, ' +
  'list those of integrations the user has connected first), ' +
  'each with `score` (0-1 relevance) and `connected` (false: the user must connect ' +
  'that integration before it can run; with `connectable: false` and `why`, it cannot be connected on this ' +
  'server). Words that match no tool come back in `unmatched`, with a hint; a hint also warns when even the first result ' +
  'may not do what you asked, and says what it leaves out. Pass `integration` to search one ' +
  `integration only. Only tools you are allowed to run are listed. ${WORKFLOW}`;

export const GET_TOOL_SCHEMA_DESCRIPTION =
  'Get the exact input JSON Schema of one tool (argument names, types, required fields, defaults, ' +
  'allowed values and descriptions) so that you can call it with execute_tools. Pass the exact name ' +
  'returned by search_tools, e.g. "github_create_issue". An unknown name returns "Tool not found" with ' +
  `the closest tool names as suggestions. ${WORKFLOW}`;

const searchInput = z.strictObject({
  // trimmed first, so that a query of spaces is refused as empty instead of matching nothing
  query: z.string().trim().min(1).max(500).describe('What you want to do, in plain words, e.g. "list open pull requests"'),
  integration: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe('Only tools of this integration, e.g. "github" or "slack"'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .default(DEFAULT_LIMIT)
    .describe(`How many tools to return (1-${MAX_LIMIT}, default ${DEFAULT_LIMIT})`),
});

const schemaInput = z.strictObject({
  tool: z.string().trim().min(1).max(200).describe('The exact tool name, as returned by search_tools'),
});

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

/**
 * `connected`, and for an integration the user has not connected and cannot connect on this server,
 * `connectable: false` with `why` (so that no agent calls a connect that must fail).
 */
async function connectionOf(
  deps: DiscoveryDeps,
  integration: string,
  connected: (integration: string) => Promise<boolean>,
): Promise<{ connected: boolean; connectable?: false; why?: string }> {
  if (await connected(integration)) return { connected: true };
  const why = deps.whyNotConnectable?.(integration);
  return why === undefined ? { connected: false } : { connected: false, connectable: false, why };
}

/**
 * Whether the query names an installed integration ("github", "New Relic", "ＧｉｔＬａｂ",
 * "mergeGithubPullRequest"), by a word, a camelCase part or two words run together. A family name
 * ("google", "atlassian") or a word that is part of a name ("drive", "sheets") counts too.
 */
export function namesIntegration(query: string, integrations: ReadonlyArray<{ name: string; displayName: string }>): boolean {
  // the words as the index reads them: NFKC, camelCase parts beside the whole run
  const runs = tokenizeRuns(query.normalize('NFKC'));
  const wholes = runs.map((r) => r.whole);
  const candidates = [...runs.flatMap((r) => [r.whole, ...r.parts]), ...wholes.slice(1).map((w, i) => `${wholes[i]}${w}`)];
  return candidates.some((w) => integrations.some((i) => isIntegrationNamed({ integration: i.name, integrationDisplayName: i.displayName }, w)));
}

/**
 * The hits with, among tools that do the same job in different integrations (the same action and
 * object in their names: github_merge_pull_request, gitlab_merge_merge_request), those of
 * integrations the user has connected first. Such tools trade places only with each other, in
 * the places the job's tools hold in the relevance order; every other tool keeps its place, and
 * each keeps its own score.
 */
async function preferConnected<H extends { entry: { integration: string }; job: string }>(
  hits: readonly H[],
  connected: (integration: string) => Promise<boolean>,
): Promise<H[]> {
  const places = new Map<string, number[]>();
  hits.forEach((h, i) => {
    const p = places.get(h.job);
    if (p) p.push(i);
    else places.set(h.job, [i]);
  });
  const shared = [...places.values()].filter((p) => p.length > 1 && new Set(p.map((i) => hits[i]?.entry.integration)).size > 1);
  if (shared.length === 0) return [...hits];
  const states = new Map<string, boolean>();
  const integrations = new Set(shared.flatMap((p) => p.map((i) => hits[i]?.entry.integration ?? '')));
  await Promise.all([...integrations].map(async (i) => states.set(i, await connected(i))));
  const out = [...hits];
  for (const p of shared) {
    const members = p.map((i) => hits[i] as H);
    const ordered = [...members.filter((h) => states.get(h.entry.integration)), ...members.filter((h) => !states.get(h.entry.integration))];
    p.forEach((place, k) => (out[place] = ordered[k] as H));
  }
  return out;
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

/** The discovery meta-tools, in tools/list order. */
export function createDiscoveryMetaTools(deps: DiscoveryDeps): MetaTool[] {
  const view = createCatalogView(() => deps.catalog());

  const searchTools: MetaTool<typeof searchInput> = {
    name: 'search_tools',
    order: 10,
    title: 'Search tools',
    description: SEARCH_TOOLS_DESCRIPTION,
    inputSchema: searchInput,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    async handler(ctx, args) {
      const snapshot = view();
      const allowed = (t: CatalogTool): boolean => deps.isAllowed(ctx.user, t);
      const filter = (e: { name: string }): boolean => {
        const t = snapshot.byName.get(e.name);
        return t !== undefined && allowed(t);
      };
      const integrations = summariseIntegrations(snapshot.tools, allowed);
      // the connection state reorders only when the query leaves the product open: "merge the pull
      // request" may mean GitHub or GitLab, "merge the github pull request" does not
      const byConnection = args.integration === undefined && !namesIntegration(args.query, integrations);
      const found = snapshot.index.query(args.query, {
        ...(args.integration !== undefined ? { integration: args.integration } : {}),
        limit: byConnection ? MAX_LIMIT : args.limit,
        filter,
      });
      const { total, unmatched } = found;
      const connection = new Map<string, Promise<boolean>>();
      const connected = (integration: string): Promise<boolean> => {
        let p = connection.get(integration);
        if (!p) {
          p = deps.isConnected(ctx.user, integration).catch(() => false);
          connection.set(integration, p);
        }
        return p;
      };
      const hits = byConnection ? (await preferConnected(found.hits, connected)).slice(0, args.limit) : found.hits;
      const tools = await Promise.all(
        hits.map(async (h) => ({
          name: h.entry.name,
          integration: h.entry.integration,
          description: trimDescription(h.entry.description),
          score: h.score,
          ...(await connectionOf(deps, h.entry.integration, connected)),
        })),
      );
      const known = integrations.map((i) => `${i.name} (${i.displayName}, ${i.tools} tools)`).join(', ');
      if (tools.length > 0) {
        // weak when even the best match is (the caller's connections only put an equivalent of it first);
        // the advice speaks of the tool shown first, which may be that equivalent
        const first = hits[0];
        const weakAdvice = first !== undefined && isWeakMatch(found.hits[0]) ? weakMatchAdvice(first.entry.name, first.fit) : undefined;
        const hidden = total - tools.length;
        // the default 10 of "issue"'s 38 must not look like all there is
        const more =
          hidden <= 0
            ? {}
            : {
                more:
                  `${hidden} more ${hidden === 1 ? 'tool matches' : 'tools match'}: ` +
                  (total <= MAX_LIMIT ? `pass limit: ${total} to see all, or narrow the query.` : `narrow the query or pass integration (limit is at most ${MAX_LIMIT}).`),
              };
        if (unmatched.length === 0 && weakAdvice === undefined) return { json: { tools, total, ...more } };
        // the agent must learn that "gitlab" or "confluence" is not here, not take GitHub's tool for it
        const words = unmatched.map((w) => `"${w}"`).join(', ');
        const absent = unmatched.length
          ? `${unmatched.length === 1 ? 'The word' : 'The words'} ${words} matched no tool: these results match only the rest of ` +
            `the query. If ${unmatched.length === 1 ? 'it names' : 'one names'} a product or service, no integration for it is ` +
            'available here.'
          : undefined;
        const hint = `${[absent, weakAdvice].filter((s) => s !== undefined).join(' ')} Integrations you can use: ${known}.`;
        return { json: { tools, total, ...more, ...(unmatched.length ? { unmatched } : {}), hint } };
      }
      const unknownIntegration =
        args.integration !== undefined &&
        !integrations.some((i) => isIntegrationNamed({ integration: i.name, integrationDisplayName: i.displayName }, args.integration ?? ''));
      const hint = unknownIntegration
        ? `No integration "${args.integration}" is available to you. Integrations you can use: ${known || 'none'}.`
        : integrations.length === 0
          ? 'No tools are available to you: ask an administrator which integrations your tenant may use.'
          : `No tool matched "${args.query}"${args.integration ? ` in ${args.integration}` : ''}. Try other words ` +
            `(a verb and an object, e.g. "create issue" or "send message")${args.integration ? ' or drop the integration filter' : ''}. ` +
            `Integrations you can use: ${known}.`;
      return { json: { tools: [], total: 0, ...(unmatched.length ? { unmatched } : {}), hint, integrations } };
    },
  };

  const getToolSchema: MetaTool<typeof schemaInput> = {
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
        const meta = (deps.metaTools?.() ?? [searchTools, getToolSchema]).find((m) => m.name === wanted.toLowerCase());
        if (meta) return metaToolAnswer(meta);
        const suggestions = suggestToolNames(snapshot, wanted, allowed);
        const known = suggestions.length ? '' : summariseIntegrations(snapshot.tools, allowed).map((i) => `${i.name} (${i.displayName})`).join(', ');
        return toolNotFound(args.tool, suggestions, known);
      }
      const connected = (integration: string): Promise<boolean> => deps.isConnected(ctx.user, integration).catch(() => false);
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

  return [searchTools, getToolSchema];
}
