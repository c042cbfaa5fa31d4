/**
 * @module host/registry/namespace
 * Who may name a tool what, so that a tool's name tells which plugin it comes from.
 *
 * - Every tool name of a plugin starts with the plugin's tool prefix: its name with each "-"
 *   written "_", or the same for the words after one of its "-", then "_" (plugin
 *   "atlassian-jira" may name its tools "atlassian_jira_…" or "jira_…"). All its tools share one
 *   prefix: the longest of these that fits them all.
 * - No tool takes the name of one of the gateway's own meta-tools.
 * - Two plugins clash (`clashOf`) when they have the same name, a tool name or a tool prefix in
 *   common, or when a tool of one lies inside the other's longer prefix ("github_enterprise_list"
 *   of plugin "github" beside plugin "github-enterprise"). plugin-set.ts decides what a clash costs.
 */
import type { PluginManifest } from '../../contracts/manifest.js';

type Named = Pick<PluginManifest, 'name' | 'tools'>;

/** The prefixes a plugin may give its tools, longest first: "a-b-c" → "a_b_c_", "b_c_", "c_". */
export function prefixChoices(pluginName: string): string[] {
  const words = pluginName.split('-');
  return words.map((_, i) => `${words.slice(i).join('_')}_`);
}

const within = (tool: string, prefix: string): boolean => tool.length > prefix.length && tool.startsWith(prefix);

/** The prefix all the manifest's tools start with (the longest choice that fits), or undefined. */
export function toolPrefixOf(manifest: Named): string | undefined {
  return prefixChoices(manifest.name).find((p) => manifest.tools.every((t) => within(t.name, p)));
}

const quoted = (names: readonly string[], max = 5): string =>
  names
    .slice(0, max)
    .map((n) => `"${n}"`)
    .join(', ') + (names.length > max ? ` and ${names.length - max} more` : '');

/** Why the manifest's tool names break the rules above, naming the tools; empty when they do not. */
export function namespaceProblems(manifest: Named, metaToolNames: readonly string[]): string[] {
  const problems: string[] = [];
  manifest.tools.forEach((t, i) => {
    if (metaToolNames.includes(t.name))
      problems.push(
        `tools.${i}.name: "${t.name}" is the name of one of the gateway's own meta-tools, which no plugin may take`,
      );
  });
  if (toolPrefixOf(manifest) === undefined) problems.push(prefixProblem(manifest));
  return problems;
}

function prefixProblem(manifest: Named): string {
  const choices = prefixChoices(manifest.name);
  // the choice most tools already fit (the longest among equals) is the one the others missed
  const fitting = (p: string): number => manifest.tools.filter((t) => within(t.name, p)).length;
  const best = choices.reduce((a, b) => (fitting(b) > fitting(a) ? b : a));
  const outside = manifest.tools.filter((t) => !within(t.name, best)).map((t) => t.name);
  return (
    `tools: every tool name of plugin "${manifest.name}" starts with one prefix, the same for all its tools: ${choices.map((p) => `"${p}"`).join(' or ')} ` +
    `(the plugin's name, or its last words, with "_" for "-"); ${quoted(outside)} ${outside.length === 1 ? 'does' : 'do'} not start with "${best}"`
  );
}

/** What `clashOf` compares: a plugin's name, folder, tool names and tool prefix. */
export interface NamespaceOwner {
  manifest: Pick<PluginManifest, 'name'>;
  tools: ReadonlyMap<string, unknown>;
  toolPrefix: string;
}

/** Why two plugins cannot both load, in words that name what they share; undefined when they can. */
export function clashOf(a: NamespaceOwner, b: NamespaceOwner): string | undefined {
  if (a.manifest.name === b.manifest.name) return `both are named "${a.manifest.name}"`;
  const shared = [...a.tools.keys()].filter((t) => b.tools.has(t));
  if (shared.length > 0) return `both define the tool${shared.length > 1 ? 's' : ''} ${quoted(shared)}`;
  if (a.toolPrefix === b.toolPrefix) return `both name their tools "${a.toolPrefix}…"`;
  return trespass(a, b) ?? trespass(b, a);
}

/** Tools of `a` inside the longer prefix of `b`, which would make them look like tools of `b`. */
function trespass(a: NamespaceOwner, b: NamespaceOwner): string | undefined {
  if (b.toolPrefix.length <= a.toolPrefix.length) return undefined;
  const inside = [...a.tools.keys()].filter((t) => t.startsWith(b.toolPrefix));
  if (inside.length === 0) return undefined;
  return `${quoted(inside)} of plugin "${a.manifest.name}" ${inside.length === 1 ? 'starts' : 'start'} with "${b.toolPrefix}", the tool prefix of plugin "${b.manifest.name}"`;
}
