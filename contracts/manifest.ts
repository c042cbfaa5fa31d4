/**
 * @module contracts/manifest
 * The plugin manifest: the data a third party ships beside its `plugin.js`. It is validated with
 * zod before anything is registered (invariant 1: the manifest is data, the code is never loaded
 * by the host). Shared by the host registry, the bridge and the plugin CLI, and type-checked in
 * plugin authors' projects through the SDK's types: it imports nothing that needs Node.js.
 * One file on purpose (a little over 400 lines): the manifest's whole shape and the rules between its
 * parts (auth against egress), as docs/plugins.md lists them; instances are in manifest-instance.ts.
 */
import * as z from 'zod';
import { isForbiddenHeader } from './forbidden-headers.js';
import { instanceProblems, instanceSchema, personalTokenSchema } from './manifest-instance.js';

export { INSTANCE_CONFIG_KEY, instanceOf, instanceSchema, type InstanceSpec } from './manifest-instance.js';

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const hostNameSchema = z
  .string()
  .regex(HOST_NAME, 'must be a lower-case DNS host name without scheme, port or path (e.g. "api.github.com")');

/**
 * How the credential is applied to outbound requests. Placeholders in `format` are the names of
 * secret values: `{token}` for OAuth2 access tokens, or an API-key field name such as `{apiKey}`;
 * `{base64:a:b}` is base64("<a>:<b>") for HTTP Basic; `{field.sub}` is the secret `sub` of one
 * record of a records field (the record the request's `recordHeader` names). The credential is
 * added only to requests for `hosts` (default: every host in `egress`), after the egress policy
 * allowed them.
 */
