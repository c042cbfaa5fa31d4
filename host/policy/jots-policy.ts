/**
 * @module host/policy/jots-policy
 * The policy's `builtins.jots` section: whether the jots built-in serves, and its quotas
 * (host/builtins/jots). Every key may be left out.
 */
import * as z from 'zod';

export const jotsPolicySchema = z
  .object({
    /** serve the jots tools and sites */
    enabled: z.boolean().default(true),
  })
  .strict();

export type JotsPolicy = z.infer<typeof jotsPolicySchema>;
