/**
 * @module host/discovery/search-tools
 * search_tools: the ranked, policy-filtered search, with the caller's connection state (which
 * also puts first, among tools doing the same job, those of integrations they have connected),
 * and the hints that keep an agent from taking a weak or partial match for what it asked.
 */
import * as z from 'zod';
import type { MetaTool, MetaToolResult } from '../meta-tools/types.js';
import type { User } from '../storage/users.js';
import type { CatalogTool } from './catalog-tool.js';
import { summariseIntegrations, type CatalogSnapshot, type IntegrationSummary } from './catalog-view.js';
import { connectionOf, trimDescription, WORKFLOW, type DiscoveryDeps } from './discovery-deps.js';
import { DEFAULT_LIMIT, isIntegrationNamed, MAX_LIMIT, type SearchHit, type SearchResult } from './search-index.js';
import { tokenizeRuns } from './tokenize.js';
import { isWeakMatch, weakMatchAdvice } from './weak-match.js';

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

const searchInput = z.strictObject({
  // trimmed first, so that a query of spaces is refused as empty instead of matching nothing
  query: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .describe('What you want to do, in plain words, e.g. "list open pull requests"'),
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

type SearchArgs = z.output<typeof searchInput>;
type ToolAnswer = { name: string; integration: string; description: string; score: number };

export function searchToolsTool(deps: DiscoveryDeps, view: () => CatalogSnapshot): MetaTool<typeof searchInput> {
  return {
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
      const connected = connectionCache(deps, ctx.user);
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
      if (tools.length > 0) return foundAnswer(tools, hits, found, known);
      return nothingFoundAnswer(args, integrations, found.unmatched, known);
    },
  };
}

/** Whether the caller is connected to an integration, asked once per integration and call. */
function connectionCache(deps: DiscoveryDeps, user: User): (integration: string) => Promise<boolean> {
  const connection = new Map<string, Promise<boolean>>();
  return (integration) => {
    let p = connection.get(integration);
    if (!p) {
      p = deps.isConnected(user, integration).catch(() => false);
      connection.set(integration, p);
    }
    return p;
  };
}

/** The tools found, with how many more match, and hints for words that matched nothing or a weak best match. */
function foundAnswer(
  tools: ToolAnswer[],
  hits: readonly SearchHit[],
  found: SearchResult,
  known: string,
): MetaToolResult {
  const { total, unmatched } = found;
  // weak when even the best match is (the caller's connections only put an equivalent of it first);
  // the advice speaks of the tool shown first, which may be that equivalent
  const first = hits[0];
  const weakAdvice =
    first !== undefined && isWeakMatch(found.hits[0]) ? weakMatchAdvice(first.entry.name, first.fit) : undefined;
  const hidden = total - tools.length;
  // the default 10 of "issue"'s 38 must not look like all there is
  const more =
    hidden <= 0
      ? {}
      : {
          more:
            `${hidden} more ${hidden === 1 ? 'tool matches' : 'tools match'}: ` +
            (total <= MAX_LIMIT
              ? `pass limit: ${total} to see all, or narrow the query.`
              : `narrow the query or pass integration (limit is at most ${MAX_LIMIT}).`),
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

/** No tool matched: why (an integration not available, no tools at all, or the words), and what there is. */
function nothingFoundAnswer(
  args: SearchArgs,
  integrations: IntegrationSummary[],
  unmatched: string[],
  known: string,
): MetaToolResult {
  const unknownIntegration =
    args.integration !== undefined &&
    !integrations.some((i) =>
      isIntegrationNamed({ integration: i.name, integrationDisplayName: i.displayName }, args.integration ?? ''),
    );
  const hint = unknownIntegration
    ? `No integration "${args.integration}" is available to you. Integrations you can use: ${known || 'none'}.`
    : integrations.length === 0
      ? 'No tools are available to you: ask an administrator which integrations your tenant may use.'
      : `No tool matched "${args.query}"${args.integration ? ` in ${args.integration}` : ''}. Try other words ` +
        `(a verb and an object, e.g. "create issue" or "send message")${args.integration ? ' or drop the integration filter' : ''}. ` +
        `Integrations you can use: ${known}.`;
  return { json: { tools: [], total: 0, ...(unmatched.length ? { unmatched } : {}), hint, integrations } };
}

/**
 * Whether the query names an installed integration ("github", "New Relic", "ＧｉｔＬａｂ",
 * "mergeGithubPullRequest"), by a word, a camelCase part or two words run together. A family name
 * ("google", "atlassian") or a word that is part of a name ("drive", "sheets") counts too.
 */
export function namesIntegration(
  query: string,
  integrations: ReadonlyArray<{ name: string; displayName: string }>,
): boolean {
  // the words as the index reads them: NFKC, camelCase parts beside the whole run
  const runs = tokenizeRuns(query.normalize('NFKC'));
  const wholes = runs.map((r) => r.whole);
  const candidates = [
    ...runs.flatMap((r) => [r.whole, ...r.parts]),
    ...wholes.slice(1).map((w, i) => `${wholes[i]}${w}`),
  ];
  return candidates.some((w) =>
    integrations.some((i) => isIntegrationNamed({ integration: i.name, integrationDisplayName: i.displayName }, w)),
  );
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
  const shared = [...places.values()].filter(
    (p) => p.length > 1 && new Set(p.map((i) => hits[i]?.entry.integration)).size > 1,
  );
  if (shared.length === 0) return [...hits];
  const states = new Map<string, boolean>();
  const integrations = new Set(shared.flatMap((p) => p.map((i) => hits[i]?.entry.integration ?? '')));
  await Promise.all([...integrations].map(async (i) => states.set(i, await connected(i))));
  const out = [...hits];
  for (const p of shared) {
    const members = p.map((i) => hits[i] as H);
    const ordered = [
      ...members.filter((h) => states.get(h.entry.integration)),
      ...members.filter((h) => !states.get(h.entry.integration)),
    ];
    p.forEach((place, k) => (out[place] = ordered[k] as H));
  }
  return out;
}
