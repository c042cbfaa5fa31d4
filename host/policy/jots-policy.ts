/**
 * @module host/policy/jots-policy
 * The policy's `builtins.jots` section: whether the jots built-in serves, and its quotas per user
 * (host/builtins/jots). Every key may be left out. Sizes are of the decoded file bytes. One call's
 * files also come within the integration's argument limit (`plugins.jots.limits.maxArgsBytes`,
 * 256 KiB by default): a site larger than that is built by a deploy and then updates.
 */
import * as z from 'zod';

const MIB = 1024 * 1024;

export const jotsPolicySchema = z
  .object({
    /** serve the jots tools and sites */
    enabled: z.boolean().default(true),
    /** sites one user may have at once (default 20) */
    maxSitesPerUser: z.number().int().min(1).max(100_000).default(20),
    /** files one site may hold (default 200) */
    maxFilesPerSite: z.number().int().min(1).max(100_000).default(200),
    /** the largest file, bytes (default 1 MiB) */
    maxFileBytes: z
      .number()
      .int()
      .min(1)
      .max(256 * MIB)
      .default(MIB),
    /** one site's files together, bytes (default 5 MiB) */
    maxSiteBytes: z
      .number()
      .int()
      .min(1)
      .max(4096 * MIB)
      .default(5 * MIB),
    /** all of one user's sites together, bytes (default 25 MiB) */
    maxBytesPerUser: z
      .number()
      .int()
      .min(1)
      .max(64 * 1024 * MIB)
      .default(25 * MIB),
  })
  .strict();

export type JotsPolicy = z.infer<typeof jotsPolicySchema>;
