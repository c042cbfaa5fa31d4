/**
 * @module sdk/clone-url
 * Clone URLs an agent may be shown: never one that carries a credential. A provider's HTTPS clone
 * URL may hold a user name (Bitbucket's `https://nick@bitbucket.org/…`) or, in a hostile or odd
 * answer, a `user:secret@` pair; `plainCloneUrl` drops the whole user part, so what goes back is
 * the bare URL and the agent is told how to authenticate instead. SSH URLs (`git@host:path`,
 * `ssh://git@host/path`) keep their user, which is the fixed login `git`, never a secret; any
 * password in them is dropped.
 */

/** The authority of a URL split at its last "@" (a password may hold "@"): the user part and the host. */
function splitAuthority(authority: string): { user: string; host: string } {
  const at = authority.lastIndexOf('@');
  return { user: at < 0 ? '' : authority.slice(0, at), host: authority.slice(at + 1) };
}

/** An https/http clone URL without its user part, an SSH URL without a password, or null for anything else. */
export function plainCloneUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const url = value.trim();
  if (url === '' || /\s/.test(url)) return null;
  const m = /^(https?:\/\/|ssh:\/\/)([^/?#]*)(.*)$/i.exec(url);
  if (m) {
    const [, scheme = '', authority = '', rest = ''] = m;
    const { user, host } = splitAuthority(authority);
    if (host === '') return null;
    if (scheme.toLowerCase() !== 'ssh://') return `${scheme}${host}${rest}`;
    const login = user.split(':')[0];
    return `${scheme}${login ? `${login}@` : ''}${host}${rest}`;
  }
  // scp-like form: git@host:owner/repo.git
  return /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^:@]+$/.test(url) ? url : null;
}
