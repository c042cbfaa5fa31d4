/**
 * @module host/policy/schema
 * The policy file: limits, egress, tenancy, result cap, sign-in. Every key may be left out; the default is
 * written next to it. A file that does not validate stops start-up with a message naming the field.
 * One file on purpose (a little over 400 lines): the whole shape of the policy file, each key beside
 * its default, as docs/policies.md lists them; the built-ins' sections are files of their own.
 */
import { browserPolicySchema } from './browser-policy.js';
import { jotsPolicySchema } from './jots-policy.js';
import * as z from 'zod';
import { parseCidrs } from '../bridge/index.js';
import { hostNameSchema } from '../../contracts/manifest.js';
import { validateTenant } from '../storage/users.js';

/**
 * Entries are matched exactly (or "*" for all): a pattern or a stray space would load and match
 * nothing, so a deny rule meant as "echo_*" or " github" would silently allow.
 */
const ruleList = z
  .array(
    z
      .string()
      .min(1)
      .max(200)
      .refine(
        (e) => e === '*' || /^[a-z0-9][a-z0-9_.-]*$/.test(e),
        'must be a plugin or tool name (lower case, exact: no patterns or spaces) or "*"',
      ),
  )
  .default([]);

const isCidr = (c: string): boolean => {
  try {
    parseCidrs([c]);
    return true;
  } catch {
    return false;
  }
};

/** A tenant rule: a plugin or tool is usable iff it matches an allow entry (or allow is empty)
 *  and no deny entry. Deny wins. Entries are plugin names, tool names, or "*". */
export const tenantRuleSchema = z
  .object({
    allowPlugins: ruleList,
    denyPlugins: ruleList,
    allowTools: ruleList,
    denyTools: ruleList,
  })
  .strict();
export type TenantRule = z.infer<typeof tenantRuleSchema>;

const limitsSchema = z
  .object({
    /** isolate heap per plugin isolate, MiB (default 64; at least 16) */
    memoryMb: z.number().int().min(16).max(4096).default(64),
    /** CPU time per host→isolate call, ms (default 1000) */
    cpuMsPerCall: z.number().int().min(10).max(600_000).default(1000),
    /** wall-clock deadline of one tool call, ms (default 30000) */
    wallMsPerCall: z.number().int().min(50).max(3_600_000).default(30_000),
    /** largest handler result, bytes (default 8 MiB) */
    maxResultBytes: z
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(8 * 1024 * 1024),
    /** largest arguments object, bytes (default 256 KiB) */
    maxArgsBytes: z
      .number()
      .int()
      .min(256)
      .max(64 * 1024 * 1024)
      .default(256 * 1024),
    /** ctx.http requests per call (default 25) */
    maxRequestsPerCall: z.number().int().min(0).max(10_000).default(25),
  })
  .strict();

type LimitsShape = typeof limitsSchema.shape;
/**
 * A plugin's overrides of limits: the same fields and ranges, each optional and WITHOUT its default
 * (limitsSchema.partial() keeps the defaults in zod 4, and an override of one limit then reset every
 * other limit of the plugin to its default, over the policy's own `limits`).
 */
const limitsOverrideSchema = z
  .object(
    Object.fromEntries(Object.entries(limitsSchema.shape).map(([key, field]) => [key, field.unwrap().optional()])) as {
      [K in keyof LimitsShape]: z.ZodOptional<ReturnType<LimitsShape[K]['unwrap']>>;
    },
  )
  .strict();

/**
 * `http.maxBufferedBytes` when the policy leaves it out: 32 responses of the default 8 MiB cap at
 * once, more than one call can make (25 requests), for a host peak of about 1 GiB of RSS under a
 * flood of large bodies (measured: docs/security.md, sizing the host's memory).
 */
export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;