/** A placeholder of `format`: `{base64:a:b}` (groups 1, 2), `{name}` (group 3) or `{name.sub}` (groups 3, 4). */
export const INJECT_PLACEHOLDER =
  /\{base64:([A-Za-z0-9_]+):([A-Za-z0-9_]*)\}|\{([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\}/g;

/**
 * Problems with the placeholders of `format`: each must name a value the credential holds (a
 * secret API-key field, or `token` for OAuth2), else every call would fail with a message blaming
 * the user's connection. `secrets` are the names it may use; `fields` all API-key fields.
 */
export function placeholderProblems(
  format: string,
  secrets: readonly string[],
  fields: readonly { name: string; secret: boolean; records?: { secret: readonly string[] } | undefined }[],
): string[] {
  const problems: string[] = [];
  const allowed = secrets.length > 0 ? secrets.map((n) => `{${n}}`).join(', ') : 'none (no field has "secret": true)';
  const valid = new RegExp(`^(?:${INJECT_PLACEHOLDER.source})$`);
  for (const [text] of format.matchAll(/\{[^{}]*\}/g)) {
    if (!valid.test(text)) {
      problems.push(
        `${text} is not a placeholder: write {name} with a field name, or {base64:a:b}; the placeholders this credential has are ${allowed}`,
      );
      continue;
    }
    const m = valid.exec(text) as RegExpExecArray;
    const names =
      m[3] !== undefined ? [m[4] !== undefined ? `${m[3]}.${m[4]}` : m[3]] : [m[1] as string, ...(m[2] ? [m[2]] : [])];
    for (const name of names) {
      if (secrets.includes(name)) continue;
      const field = fields.find((f) => f.name === name.split('.')[0]);
      const near = secrets.find((n) => n.toLowerCase() === name.toLowerCase());
      if (field?.records && !name.includes('.'))
        problems.push(
          `${text}: field "${name}" holds a list of records: name a secret of the record the request chooses, such as {${name}.${field.records.secret[0] ?? 'secret'}}`,
        );
      else if (field && !field.secret)
        problems.push(
          `${text}: field "${name}" is not secret, and only secret fields reach the credential (give it "secret": true, or use ${allowed})`,
        );
      else if (fields.length === 0) problems.push(`${text}: an OAuth2 credential has only {token}`);
      else
        problems.push(
          `${text} names no secret field${near ? ` (did you mean {${near}}? names are case-sensitive)` : ''}; the placeholders this credential has are ${allowed}`,
        );
    }
  }
  return problems;
}

const headerNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name')
  .refine(
    (h) => h.toLowerCase() === 'authorization' || !isForbiddenHeader(h),
    'may not be a header that steers routing or carries other credentials (host, cookie, forwarded, x-forwarded-*, proxy-*, hop-by-hop headers)',
  );

export const injectSchema = z
  .object({
    hosts: z.array(hostNameSchema).optional(),
    header: headerNameSchema.default('authorization'),
    format: z
      .string()
      .min(1)
      .max(200)
      .regex(/\{[^{}]+\}/, 'must contain a placeholder such as {token} or {apiKey}: a constant is not a credential')
      .default('Bearer {token}'),
    /**
     * the request header that chooses the record whose secrets `{field.sub}` renders (its value is
     * a record's `key`); the plugin sets it, and it is sent on as it is (e.g. a provider's account
     * id header). Required when `format` names a record's secret, refused otherwise.
     */
    recordHeader: headerNameSchema.optional(),
  })
  .strict();
export type InjectSpec = z.infer<typeof injectSchema>;

const IDENTIFIER = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
const identifier = z.string().regex(IDENTIFIER, 'must be an identifier');

/**
 * A field that holds a list of records (e.g. several projects, each with an account id and a
 * passcode) instead of one text: entered as a JSON array of objects whose values are texts. The
 * whole list is the secret; the records without their `secret` sub-fields become `ctx.config`, and
 * `{field.sub}` in `inject.format` renders the secret `sub` of the record whose `key` equals the
 * request's `inject.recordHeader`.
 */
export const recordsSchema = z
  .object({
    /** the sub-field that names a record: unique in the list, and what `inject.recordHeader` carries */
    key: identifier,
    /** the sub-fields a record may have; any other is refused */
    fields: z.array(identifier).min(1).max(20),
    /** the sub-fields every record must fill in (default: all of `fields`) */
    required: z.array(identifier).optional(),
    /** the sub-fields kept secret: left out of ctx.config, and the only ones `{field.sub}` may name */
    secret: z.array(identifier).min(1),
    /** the most records one connection may hold */
    max: z.number().int().min(1).max(100).default(20),
  })
  .strict()
  .superRefine((r, ctx) => {
    for (const [key, names] of [
      ['key', [r.key]],
      ['required', r.required ?? []],
      ['secret', r.secret],
    ] as const)
      for (const n of names)
        if (!r.fields.includes(n)) ctx.addIssue({ code: 'custom', path: [key], message: `"${n}" is not in fields` });
    if (r.secret.includes(r.key))
      ctx.addIssue({
        code: 'custom',
        path: ['key'],
        message: 'the key names a record in requests: it cannot be secret',
      });
  });
export type RecordsSpec = z.infer<typeof recordsSchema>;

export const apiKeyFieldSchema = z
  .object({
    name: identifier,
    label: z.string().min(1).max(100),
    description: z.string().max(500).optional(),
    /** secret fields are encrypted and never reach plugin code; the others become ctx.config */
    secret: z.boolean().default(false),
    required: z.boolean().default(true),
    /** allowed values (renders a select) */
    enum: z.array(z.string().min(1).max(100)).min(1).optional(),
    default: z.string().max(500).optional(),
    /** a regular expression the value must match */
    pattern: z.string().max(200).optional(),
    /** the field holds a JSON list of records (see recordsSchema) */
    records: recordsSchema.optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    if (!f.records) return;
    if (!f.secret)
      ctx.addIssue({ code: 'custom', path: ['secret'], message: 'a records field holds secrets: it must be secret' });
    for (const k of ['enum', 'default', 'pattern'] as const)
      if (f[k] !== undefined)
        ctx.addIssue({ code: 'custom', path: [k], message: `a records field takes no ${k}: its records are checked` });
  });
export type ApiKeyField = z.infer<typeof apiKeyFieldSchema>;

const noAuthSchema = z.object({ type: z.literal('none') }).strict();

const apiKeyAuthSchema = z
  .object({
    type: z.literal('apikey'),
    fields: z.array(apiKeyFieldSchema).min(1).max(20),
    inject: injectSchema,
    /** instructions shown on the connect form (plain text) */
    instructions: z.string().max(2000).optional(),
    /** the connection may name its own instance of the provider (see instanceSchema) */
    instance: instanceSchema.optional(),
  })
  .strict();

const urlSchema = z.url({ protocol: /^https?$/ });

const oauth2AuthSchema = z
  .object({
    type: z.literal('oauth2'),
    authorizationUrl: urlSchema,
    tokenUrl: urlSchema,
    revocationUrl: urlSchema.optional(),
    scopes: z.array(z.string().min(1).max(200)).max(100).default([]),
    scopeSeparator: z.string().max(3).default(' '),
    /** PKCE (S256) is used unless a provider is known not to accept it */
    pkce: z.boolean().default(true),
    /** extra query parameters for the authorization URL (e.g. {"audience": "api.atlassian.com"}) */
    authorizationParams: z.record(z.string(), z.string()).default({}),
    /** how the client authenticates at the token endpoint */
    clientAuth: z.enum(['body', 'basic']).default('body'),
    /** dotted path to the token object in the token response, for providers that nest it */
    tokenPath: z.string().max(100).optional(),
    inject: injectSchema.default({ header: 'authorization', format: 'Bearer {token}' }),
    /** the connection may name its own instance of the provider (see instanceSchema) */
    instance: instanceSchema.optional(),
    /** a token the person made may stand in for the OAuth round trip (see personalTokenSchema) */
    personalToken: personalTokenSchema.optional(),
  })
  .strict();

/** A cookie name (an RFC 6265 token). */
export const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

/**
 * Whether `host` is `domain` or a host inside it ("api.example.com" is within "example.com"). The
 * one rule for what a cookie connection's `domains` cover: which captured cookies are kept, and
 * which request hosts the bridge sends them to.
 */
export function withinDomain(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/** Whether `host` is within any of `domains`. */
export function withinDomains(host: string, domains: readonly string[]): boolean {
  return domains.some((d) => withinDomain(host, d));
}

/**
 * A connection made of the cookies of a signed-in browser session: a person signs in at `loginUrl`
 * in a live browser, and the cookies of `domains` (only those) become the connection, sent by the
 * bridge as one Cookie header to the egress hosts within `domains`.
 */
const cookieAuthSchema = z
  .object({
    type: z.literal('cookie'),
    /** where the person signs in: https only, its host within `domains` */
    loginUrl: z.url({
      protocol: /^https$/,
      error:
        "must be an https URL: the person types their password on that page (a test provider is reached through the policy's upstreams)",
    }),
    /** the cookie domains captured and sent; each a host name of two labels or more */
    domains: z
      .array(
        hostNameSchema.refine(
          (d) => d.includes('.'),
          'must have two labels or more: a one-label domain such as "com" would take the cookies of every site under it',
        ),
      )
      .min(1, 'list at least one domain whose cookies make the connection')
      .max(20),
    /** the cookies that must be there (and not expired) for the person to count as signed in */
    signedInCheck: z
      .object({
        cookies: z
          .array(z.string().regex(COOKIE_NAME, "must be a cookie name (letters, digits and !#$%&'*+-.^_`|~)"))
          .min(1)
          .max(10),
      })
      .strict()
      .optional(),
    /** instructions shown on the connect page (plain text) */
    instructions: z.string().max(2000).optional(),
  })
  .strict();
export type CookieAuth = z.infer<typeof cookieAuthSchema>;

export const authSchema = z.discriminatedUnion('type', [
  noAuthSchema,
  apiKeyAuthSchema,
  oauth2AuthSchema,
  cookieAuthSchema,
]);
export type PluginAuth = z.infer<typeof authSchema>;

export const toolAnnotationsSchema = z
  .object({
    title: z.string().max(200).optional(),
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .strict();

export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
export const PLUGIN_NAME = /^[a-z][a-z0-9-]{0,63}$/;

export const toolSchema = z
  .object({
    name: z.string().regex(TOOL_NAME, 'must be snake_case: a-z, 0-9 and _, starting with a letter, at most 64'),
    description: z.string().min(1).max(4000),
    inputSchema: z
      .record(z.string(), z.unknown(), {
        error: (issue) =>
          issue.input === undefined
            ? 'required: a JSON Schema of the arguments, e.g. {"type": "object", "properties": {}} for a tool that takes none'
            : 'must be a JSON Schema object with "type": "object"',
      })
      .refine((s) => s['type'] === 'object', 'must be a JSON Schema with "type": "object"'),
    annotations: toolAnnotationsSchema.optional(),
  })
  .strict();
export type ToolManifest = z.infer<typeof toolSchema>;

export const manifestSchema = z
  .object({
    $schema: z.string().optional(),
    /** a note for people reading the file, e.g. that it is generated; the gateway ignores it */
    $comment: z.string().max(500).optional(),
    name: z.string().regex(PLUGIN_NAME, 'must be kebab-case: a-z, 0-9 and -, starting with a letter'),
    version: z.string().regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, 'must be a semantic version like 1.2.3'),
    displayName: z.string().min(1).max(100),
    description: z.string().min(1).max(2000),
    auth: authSchema,
    egress: z.array(hostNameSchema).max(50).default([]),
    /**
     * the plugin may also reach any public host (https, port 443), never with the credential: for
     * a tool that fetches a URL the user gives (an upload from a URL). Private, loopback,
     * link-local and other non-public addresses stay refused, whatever the policy's
     * allowPrivateCidrs says
     */
    egressAnyPublicHost: z.boolean().optional(),
    tools: z.array(toolSchema).min(1).max(500),
  })
  .strict()
  .superRefine((m, ctx) => {
    const seen = new Set<string>();
    m.tools.forEach((t, i) => {
      if (seen.has(t.name))
        ctx.addIssue({ code: 'custom', path: ['tools', i, 'name'], message: `duplicate tool name "${t.name}"` });
      seen.add(t.name);
    });
    if (m.auth.type === 'cookie') cookieAuthProblems(m.auth, m.egress, ctx);
    else if (m.auth.type !== 'none') {
      const fields = m.auth.type === 'apikey' ? m.auth.fields : [];
      const secrets = m.auth.type === 'apikey' ? secretNames(fields) : ['token'];
      for (const problem of placeholderProblems(m.auth.inject.format, secrets, fields))
        ctx.addIssue({ code: 'custom', path: ['auth', 'inject', 'format'], message: problem });
      for (const problem of recordHeaderProblems(m.auth.inject, fields))
        ctx.addIssue({ code: 'custom', path: ['auth', 'inject', 'recordHeader'], message: problem });
      (m.auth.inject.hosts ?? []).forEach((h, i) => {
        if (!m.egress.includes(h))
          ctx.addIssue({ code: 'custom', path: ['auth', 'inject', 'hosts', i], message: `"${h}" is not in egress` });
      });
      for (const problem of instanceProblems(m.auth, m.egress))
        ctx.addIssue({ code: 'custom', path: ['auth', 'instance', ...problem.path], message: problem.message });
    }
  });
export type PluginManifest = z.infer<typeof manifestSchema>;

/** The placeholder names an API-key credential has: each plain secret field, and `field.sub` for each secret of a records field. */
function secretNames(fields: readonly ApiKeyField[]): string[] {
  return fields.flatMap((f) =>
    !f.secret ? [] : f.records ? f.records.secret.map((sub) => `${f.name}.${sub}`) : [f.name],
  );
}

/** `recordHeader` goes with a format that names a record's secret, and only with one. */
function recordHeaderProblems(inject: InjectSpec, fields: readonly ApiKeyField[]): string[] {
  const names = [...inject.format.matchAll(INJECT_PLACEHOLDER)].filter((m) => m[4] !== undefined);
  const usesRecords = names.some((m) => fields.some((f) => f.name === m[3] && f.records));
  if (fields.filter((f) => f.records).length > 1)
    return ['one records field at most: a request chooses one record, through one header'];
  if (usesRecords && !inject.recordHeader)
    return ['required: format names a secret of a record, and recordHeader says which header chooses the record'];
  if (!usesRecords && inject.recordHeader)
    return ['is only for a format that names a secret of a record ({field.sub} of a records field)'];
  return [];
}

/**
 * What a cookie auth must hold beside its own shape: every domain reachable (the domain or a host
 * inside it is in `egress`, else no request could ever carry its cookies), no domain twice, and
 * the login page within the domains (the cookies it sets are the ones captured).
 */
function cookieAuthProblems(auth: CookieAuth, egress: readonly string[], ctx: z.RefinementCtx): void {
  // runs after the shape's own issues too: a field that failed them may be anything
  const given: { domains: unknown; egress: unknown } = { domains: auth.domains, egress };
  if (!Array.isArray(given.domains) || !Array.isArray(given.egress)) return;
  auth.domains.forEach((d, i) => {
    if (auth.domains.indexOf(d) !== i)
      ctx.addIssue({ code: 'custom', path: ['auth', 'domains', i], message: `"${d}" is listed twice` });
    else if (!egress.some((h) => withinDomain(h, d)))
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'domains', i],
        message: `"${d}" is not covered by egress: list it, or a host inside it, in egress (no request could carry its cookies otherwise)`,
      });
  });
  // read without URL, which plugin authors' type-checks and the sandbox do not have; the schema
  // has checked it is an https URL, and anything but a plain host name and port is refused
  const authority = /^https:\/\/([^/?#]*)/i.exec(typeof auth.loginUrl === 'string' ? auth.loginUrl : '')?.[1];
  if (authority === undefined) return;
  const host = authority.replace(/:\d*$/, '').toLowerCase().replace(/\.+$/, '');
  if (authority.includes('@'))
    ctx.addIssue({ code: 'custom', path: ['auth', 'loginUrl'], message: 'must not carry a user name or password' });
  else if (!HOST_NAME.test(host))
    ctx.addIssue({
      code: 'custom',
      path: ['auth', 'loginUrl'],
      message: `its host "${host.slice(0, 100)}" must be a DNS host name within domains`,
    });
  else if (!withinDomains(host, auth.domains))
    ctx.addIssue({
      code: 'custom',
      path: ['auth', 'loginUrl'],
      message: `its host "${host}" is not within domains (${auth.domains.join(', ')}): the cookies the sign-in sets would not be captured`,
    });
}

/**
 * Hosts that receive the credential for a plugin: the inject hosts, or every egress host; for a
 * cookie connection, the egress hosts within its domains.
 */
export function credentialHosts(manifest: PluginManifest): readonly string[] {
  const auth = manifest.auth;
  if (auth.type === 'none') return [];
  if (auth.type === 'cookie') return manifest.egress.filter((h) => withinDomains(h, auth.domains));
  return auth.inject.hosts ?? manifest.egress;
}

/** Formats zod issues as `field: problem` lines for error messages that name the field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : '(root)'}: ${i.message}`).join('; ');
}
