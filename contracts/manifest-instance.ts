/**
 * @module contracts/manifest-instance
 * The manifest's declaration of a provider that can be self-hosted (`auth.instance`: GitLab
 * self-managed, a Data Center server) and of a token the person made standing in for the OAuth
 * round trip (`auth.personalToken`): their shapes, the rules they must meet beside the rest of the
 * manifest, and the one key the instance reaches plugin code under. A module of its own so that
 * contracts/manifest.ts stays the manifest's outline; it takes the parts of a manifest it checks
 * (plain shapes), never the manifest type, so the two do not import each other.
 */
import * as z from 'zod';

/** The `ctx.config` key a connection's instance URL reaches plugin code under (see instanceSchema). */
export const INSTANCE_CONFIG_KEY = 'instanceUrl';

/** An https origin without path: "https://gitlab.com" (an optional port, a trailing slash at most). */
const HTTPS_ORIGIN = /^https:\/\/([a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?)(:\d{1,5})?\/?$/;

/** A path below an instance's base, e.g. "/oauth/token": no query, no fragment, no "..". */
const instancePathSchema = z
  .string()
  .max(200)
  .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/, 'must be a path starting with "/", without query or fragment')
  .refine((p) => !p.startsWith('//') && !p.split('/').includes('..'), 'must not start with "//" or hold ".."');

/**
 * A provider a connection may reach on an instance of its own (GitLab self-managed, a Data Center
 * server): the connect page asks for the instance's URL (empty: `default`), the gateway checks it
 * against the address rules, and the connection's credential is then sent to that origin only,
 * never to the default's hosts. The plugin reads it from `ctx.config.instanceUrl` (absent for the
 * default) and builds its URLs on it.
 */
export const instanceSchema = z
  .object({
    /** the provider's own service, used when a connection names no instance: an https origin whose host is in egress */
    default: z.string().regex(HTTPS_ORIGIN, 'must be an https origin such as "https://gitlab.com" (no path)'),
    /** what the connect page calls the field, e.g. "GitLab instance URL" */
    label: z.string().min(1).max(100),
    /** a hint shown under the field */
    description: z.string().max(500).optional(),
    /**
     * OAuth2 only: the instance's own endpoints, as paths below its URL (GitLab: /oauth/authorize,
     * /oauth/token, /oauth/revoke). Without them a connection to an instance takes a personal token.
     */
    oauth: z
      .object({
        authorizationPath: instancePathSchema,
        tokenPath: instancePathSchema,
        revocationPath: instancePathSchema.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type InstanceSpec = z.infer<typeof instanceSchema>;

/**
 * An OAuth2 integration whose provider also takes a token the person made themselves (a GitLab
 * personal access token, a Jira Data Center PAT): the connect page offers to paste one instead of
 * the OAuth round trip. It is sent as the OAuth token is (`{token}`), and never refreshed.
 */
export const personalTokenSchema = z
  .object({
    /** what the connect page calls it, e.g. "Personal access token" */
    label: z.string().min(1).max(100),
    /** how to make one, and the scopes it needs */
    description: z.string().max(500).optional(),
  })
  .strict();

/** The parts of an auth these rules read (an apikey or oauth2 auth, as the manifest parsed it). */
interface AuthParts {
  type: string;
  instance?: InstanceSpec | undefined;
  inject?: { hosts?: readonly string[] | undefined } | undefined;
  fields?: ReadonlyArray<{ name: string }> | undefined;
}

/**
 * What an instance declaration must hold beside its shape: the default's host is one the
 * credential goes to (so a connection without an instance works as before), no API-key field takes
 * the config key the instance URL reaches the plugin under, and OAuth endpoints only on OAuth2.
 * Paths are below `auth.instance`.
 */
export function instanceProblems(
  auth: AuthParts,
  egress: readonly string[],
): Array<{ path: (string | number)[]; message: string }> {
  if ((auth.type !== 'apikey' && auth.type !== 'oauth2') || !auth.instance) return [];
  const problems: Array<{ path: (string | number)[]; message: string }> = [];
  const host = HTTPS_ORIGIN.exec(typeof auth.instance.default === 'string' ? auth.instance.default : '')?.[1];
  if (host !== undefined && !(auth.inject?.hosts ?? egress).includes(host))
    problems.push({
      path: ['default'],
      message: `its host "${host}" must be in egress (and in inject.hosts, when given): it is where a connection without an instance sends the credential`,
    });
  if (auth.type === 'apikey' && (auth.fields ?? []).some((f) => f.name === INSTANCE_CONFIG_KEY))
    problems.push({
      path: [],
      message: `no field may be named "${INSTANCE_CONFIG_KEY}": the instance URL reaches the plugin as ctx.config.${INSTANCE_CONFIG_KEY}`,
    });
  if (auth.type === 'apikey' && auth.instance.oauth)
    problems.push({ path: ['oauth'], message: 'is for OAuth2 integrations only' });
  return problems;
}

/** The instance declaration of an integration, when a connection may name its own instance. */
export function instanceOf(manifest: {
  auth: { type: string; instance?: InstanceSpec | undefined };
}): InstanceSpec | undefined {
  const auth = manifest.auth;
  return auth.type === 'apikey' || auth.type === 'oauth2' ? auth.instance : undefined;
}