const httpSchema = z
  .object({
    /** timeout of each outbound request, ms (default 15000) */
    requestTimeoutMs: z.number().int().min(10).max(600_000).default(15_000),
    /** response body cap, bytes (default 8 MiB) */
    maxResponseBytes: z
      .number()
      .int()
      .min(1024)
      .max(512 * 1024 * 1024)
      .default(8 * 1024 * 1024),
    /** request body cap, bytes (default 1 MiB) */
    maxRequestBodyBytes: z
      .number()
      .int()
      .min(0)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    /** redirect hops (default 3) */
    maxRedirects: z.number().int().min(0).max(10).default(3),
    /** CIDRs that may be reached although private/loopback (default none) */
    allowPrivateCidrs: z
      .array(
        z
          .string()
          .min(1)
          .refine((c) => isCidr(c), 'must be an IP address or CIDR range, e.g. "10.0.0.0/8"'),
      )
      .default([]),
    /** hosts refused even when declared, matched exactly (default none) */
    denyHosts: z.array(hostNameSchema).default([]),
    /**
     * a connection's own instance (GitLab self-managed, …) may be an http:// origin: its credential
     * then crosses the network unencrypted (default false: https only)
     */
    allowHttpInstances: z.boolean().default(false),
    /**
     * response body bytes the bridge holds at once, all calls together (default 256 MiB, or
     * maxResponseBytes when that is larger; at least maxResponseBytes)
     */
    maxBufferedBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024 * 1024)
      .optional(),
  })
  .strict()
  .superRefine((h, ctx) => {
    if (h.maxBufferedBytes !== undefined && h.maxBufferedBytes < h.maxResponseBytes)
      ctx.addIssue({
        code: 'custom',
        path: ['maxBufferedBytes'],
        message: `must be at least http.maxResponseBytes (${h.maxResponseBytes}): a response of the largest size must fit in it`,
      });
  })
  // left out, it follows maxResponseBytes up, so that a policy raising only that still loads
  .transform((h) => ({
    ...h,
    maxBufferedBytes: h.maxBufferedBytes ?? Math.max(DEFAULT_MAX_BUFFERED_BYTES, h.maxResponseBytes),
  }));

const sandboxSchema = z
  .object({
    /** worker threads in the sandbox process (default 8) */
    workers: z.number().int().min(1).max(64).default(8),
    /** calls one worker may hold at once; calls parked on ctx.http give their CPU slot back (default 4) */
    callsPerWorker: z.number().int().min(1).max(64).default(4),
    /** "per-call": a fresh V8 context per call (default); "per-tenant": one context per tenant and plugin */
    contextMode: z.enum(['per-call', 'per-tenant']).default('per-call'),
    /** calls waiting for a worker before new ones are refused (default 2000) */
    maxQueue: z.number().int().min(1).max(1_000_000).default(2000),
    /** sandbox crashes attributed to one plugin within quarantineWindowMs before it is suspended (default 3) */
    quarantineAfterCrashes: z.number().int().min(1).max(1000).default(3),
    /** default 10 minutes */
    quarantineWindowMs: z.number().int().min(1000).default(600_000),
    /** largest share of the workers one plugin may occupy at once, 0..1 (default 0.5) */
    maxWorkerShare: z.number().min(0.05).max(1).default(0.5),
    /** largest share of the calls in flight, and of the queue, one user may hold at once, 0..1 (default 0.5) */
    maxUserShare: z.number().min(0.01).max(1).default(0.5),
  })
  .strict();

const requestsSchema = z
  .object({
    /** executions in one batch (default 50) */
    maxBatch: z.number().int().min(1).max(1000).default(50),
    /** HTTP request body, bytes (default 4 MiB) */
    bodyLimitBytes: z
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(4 * 1024 * 1024),
    /** how long a client may take to send a whole request (headers and body), ms; past it 408 and the connection is closed (default 120000) */
    receiveTimeoutMs: z.number().int().min(1000).max(3_600_000).default(120_000),
    /** POST requests (/mcp, /rest/:integration) one user may have in flight on a server at once; past it 429 (default 128) */
    maxInFlightPerUser: z.number().int().min(1).max(1_000_000).default(128),
    /** total bytes of handler results in one batch; items past it fail with GW_ERR_RESULT_BATCH_TOO_LARGE (default 32 MiB) */
    maxBatchResultBytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(32 * 1024 * 1024),
    /** per-user executions per minute, 0 = unlimited (default 0) */
    perUserPerMinute: z.number().int().min(0).default(0),
    /** per-tenant executions per minute, 0 = unlimited (default 0) */
    perTenantPerMinute: z.number().int().min(0).default(0),
    /**
     * per-user calls per minute of the meta-tools other than execute_tools (whose executions count
     * above) and continue_tool_result (paging a stored result), 0 = unlimited (default 600)
     */
    metaCallsPerUserPerMinute: z.number().int().min(0).default(600),
  })
  .strict();

const resultCapSchema = z
  .object({
    /** characters of text returned to an MCP client (default 60000) */
    maxChars: z.number().int().min(1000).max(10_000_000).default(60_000),
    /** how long an oversized result can be continued, seconds (default 3600) */
    continuationTtlSec: z
      .number()
      .int()
      .min(10)
      .max(7 * 86400)
      .default(3600),
    /** characters of oversized results one user may have stored at once, until they expire (default 256 Mi) */
    maxStoredCharsPerUser: z
      .number()
      .int()
      .min(100_000)
      .max(2 ** 40)
      .default(256 * 1024 * 1024),
  })
  .strict();

