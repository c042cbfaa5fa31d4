/**
 * @module host/discovery/catalog-view
 * A search index over the catalog that rebuilds itself lazily when the catalog array changes
 * identity (the registry hands out a new array on every plugin change), plus the helpers that
 * answer "did you mean …" and "which integrations are there" for one caller.
 */
import { toSearchEntry, type CatalogTool } from './catalog-tool.js';
import { editDistance } from './edit-distance.js';
import { createSearchIndex, type SearchIndex } from './search-index.js';

export interface CatalogSnapshot {
  tools: readonly CatalogTool[];
  byName: ReadonlyMap<string, CatalogTool>;
  index: SearchIndex;
}

export interface IntegrationSummary {
  name: string;
  displayName: string;
  tools: number;
}

/** Returns a function that gives the current snapshot, rebuilding it only when needed. */
export function createCatalogView(catalog: () => readonly CatalogTool[]): () => CatalogSnapshot {
  let snapshot: CatalogSnapshot | undefined;
  return () => {
    const tools = catalog();
    if (snapshot?.tools !== tools) {
      snapshot = {
        tools,
        byName: new Map(tools.map((t) => [t.name, t])),
        index: createSearchIndex(tools.map(toSearchEntry)),
      };
    }
    return snapshot;
  };
}

/** Integrations that have at least one tool `allowed`, by name. */
export function summariseIntegrations(
  tools: readonly CatalogTool[],
  allowed: (t: CatalogTool) => boolean,
): IntegrationSummary[] {
  const byName = new Map<string, IntegrationSummary>();
  for (const t of tools) {
    if (!allowed(t)) continue;
    const s = byName.get(t.integration);
    if (s) s.tools++;
    else byName.set(t.integration, { name: t.integration, displayName: t.integrationDisplayName, tools: 1 });
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * A search hit below this score is no suggestion: "google_drive_upload" matches only "upload", and
 * offering github_add_issue_comment for it misleads more than it helps.
 */
export const SUGGESTION_MIN_SCORE = 0.15;

/**
 * Up to `max` allowed tool names close to `wanted`: first those within a small edit distance
 * (closest first), then the best search hits for the name read as words that score at least
 * {@link SUGGESTION_MIN_SCORE}.
 */
export function suggestToolNames(
  snapshot: CatalogSnapshot,
  wanted: string,
  allowed: (t: CatalogTool) => boolean,
  max = 5,
): string[] {
  const w = wanted.trim().toLowerCase();
  const budget = Math.max(2, Math.floor(w.length / 4));
  const close: { name: string; d: number }[] = [];
  for (const t of snapshot.tools) {
    if (!allowed(t)) continue;
    const d = editDistance(w, t.name, budget);
    if (d <= budget) close.push({ name: t.name, d });
  }
  close.sort((a, b) => a.d - b.d || (a.name < b.name ? -1 : 1));
  const out = close.slice(0, max).map((c) => c.name);
  if (out.length < max && w !== '') {
    const filter = (e: { name: string }): boolean => {
      const t = snapshot.byName.get(e.name);
      return t !== undefined && allowed(t);
    };
    for (const hit of snapshot.index.search(w.slice(0, 500), { limit: max, filter })) {
      if (out.length >= max || hit.score < SUGGESTION_MIN_SCORE) break;
      if (!out.includes(hit.entry.name)) out.push(hit.entry.name);
    }
  }
  return out;
}
