/**
 * @module test/helpers/web-client
 * A browser-like form client for the portal over real HTTP: keeps cookies, never follows
 * redirects (tests read each Location), and sends the page's Origin on posts as a browser does.
 */

export interface Answer {
  status: number;
  body: string;
  location: string | null;
  headers: Headers;
}

export class WebClient {
  readonly jar = new Map<string, string>();
  /** `origin`: the Origin its posts carry (another replica's public name behind one load balancer) */
  constructor(
    readonly base: string,
    readonly origin = base,
  ) {}

  async send(
    method: 'GET' | 'POST',
    p: string,
    form?: Record<string, string>,
    extra: Record<string, string> = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...extra };
    if (this.jar.size) headers['cookie'] = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) Object.assign(headers, { 'content-type': 'application/x-www-form-urlencoded', origin: this.origin });
    const res = await fetch(this.base + p, {
      method,
      headers,
      redirect: 'manual',
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ''] = c.split(';');
      const eq = pair.indexOf('=');
      if (/Max-Age=0/i.test(c) || eq === pair.length - 1) this.jar.delete(pair.slice(0, eq));
      else this.jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return { status: res.status, body: await res.text(), location: res.headers.get('location'), headers: res.headers };
  }

  /** `headers`: e.g. a browser's `accept` */
  get(p: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.send('GET', p, undefined, headers);
  }

  post(p: string, form: Record<string, string>): Promise<Answer> {
    return this.send('POST', p, form);
  }
}

/** The hidden CSRF token in a page. */
export function csrfOf(body: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(body);
  if (!m?.[1]) throw new Error(`no CSRF token in page: ${body.slice(0, 300)}`);
  return m[1];
}

/** Signs in with an API key through the login form; returns the signed-in client. */
export async function signInWithKey(
  base: string,
  apiKey: string,
  next = '/integrations',
  origin = base,
): Promise<WebClient> {
  const web = new WebClient(base, origin);
  const page = await web.get('/login');
  const res = await web.post('/login', { _csrf: csrfOf(page.body), apiKey, next });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status} ${res.body.slice(0, 300)}`);
  return web;
}
