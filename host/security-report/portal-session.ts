/**
 * @module host/security-report/portal-session
 * Signs in to the portal with an API key, as a browser would (the sign-in form, its CSRF token and
 * cookies, the page's Origin on the post), and reads pages as that user: how the cross-user cases
 * look at another user's activity.
 */
import { fail } from '../../contracts/errors.js';

/** Keeps the cookies a response sets (an empty value deletes one), as a browser's jar would. */
function keepCookies(jar: Map<string, string>, res: Response): void {
  for (const c of res.headers.getSetCookie()) {
    const pair = c.split(';')[0] ?? '';
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
    if (value === '' || /max-age=0/i.test(c)) jar.delete(name);
    else jar.set(name, value);
  }
}

const cookieHeader = (jar: Map<string, string>): string => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

/** Signs in; resolves to a reader of portal pages (their HTML) for the signed-in user. */
export async function signInToPortal(base: string, apiKey: string): Promise<(pathname: string) => Promise<string>> {
  const jar = new Map<string, string>();
  const page = await fetch(`${base}/login`, { redirect: 'manual' });
  keepCookies(jar, page);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrf) throw fail('GW_ERR_REPORT_FAILED', { message: 'the portal sign-in page holds no CSRF token' });
  const form = new URLSearchParams({ _csrf: csrf, apiKey, next: '/activity' }).toString();
  const signedIn = await fetch(`${base}/login`, {
    method: 'POST',
    redirect: 'manual',
    body: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, cookie: cookieHeader(jar) },
  });
  keepCookies(jar, signedIn);
  if (signedIn.status !== 303)
    throw fail('GW_ERR_REPORT_FAILED', { message: `portal sign-in answered ${signedIn.status}` });
  return async (pathname) =>
    (await fetch(`${base}${pathname}`, { redirect: 'manual', headers: { cookie: cookieHeader(jar) } })).text();
}
