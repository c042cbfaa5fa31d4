/**
 * @module test/helpers/oauth-client
 * The client side of the gateway's OAuth server as tests drive it: the MCP SDK's OAuthClientProvider
 * kept in memory (what a desktop MCP host keeps on disk), a person answering the consent page over
 * real HTTP with a signed-in portal session, a loopback server standing in for a client's redirect
 * URI or for a client metadata document, and the SDK client connecting with it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { WebClient } from './web-client.js';

/** An OAuthClientProvider holding everything in memory; the authorization URL it is sent to is kept for the test. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  lastState = '';
  authorizationUrls: URL[] = [];
  readonly clientMetadataUrl?: string;
  readonly #redirectUrl: string;
  readonly #metadata: OAuthClientMetadata;

  constructor(redirectUrl: string, metadata: Partial<OAuthClientMetadata> = {}, clientMetadataUrl?: string) {
    this.#redirectUrl = redirectUrl;
    this.#metadata = {
      client_name: 'Test MCP host',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    };
    if (clientMetadataUrl !== undefined) this.clientMetadataUrl = clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.#redirectUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return this.#metadata;
  }
  state(): string {
    this.lastState = randomBytes(16).toString('hex');
    return this.lastState;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(v: string): void {
    this.verifier = v;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  get lastAuthorizationUrl(): URL {
    const u = this.authorizationUrls.at(-1);
    if (!u) throw new Error('the client was not sent to an authorization URL');
    return u;
  }
}

/** The named hidden fields of a page's form (the consent page's authorization request). */
export function hiddenFields(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    out[m[1] as string] = (m[2] as string)
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&#96;/g, '`')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return out;
}

/**
 * A signed-in person opens the authorization URL and answers the consent page: the page must be
 * the consent page (200), and the answer a redirect; resolves to the redirect's Location.
 */
export async function answerConsent(
  web: WebClient,
  authorizationUrl: URL,
  decision: 'allow' | 'deny' = 'allow',
): Promise<{ location: URL; page: string }> {
  const page = await web.get(authorizationUrl.pathname + authorizationUrl.search);
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${page.body.slice(0, 500)}`);
  const res = await web.post('/authorize', { ...hiddenFields(page.body), decision });
  if (res.status !== 303 || !res.location) throw new Error(`consent answered ${res.status}: ${res.body.slice(0, 500)}`);
  return { location: new URL(res.location), page: page.body };
}

/** An SDK client and its transport on /mcp with the OAuth provider (it connects only once authorized). */
export function oauthTransport(url: string, provider: OAuthClientProvider): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: provider });
}

/** Connects an SDK client with the provider's stored tokens (after the flow). */
export async function connectWithProvider(url: string, provider: OAuthClientProvider): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '0.0.0' });
  await client.connect(oauthTransport(url, provider));
  return client;
}

/** A loopback HTTP server answering every GET with `answer(path)`; records the requests. */
export interface LoopbackServer {
  origin: string;
  requests: string[];
  connections: number;
  close(): Promise<void>;
}

export async function startLoopbackServer(
  answer: (path: string) => { status: number; headers?: Record<string, string>; body: string },
): Promise<LoopbackServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const a = answer(req.url ?? '/');
    res.writeHead(a.status, a.headers ?? {});
    res.end(a.body);
  });
  const state = { connections: 0 };
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
