/**
 * @module host/discovery/integration-names
 * Which integration a caller meant by a name that is not one ("jira", "Atlassian Jira", "githb"):
 * the name, display name or one dash-separated part of the name, else the closest within a typo.
 * Used for "did you mean" on connect, disconnect and /rest/:integration, which never accept such a
 * name silently.
 */
import { editDistance, typoBudget } from './edit-distance.js';
import { isIntegrationNamed } from './search-index.js';

export interface NamedIntegration {
  name: string;
  displayName: string;
}

const norm = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

/**
 * Every integration `wanted` names by its name, display name or one dash-separated part of the
 * name, sorted: "google" names google-calendar, google-drive, google-gmail and google-sheets.
 */
function integrationsNamed(wanted: string, known: readonly NamedIntegration[]): string[] {
  return known
    .filter((i) => isIntegrationNamed({ integration: i.name, integrationDisplayName: i.displayName }, wanted))
    .map((i) => i.name)
    .sort();
}

/**
 * What a name that is not an integration's may mean: `didYouMean`, the one integration it names or
 * is a typo of; or, when it names or is as close to several ("google", "gogle"), all of them as
 * `candidates` (empty otherwise). Never a guess at one of several.
 */
export function guessIntegration(
  wanted: string,
  known: readonly NamedIntegration[],
): { didYouMean?: string; candidates: string[] } {
  const named = integrationsNamed(wanted, known);
  const found = named.length > 0 ? named : nearestIntegrations(wanted, known);
  if (found.length === 1) return { didYouMean: found[0] as string, candidates: [] };
  return { candidates: found };
}

/** The integrations closest to `wanted` within a typo (all those tied at the smallest distance), sorted. */
function nearestIntegrations(wanted: string, known: readonly NamedIntegration[]): string[] {
  const w = norm(wanted);
  let bestD = Infinity;
  let best = new Set<string>();
  for (const i of known) {
    for (const form of new Set([norm(i.name), norm(i.displayName), ...i.name.toLowerCase().split('-')])) {
      const budget = typoBudget(Math.min(w.length, form.length));
      const d = editDistance(w, form, budget);
      if (d > budget || d > bestD) continue;
      if (d < bestD) best = new Set();
      bestD = d;
      best.add(i.name);
    }
  }
  return [...best].sort();
}
