/**
 * @module host/policy/browser-policy
 * The policy's `builtins.browser` section: whether the browser built-in serves, and its limits
 * (host/builtins/browser). Every key may be left out.
 */
import * as z from 'zod';

export const browserPolicySchema = z
  .object({
    /** serve the browser tools (when Chromium is found; see docs/operations.md) */
    enabled: z.boolean().default(true),
  })
  .strict();

export type BrowserPolicy = z.infer<typeof browserPolicySchema>;