/** The most days audit.retentionDays may say (about a century): the cutoff stays a real date. */
export const MAX_RETENTION_DAYS = 36_500;
const RETENTION_DAYS_PROBLEM = `must be a whole number of days from 0 to ${MAX_RETENTION_DAYS}: audit rows older than that many days are deleted (0, the default, keeps them for ever)`;

/** days an audit row is kept in the database; 0 = for ever (default) */
const retentionDaysSchema = z
  .number({ error: RETENTION_DAYS_PROBLEM })
  .int({ error: RETENTION_DAYS_PROBLEM })
  .min(0, { error: RETENTION_DAYS_PROBLEM })
  .max(MAX_RETENTION_DAYS, { error: RETENTION_DAYS_PROBLEM })
  .default(0);

const ALLOW_SVG_PROBLEM =
  'must be true or false: true shows SVG images that hold no active content (scripts, event handlers, external references); false, the default, refuses every SVG image';

/** which images a result may carry beyond PNG, JPEG, GIF and WebP */
const imagesSchema = z
  .object({
    /** SVG images without active content are shown; with it, or when false (default), refused */
    allowSvg: z.boolean({ error: ALLOW_SVG_PROBLEM }).default(false),
  })
  .strict();

/** Workbench as the OAuth 2.1 authorization server of its own /mcp (host/oauth-server; docs/security.md) */
const oauthServerSchema = z
  .object({
    /** serve the metadata, /authorize, /token, /register and /revoke, and take access tokens on /mcp (default true) */
    enabled: z.boolean().default(true),
    /** lifetime of an access token, seconds (default 3600) */
    accessTokenTtlSec: z.number().int().min(60).max(86_400).default(3600),
    /** lifetime of a refresh token, seconds; each refresh issues a new one (default 30 days) */
    refreshTokenTtlSec: z
      .number()
      .int()
      .min(3600)
      .max(365 * 86_400)
      .default(30 * 86_400),
    /** Dynamic Client Registration (RFC 7591) at /register (default true) */
    dynamicRegistration: z.boolean().default(true),
    /** https client_ids whose metadata document Workbench fetches (default true) */
    clientIdMetadataDocuments: z.boolean().default(true),
    /** registrations and client metadata document fetches one address may cause per hour (default 20) */
    registrationsPerHourPerAddress: z.number().int().min(1).max(1_000_000).default(20),
  })
  .strict();

const originSchema = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === s.replace(/\/$/, '');
  } catch {
    return false;
  }
}, 'must be an origin like "https://api.github.com" (scheme, host and optional port; no path)');

/** An email domain as it is compared: lower case, exact (a subdomain is a domain of its own). */
const emailDomainSchema = z
  .string()
  .max(253)
  .regex(
    /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/,
    'must be an email domain in lower case, e.g. "example.com" (matched exactly: a subdomain is listed on its own)',
  );

const claimNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_:./-]+$/, 'must be a claim name, e.g. "groups" or "https://example.com/roles"');

const tenantNameSchema = z.string().refine((t) => validateTenant(t) === undefined, {
  message: 'must be a tenant name: 1-63 characters of a-z, 0-9, "-" and "_", starting with a letter or digit',
});

/**
 * Who may sign in with the OpenID Connect provider (WORKBENCH_OIDC_ISSUER), who gets an account on
 * a first sign-in, and in which tenant (evaluated by host/policy/sign-in.ts). Every sign-in needs an
 * email (verified, unless requireVerifiedEmail is false), in an allowed domain when the list is set,
 * with the required claim when one is set. New users are created only when allowedDomains or
 * requiredClaim is set; otherwise only existing users (matched by email) sign in.
 */
const ssoRuleSchema = z
  .object({
    /** email domains that may sign in (exact, lower case); empty: any domain (default) */
    allowedDomains: z.array(emailDomainSchema).max(1000).default([]),
    /** a claim the person must have, with this value (or one of these); a list claim must contain it (default none) */
    requiredClaim: z
      .object({
        claim: claimNameSchema,
        value: z.union([z.string().min(1).max(500), z.array(z.string().min(1).max(500)).min(1).max(100)]),
      })
      .strict()
      .optional(),
    /** refuse an email the provider does not mark email_verified: true (default true) */
    requireVerifiedEmail: z.boolean().default(true),
    /** a claim whose value is the new user's tenant (checked first; default none) */
    tenantClaim: claimNameSchema.optional(),
    /** email domain → tenant of new users (default none) */
    tenantByDomain: z.record(emailDomainSchema, tenantNameSchema).default({}),
    /** the tenant of a new user neither rule above places (default none: such a sign-in is refused) */
    defaultTenant: tenantNameSchema.optional(),
  })
  .strict();

