/**
 * @module plugins/atlassian-confluence/src/shape
 * Confluence's objects as the tools return them, with links on the site's wiki.
 */
import { enc } from 'workbench/plugin-sdk';
import type { Site } from './api.js';

export type Links = { webui?: unknown } | undefined;

export type RawVersion = { number?: number; createdAt?: string; authorId?: string; message?: string };
type Storage = { body?: { storage?: { value?: string } } };
type Common = { id: string; status?: string; authorId?: string; createdAt?: string; _links?: Links };
export type RawSpace = Common & {
  key: string;
  name?: string;
  type?: string;
  description?: { plain?: { value?: string } };
  homepageId?: string;
};
export type RawPage = Common & Storage & { title?: string; spaceId?: string; parentId?: string; version?: RawVersion };

/** The page's own link, or null. */
export const webUrl = (site: Site, links: Links): string | null =>
  links && typeof links.webui === 'string' ? `${site.wiki}${links.webui}` : null;

/** A link to a page by id, which works without knowing its space or title. */
export const pageUrl = (site: Site, id: string): string => `${site.wiki}/pages/viewpage.action?pageId=${enc(id)}`;

export const versionOf = (v: RawVersion | undefined) =>
  v && typeof v === 'object'
    ? {
        number: v.number ?? null,
        createdAt: v.createdAt ?? null,
        authorId: v.authorId ?? null,
        message: v.message || '',
      }
    : null;

/** Search's highlight marks taken out. */
export const stripHighlight = (s: unknown): string => String(s || '').replace(/@@@(?:end)?hl@@@/g, '');

/** The storage body of a page or comment, or ''. */
export const storageOf = (p: Storage): string => (p.body && p.body.storage ? String(p.body.storage.value || '') : '');

export function slimSpace(s: RawSpace, site: Site) {
  return {
    id: s.id,
    key: s.key,
    name: s.name,
    type: s.type ?? null,
    status: s.status ?? null,
    description: s.description && s.description.plain ? String(s.description.plain.value || '').trim() : '',
    homepageId: s.homepageId ?? null,
    url: webUrl(site, s._links) || `${site.wiki}/spaces/${enc(s.key)}`,
  };
}

export function slimPage(p: RawPage, site: Site) {
  return {
    id: p.id,
    title: p.title,
    status: p.status ?? null,
    spaceId: p.spaceId ?? null,
    parentId: p.parentId ?? null,
    version: p.version ? (p.version.number ?? null) : null,
    updated: p.version ? (p.version.createdAt ?? null) : null,
    url: webUrl(site, p._links) || pageUrl(site, p.id),
  };
}
