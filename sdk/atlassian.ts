/**
 * @module sdk/atlassian
 * What the Atlassian Cloud plugins share: which site a call acts on. An Atlassian OAuth token may
 * reach several sites (cloud ids), listed by GET https://api.atlassian.com/oauth/token/accessible-resources
 * as `[{id, url, name, scopes}]`; the plugin asks for that list with its own client, and
 * atlassianSite picks the site from it: the one the connection's `site` setting names, else the first.
 */

/** An Atlassian Cloud site: its cloud id (the `/ex/{product}/{id}` of API URLs), name and base URL (no trailing /). */
export interface AtlassianSite {
  id: string;
  name: string | null;
  url: string;
}

export interface AtlassianSiteOptions {
  /** the product whose sites count (`jira`, `confluence`): a site one of whose scopes contains it; when none has, every site */
  product: string;
  /** the connection's `site` setting (`ctx.config.site`): a site URL, host, the host's first label, the site name or its cloud id; ignored unless a non-empty string */
  wanted: unknown;
  /** the words when the list has no site at all */
  none: string;
  /** the words when no site matches `wanted` (trimmed); `reachable` lists the sites' URLs (else names), comma-separated */
  unmatched: (wanted: string, reachable: string) => string;
}

interface Resource {
  id: string;
  url?: string;
  name?: string;
  scopes?: unknown;
}

const normSite = (s: unknown): string =>
  String(s || '')
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/\/+$/, '');

/** The site a call acts on, from the accessible-resources answer (any other answer is no site); throws an Error in the plugin's words. */
export function atlassianSite(
  resources: unknown,
  { product, wanted: setting, none, unmatched }: AtlassianSiteOptions,
): AtlassianSite {
  const all = (Array.isArray(resources) ? (resources as unknown[]) : []).filter(
    (s): s is Resource => !!s && typeof (s as Resource).id === 'string',
  );
  const ofProduct = all.filter(
    (s) => Array.isArray(s.scopes) && (s.scopes as unknown[]).some((x) => String(x).includes(product)),
  );
  const pool = ofProduct.length ? ofProduct : all;
  if (!pool.length) throw new Error(none);
  const wanted = typeof setting === 'string' ? setting.trim() : '';
  let site = pool[0]!;
  if (wanted) {
    const w = normSite(wanted);
    const found = pool.find((s) => {
      const host = normSite(s.url);
      return s.id === wanted || host === w || host.split('.')[0] === w || String(s.name || '').toLowerCase() === w;
    });
    if (!found) throw new Error(unmatched(wanted, pool.map((s) => s.url || s.name).join(', ')));
    site = found;
  }
  return { id: site.id, name: site.name || null, url: String(site.url || '').replace(/\/+$/, '') };
}