/** The portal's sign-in methods: API keys and one-time links (for bootstrap) may be turned off; the SSO rule. */
const signInSchema = z
  .object({
    /** the sign-in form that takes an API key (default true) */
    apiKey: z.boolean().default(true),
    /** one-time sign-in links made with `workbench login-link` (default true) */
    loginLinks: z.boolean().default(true),
    sso: ssoRuleSchema.default(ssoRuleSchema.parse({})),
  })
  .strict();
export type SignInPolicy = z.infer<typeof signInSchema>;
export type SsoRule = z.infer<typeof ssoRuleSchema>;

export const policySchema = z
  .object({
    $schema: z.string().optional(),
    limits: limitsSchema.default(limitsSchema.parse({})),
    http: httpSchema.default(httpSchema.parse({})),
    sandbox: sandboxSchema.default(sandboxSchema.parse({})),
    requests: requestsSchema.default(requestsSchema.parse({})),
    resultCap: resultCapSchema.default(resultCapSchema.parse({})),
    images: imagesSchema.default(imagesSchema.parse({})),
    /** upstream origin → replacement origin (tests, staging, self-hosted instances) */
    upstreams: z.record(originSchema, originSchema).default({}),
    oauthServer: oauthServerSchema.default(oauthServerSchema.parse({})),
    /** what happens when argument validation itself throws: "reject" (default) or "passthrough" */
    schemaErrors: z.enum(['reject', 'passthrough']).default('reject'),
    /** tenant name (or "*" for every tenant) → rule; a tenant's own rule and "*" both apply */
    tenants: z.record(z.string().min(1), tenantRuleSchema).default({}),
    /** per-plugin overrides of limits */
    plugins: z.record(z.string().min(1), z.object({ limits: limitsOverrideSchema.optional() }).strict()).default({}),
    /** the built-in integrations (host/builtins): each may be turned off, and has limits of its own */
    builtins: z
      .object({
        browser: browserPolicySchema.default(browserPolicySchema.parse({})),
        jots: jotsPolicySchema.default(jotsPolicySchema.parse({})),
      })
      .strict()
      .default({ browser: browserPolicySchema.parse({}), jots: jotsPolicySchema.parse({}) }),
    /** how people sign in to the portal: which methods, and who single sign-on admits and where */
    signIn: signInSchema.default(signInSchema.parse({})),
    /** where audit events go: the database (default) or stdout as JSON lines; how long stored ones are kept */
    audit: z
      .object({
        sink: z.enum(['database', 'stdout']).default('database'),
        storeArguments: z.boolean().default(false),
        retentionDays: retentionDaysSchema,
      })
      .strict()
      .default({ sink: 'database', storeArguments: false, retentionDays: 0 }),
  })
  .strict()
  .superRefine((p, ctx) => {
    // a tenant as users are created with it (lower case …), or "*": a key no tenant can have (a
    // typo, "Acme" for acme) would be a rule that never applies — a deny that silently allows
    for (const t of Object.keys(p.tenants)) {
      const problem = t === '*' ? undefined : validateTenant(t);
      if (problem)
        ctx.addIssue({
          code: 'custom',
          path: ['tenants', t],
          message: `"${t.slice(0, 80)}" is no tenant name: ${problem}, or "*" for every tenant`,
        });
    }
    const least = minCapChars(p.requests.maxBatch);
    if (p.resultCap.maxChars < least)
      ctx.addIssue({
        code: 'custom',
        path: ['resultCap', 'maxChars'],
        message: `must be at least ${least} with requests.maxBatch ${p.requests.maxBatch}: a capped answer keeps one item for each execution (${CAP_CHARS_PER_EXECUTION} characters each at the least, and ${CAP_ENVELOPE_CHARS} for the rest)`,
      });
  });

/**
 * The smallest form of a capped item: `{"result":{"truncated":true,"inBatch":999}},` (44) or
 * `{"error":"not stored","code":"GW_ERR_RESULT_NOT_STORED"},` (57), within this.
 */
export const CAP_CHARS_PER_EXECUTION = 58;
/** the envelope and the whole batch's continuation stub around them */
export const CAP_ENVELOPE_CHARS = 200;
/** resultCap.maxChars below this cannot answer a batch of `maxBatch` with one item per execution */
export const minCapChars = (maxBatch: number): number => maxBatch * CAP_CHARS_PER_EXECUTION + CAP_ENVELOPE_CHARS;

export type Policy = z.infer<typeof policySchema>;
export type PolicyLimits = z.infer<typeof limitsSchema>;
export type OAuthServerPolicy = z.infer<typeof oauthServerSchema>;
