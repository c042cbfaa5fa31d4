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
export function integrationsNamed(wanted: string, known: readonly NamedIntegration[]): string[] {
  return known
    .filter((i) => isIntegrationNamed({ integration: i.name, integrationDisplayName: i.displayName }, wanted))
    .map((i) => i.name)
    .sort();
}

/**
 * The name of the integration `wanted` most likely means, or undefined when none comes close or
 * when it names several ("atlassian", "google": see integrationsNamed).
 */
export function closestIntegration(wanted: string, known: readonly NamedIntegration[]): string | undefined {
  const named = integrationsNamed(wanted, known);
  if (named.length > 0) return named.length === 1 ? named[0] : undefined;
  const near = nearestIntegrations(wanted, known);
  return near.length === 1 ? near[0] : undefined;
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

/**
 * The integrations a name that is not one may mean, when it is more than one: those it names
 * ("google"), else those its typo is equally close to ("gogle"). Empty when it means one or none.
 */
export function integrationCandidates(wanted: string, known: readonly NamedIntegration[]): string[] {
  const named = integrationsNamed(wanted, known);
  const found = named.length > 0 ? named : nearestIntegrations(wanted, known);
  return found.length > 1 ? found : [];
}
