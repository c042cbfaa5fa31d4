/**
 * @module host/oauth-server/metadata
 * Where everything is, from the public URL (WORKBENCH_PUBLIC_URL): the protected resource (/mcp,
 * the audience every token is bound to), its metadata (RFC 9728) at the path-suffixed and the root
 * well-known addresses, and the authorization server's metadata (RFC 8414). The issuer is the
 * public URL itself. OpenID discovery is not served: no ID tokens are issued, and clients read the
 * RFC 8414 document first.
 */
import { MCP_SCOPE } from './client-metadata.js';

export interface Endpoints {
  issuer: string;
  /** the canonical URI of /mcp: the `resource` clients send and the audience of every token */
  resource: string;
  /** where the protected resource metadata of /mcp is (the WWW-Authenticate challenge names it) */
  resourceMetadataUrl: string;
  authorization: string;
  token: string;
  registration: string;
  revocation: string;
  /** paths on this server that answer the protected resource metadata */
  resourceMetadataPaths: string[];
  /** paths on this server that answer the authorization server metadata */
  serverMetadataPaths: string[];
}

export function endpointsOf(publicUrl: string): Endpoints {
  const base = publicUrl.replace(/\/+$/, '');
  const url = new URL(base);
  const basePath = url.pathname.replace(/\/+$/, '');
  const prm = `/.well-known/oauth-protected-resource${basePath}/mcp`;
  return {
    issuer: base,
    resource: `${base}/mcp`,
    resourceMetadataUrl: `${url.origin}${prm}`,
    authorization: `${base}/authorize`,
    token: `${base}/token`,
    registration: `${base}/register`,
    revocation: `${base}/revoke`,
    resourceMetadataPaths: [...new Set([prm, `/.well-known/oauth-protected-resource${basePath}`])],
    serverMetadataPaths: [
      ...new Set(['/.well-known/oauth-authorization-server', `/.well-known/oauth-authorization-server${basePath}`]),
    ],
  };
}

/**
 * The `resource` parameter as this server's canonical resource (one trailing slash tolerated), or
 * undefined when it names something else (RFC 8707 invalid_target).
 */
export function canonicalResource(e: Endpoints, resource: string): string | undefined {
  return resource === e.resource || resource === `${e.resource}/` ? e.resource : undefined;
}

/** RFC 9728 §2. */
export function protectedResourceMetadata(e: Endpoints): Record<string, unknown> {
  return {
    resource: e.resource,
    authorization_servers: [e.issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Workbench',
  };
}

/** RFC 8414 §2, with client ID metadata documents and the iss response parameter (RFC 9207). */
export function authorizationServerMetadata(
  e: Endpoints,
  o: { dynamicRegistration: boolean; clientIdMetadataDocuments: boolean },
): Record<string, unknown> {
  return {
    issuer: e.issuer,
    authorization_endpoint: e.authorization,
    token_endpoint: e.token,
    ...(o.dynamicRegistration ? { registration_endpoint: e.registration } : {}),
    revocation_endpoint: e.revocation,
    scopes_supported: [MCP_SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: o.clientIdMetadataDocuments,
    authorization_response_iss_parameter_supported: true,
  };
}
