/**
 * @module host/connections/personal-token
 * A token the person made themselves (a GitLab personal access token, a Jira Data Center PAT),
 * pasted on the connect page of an OAuth2 integration that takes one (`auth.personalToken`) instead
 * of the OAuth round trip: checked here, for the page and the service alike, before the link is
 * used or anything stored.
 */
import type { PluginManifest } from '../../contracts/manifest.js';
import { ConnectionError } from './errors.js';

/** The longest token taken, as for an API-key field. */
const MAX_TOKEN_CHARS = 4096;

/** The token as it is stored (surrounding whitespace, a paste artefact, removed); throws a ConnectionError naming `token`. */
export function checkPersonalToken(manifest: Pick<PluginManifest, 'auth' | 'displayName'>, token: unknown): string {
  const auth = manifest.auth;
  if (auth.type !== 'oauth2' || !auth.personalToken)
    throw new ConnectionError(
      'GW_ERR_CONNECTION_INVALID_INPUT',
      `${manifest.displayName} takes no personal token: connect it ${auth.type === 'oauth2' ? 'through its OAuth sign-in' : 'with its own form'}`,
      { token: 'not taken' },
    );
  const label = auth.personalToken.label;
  const text = typeof token === 'string' ? token.trim() : '';
  const problem =
    text === ''
      ? `${label} is required`
      : text.length > MAX_TOKEN_CHARS
        ? `${label} is too long (at most ${MAX_TOKEN_CHARS} characters)`
        : /[\u0000-\u001f\u007f\s]/.test(text)
          ? `${label} contains spaces or control characters; paste it again`
          : undefined;
  if (problem) throw new ConnectionError('GW_ERR_CONNECTION_INVALID_INPUT', problem, { token: problem });
  return text;
}
