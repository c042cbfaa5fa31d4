/**
 * @module host/bridge/interceptors/inject-credential
 * Adds the user's credential to a request, host-side, after the egress policy allowed it, and
 * only when (a) the host is one of `credentialHosts(manifest)` — or, for a connection that names
 * its own instance, the origin is that instance's, and nothing else (the provider's default hosts
 * stay reachable, without it) — and (b) the hop is still on the origin of the plugin's original
 * request (a redirect to another origin never carries it). A credential sealed for another
 * instance than the call's (the connection was moved meanwhile) is not sent at all.
 * The credential is loaded lazily, at most once per call, the first time it is needed. A cookie
 * connection's credential is one Cookie header of the stored cookies that go with the request's
 * URL (cookie-header.ts), for the egress hosts within the manifest's `domains`.
 * `format` placeholders: `{name}` is the secret value `name`; `{base64:a:b}` is base64("a:b");
 * `{name.sub}` is `sub` of the record of the records field `name` whose key the request's
 * `inject.recordHeader` carries (records-field.ts stored the list as JSON text).
 */
import { credentialHosts, INJECT_PLACEHOLDER, type PluginManifest } from '../../../contracts/manifest.js';
import { BridgeError } from '../bridge-error.js';
import { cookieHeaderFor } from '../cookie-header.js';
import { policyHost } from '../../../common/normalise-url.js';
import type { CallScope, Credential, Interceptor, OutboundRequest } from '../types.js';

const PLACEHOLDER = INJECT_PLACEHOLDER;

/** Which record a request chose: the records field's key sub-field, and the value of the record header. */
export interface RecordChoice {
  key: string;
  header: string;
  value: string | undefined;
}

/** `sub` of the record of the records field `name` that `choice` names. */
function recordValue(credential: Credential, name: string, sub: string, choice: RecordChoice | undefined): string {
  const text = credential.values[name];
  let list: unknown;
  try {
    list = typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    list = undefined;
  }
  if (!Array.isArray(list) || !choice)
    throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `the connection has no records "${name}"`);
  if (choice.value === undefined)
    throw new BridgeError(
      'GW_ERR_BRIDGE_BAD_REQUEST',
      `the request chooses no record of "${name}": set the "${choice.header}" header to a record's ${choice.key}`,
    );
  const record = (list as Array<Record<string, unknown>>).find((r) => r?.[choice.key] === choice.value);
  const v = record?.[sub];
  if (!record)
    throw new BridgeError(
      'GW_ERR_BRIDGE_BAD_REQUEST',
      `the connection has no record of "${name}" whose ${choice.key} is "${choice.value.slice(0, 100)}"`,
    );
  if (typeof v !== 'string')
    throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `the connection's record has no credential value "${sub}"`);
  return v;
}

/** Renders the manifest's format; returns the header value and the secret pieces it contains. */
export function renderCredential(
  format: string,
  credential: Credential,
  choice?: RecordChoice,
): { value: string; pieces: string[] } {
  const pieces: string[] = [];
  const value = format.replace(PLACEHOLDER, (_m, a?: string, b?: string, name?: string, sub?: string) => {
    if (name !== undefined && sub !== undefined) {
      const v = recordValue(credential, name, sub, choice);
      pieces.push(v);
      return v;
    }
    if (name !== undefined) {
      const v = credential.values[name];
      if (typeof v !== 'string')
        throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', `the connection has no credential value "${name}"`);
      pieces.push(v);
      return v;
    }
    const left = credential.values[a ?? ''];
    const right = b ? credential.values[b] : '';
    if (typeof left !== 'string' || typeof right !== 'string') {
      throw new BridgeError(
        'GW_ERR_BRIDGE_BAD_REQUEST',
        `the connection has no credential value "${typeof left !== 'string' ? a : b}"`,
      );
    }
    const encoded = Buffer.from(`${left}:${right}`, 'utf8').toString('base64');
    pieces.push(left, right, encoded);
    return encoded;
  });
  if (/[\r\n\0]/.test(value))
    throw new BridgeError('GW_ERR_BRIDGE_BAD_REQUEST', 'the credential is not a valid header value');
  return { value, pieces };
}

/** The record a request chose, for a manifest whose credential is one record of a records field. */
function recordChoice(manifest: PluginManifest, req: OutboundRequest): RecordChoice | undefined {
  if (manifest.auth.type !== 'apikey' || !manifest.auth.inject.recordHeader) return undefined;
  const field = manifest.auth.fields.find((f) => f.records);
  if (!field?.records) return undefined;
  const header = manifest.auth.inject.recordHeader.toLowerCase();
  return { key: field.records.key, header, value: req.headers[header] };
}

/** Whether the credential of the call's connection is bound to `url`: its instance's origin, else the manifest's credential hosts. */
function boundTo(scope: CallScope, url: URL): boolean {
  if (scope.instance !== undefined) return url.origin === scope.instance;
  return credentialHosts(scope.manifest).includes(policyHost(url));
}

export function injectCredential(): Interceptor {
  return (next) =>
    async function injectCredentialStep(req, call) {
      const { manifest } = call.scope;
      const auth = manifest.auth;
      // a host reached only as "any public host" never gets the credential
      if (auth.type === 'none' || req.anyHost) return next(req, call);
      const sameOrigin = req.hop === 0 || req.url.origin === req.initialOrigin;
      if (!sameOrigin || !boundTo(call.scope, req.url)) return next(req, call);
      // a partial answer (206) could cut a quoted credential into pieces redaction cannot match
      if (req.headers['range'] !== undefined || req.headers['if-range'] !== undefined)
        throw new BridgeError(
          'GW_ERR_BRIDGE_BAD_REQUEST',
          "Range requests are not allowed where the connection's credential is sent",
        );
      const credential = await call.credential();
      if (!credential) return next(req, call);
      if (credential.instance !== call.scope.instance)
        throw new BridgeError(
          'GW_ERR_BRIDGE_CONNECTION_CHANGED',
          `the ${manifest.displayName} connection was moved to another instance while this call ran; retry the call`,
        );
      if (auth.type === 'cookie') {
        // the plugin cannot have set a Cookie header of its own: validate-request refuses it
        const header = cookieHeaderFor(credential.cookies ?? [], req.url, Date.now());
        if (header === undefined) return next(req, call);
        call.addSecret(header);
        return next({ ...req, headers: { ...req.headers, cookie: header } }, call);
      }
      const { value, pieces } = renderCredential(auth.inject.format, credential, recordChoice(manifest, req));
      for (const p of [value, ...pieces]) call.addSecret(p);
      return next({ ...req, headers: { ...req.headers, [auth.inject.header.toLowerCase()]: value } }, call);
    };
}
