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
  const w = norm(wanted);
  let best: { name: string; d: number } | undefined;
  for (const i of known) {
    for (const form of new Set([norm(i.name), norm(i.displayName), ...i.name.toLowerCase().split('-')])) {
      const budget = typoBudget(Math.min(w.length, form.length));
      const d = editDistance(w, form, budget);
      if (d <= budget && (!best || d < best.d)) best = { name: i.name, d };
    }
  }
  return best?.name;
}
