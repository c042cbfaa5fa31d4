/**
 * @module host/builtins/jots
 * The jots built-in integration: its tools' handlers over the service (service.ts), and the links
 * its results give. A site's address is `<base>/jots/<id>/` and its share link
 * `<base>/jots/s/<token>/`, where the base is WORKBENCH_JOTS_URL when set (a separate origin,
 * recommended) or the gateway's public URL. The routes that serve them are
 * host/transport/jots-routes.ts; docs/builtins.md (Jots) describes both for users.
 */
import * as z from 'zod';
import { fail } from '../../../contracts/errors.js';
import type { JotsPolicy } from '../../policy/jots-policy.js';
import type { Db } from '../../storage/db.js';
import type { BuiltinHandler, BuiltinIntegration } from '../types.js';
import { JOTS_MANIFEST } from './manifest.js';
import { JotService } from './service.js';
import type { SiteRow } from './store.js';

export { JotService } from './service.js';

export interface Jots {
  integration: BuiltinIntegration;
  service: JotService;
  /** the origin (and path, for a public URL with one) site links start with, without a trailing "/" */
  base: string;
}

const file = z
  .object({ path: z.string(), content: z.string(), encoding: z.enum(['utf8', 'base64']).default('utf8') })
  .strict();
const id = z.string().min(1).max(64);
const ARGS = {
  deploy: z.object({ title: z.string().optional(), files: z.array(file).min(1), share: z.boolean().default(false) }),
  update: z.object({
    id,
    title: z.string().optional(),
    files: z.array(file).optional(),
    delete: z.array(z.string()).optional(),
  }),
  byId: z.object({ id }),
  share: z.object({ id, enabled: z.boolean() }),
};

/** Arguments the engine has validated against the manifest's schema (unless the policy let a schema error pass): checked again, strictly. */
function parse<T>(schema: z.ZodType<T>, args: unknown): T {
  const r = schema.safeParse(args);
  if (!r.success) throw fail('GW_ERR_VALIDATION_INVALID_ARGS', { message: z.prettifyError(r.error) });
  return r.data;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function createJots(o: { db: Db; policy: JotsPolicy; publicUrl: string; jotsUrl?: string }): Jots {
  const { enabled: _enabled, ...quotas } = o.policy;
  const service = new JotService(o.db, quotas);
  const base = (o.jotsUrl ?? o.publicUrl).replace(/\/+$/, '');
  const siteUrl = (siteId: string): string => `${base}/jots/${siteId}/`;
  const shareUrl = (token: string): string => `${base}/jots/s/${token}/`;
  const summary = (s: SiteRow): Record<string, unknown> => ({
    id: s.id,
    title: s.title,
    url: siteUrl(s.id),
    shared: s.shared,
    files: s.fileCount,
    bytes: s.bytes,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  });

  const handlers: Record<string, BuiltinHandler> = {
    async jots_deploy(call, args) {
      const a = parse(ARGS.deploy, args);
      const { site, shareToken: token } = await service.deploy(call.user, {
        files: a.files,
        share: a.share,
        ...(a.title !== undefined ? { title: a.title } : {}),
      });
      return {
        id: site.id,
        title: site.title,
        url: siteUrl(site.id),
        ...(token ? { shareUrl: shareUrl(token) } : {}),
        files: site.fileCount,
        bytes: site.bytes,
        access: token
          ? 'url: the owner only (signed in to the portal, or the API key header); shareUrl: anyone who has it'
          : 'private: the owner opens url signed in to the portal (or with the API key header); jots_share makes a link for others',
      };
    },
    async jots_update(call, args) {
      const a = parse(ARGS.update, args);
      const { site, written, deleted } = await service.update(call.user, {
        id: a.id,
        ...(a.title !== undefined ? { title: a.title } : {}),
        ...(a.files ? { files: a.files } : {}),
        ...(a.delete ? { delete: a.delete } : {}),
      });
      return { ...summary(site), written, deleted };
    },
    async jots_list_files(call, args) {
      const { site, files } = await service.listFiles(call.user, parse(ARGS.byId, args).id);
      return {
        id: site.id,
        url: siteUrl(site.id),
        files: files.map((f) => ({ ...f, updatedAt: iso(f.updatedAt) })),
      };
    },
    async jots_list(call) {
      const { sites, bytes } = await service.list(call.user);
      return {
        sites: sites.map(summary),
        usage: { sites: sites.length, maxSites: quotas.maxSitesPerUser, bytes, maxBytes: quotas.maxBytesPerUser },
      };
    },
    async jots_delete(call, args) {
      const siteId = parse(ARGS.byId, args).id;
      await service.remove(call.user, siteId);
      return { id: siteId, deleted: true };
    },
    async jots_share(call, args) {
      const a = parse(ARGS.share, args);
      const token = await service.share(call.user, a.id, a.enabled);
      return token ? { id: a.id, shared: true, shareUrl: shareUrl(token) } : { id: a.id, shared: false };
    },
  };

  return { integration: { manifest: JOTS_MANIFEST, handlers, close: async () => undefined }, service, base };
}
