/**
 * @module host/portal/connect-views
 * The bodies of the connect pages: the OAuth2 "continue to the provider" step (with, where the
 * integration takes them, the instance URL and a personal token instead of the round trip; and the
 * page that then goes on to the provider), the API-key form (labels, hints, per-field errors wired
 * with aria-describedby; secrets never echoed back), and the result page for each outcome.
 */
import {
  INSTANCE_CONFIG_KEY,
  type ApiKeyField,
  type InstanceSpec,
  type PluginManifest,
} from '../../contracts/manifest.js';
import type { PendingConnect } from '../connections/pending.js';
import { html, type SafeHtml } from './html.js';

/** What the connect page shows again after a refused post, and what it starts from. */
export interface ConnectFormState {
  /** the instance URL in the field: as posted, else the agent's suggestion or the connection's own */
  instanceUrl?: string;
  /** the agent's connect named the instance: the person is asked to check it */
  suggested?: boolean;
  /** field name → problem; `form` for one that is about no field */
  errors?: Record<string, string>;
}

/** The list of problems at the top of a form, each linked to the input it is about (when the form has it). */
function problemList(errors: Record<string, string>, target: (field: string) => string | undefined): SafeHtml | '' {
  const n = Object.keys(errors).length;
  if (n === 0) return '';
  return html`<div class="error" role="alert"><p>Please fix ${n === 1 ? 'this problem' : `these ${n} problems`}:</p><ul>${Object.entries(
    errors,
  ).map(([k, v]) => {
    const to = target(k);
    return html`<li>${to ? html`<a href="#f-${to}">${v}</a>` : v}</li>`;
  })}</ul></div>`;
}

/** The instance URL field (empty: the provider's default); the agent's suggestion is pointed out. */
function instanceInput(spec: InstanceSpec, state: ConnectFormState): SafeHtml {
  const id = `f-${INSTANCE_CONFIG_KEY}`;
  const error = state.errors?.[INSTANCE_CONFIG_KEY];
  const described = [`${id}-hint`, error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<label for="${id}">${spec.label} <span class="hint">(optional)</span></label>
<p class="hint" id="${id}-hint">${spec.description ?? `Leave it empty for ${spec.default}.`} The credential is sent to this address only.</p>
${state.suggested ? html`<p class="warn">The agent that asked for this link named this address: check that it is your organisation's before you go on.</p>` : ''}<input type="text" inputmode="url" autocomplete="url" spellcheck="false" id="${id}" name="${INSTANCE_CONFIG_KEY}" value="${state.instanceUrl ?? ''}" placeholder="${spec.default}" aria-describedby="${described}"${error ? html` aria-invalid="true"` : ''}>
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}`;
}

/**
 * The first page of an OAuth2 link: "Continue" to the provider; for an integration that takes an
 * instance, its URL first; for one that takes a personal token, the token as the other way in
 * (`oauth`: whether the OAuth sign-in is offered at all on this server).
 */
export function oauthStartBody(
  m: PluginManifest & { auth: { type: 'oauth2' } },
  p: PendingConnect,
  email: string,
  csrf: string,
  /** `oauthInstances`: where the sign-in is set up (the default's origin, when its client is) */
  state: ConnectFormState & { oauth: boolean; oauthInstances?: readonly string[] },
): SafeHtml {
  const { instance, personalToken } = m.auth;
  const intro = html`<p>Connect your <strong>${m.displayName}</strong> account to Workbench (signed in as ${email}).</p>`;
  const signIn = html`<p>You will be sent to ${m.displayName} to approve access, then brought back here. If an agent asked for this link, it continues on its own once you are done.</p>`;
  if (!instance && !personalToken)
    return html`${intro}
${signIn}
<form method="post" action="/connect/${p.id}"><input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Continue to ${m.displayName}</button></form>`;
  const errors = state.errors ?? {};
  const target = (k: string): string | undefined =>
    k === INSTANCE_CONFIG_KEY && instance ? k : k === 'token' && personalToken ? 'token' : undefined;
  const tokenError = errors['token'];
  // a token typed and Enter pressed submits the first button (OAuth): the route takes a filled-in token as the choice
  return html`${intro}
${problemList(errors, target)}
<form method="post" action="/connect/${p.id}" novalidate><input type="hidden" name="_csrf" value="${csrf}">
${instance ? instanceInput(instance, state) : ''}
${
  state.oauth
    ? html`<h2>Sign in</h2>${signIn}${
        instance && state.oauthInstances?.length
          ? html`<p class="hint">Sign-in is set up for ${state.oauthInstances.join(', ')}${personalToken ? '; for another instance, use a token' : ''}.</p>`
          : ''
      }
<p><button type="submit" name="method" value="oauth">Continue to ${m.displayName}</button></p>`
    : ''
}
${
  personalToken
    ? html`<h2>${state.oauth ? 'Or use a token' : 'Use a token'}</h2>
<label for="f-token">${personalToken.label}</label>
${personalToken.description ? html`<p class="hint" id="f-token-hint">${personalToken.description}</p>` : ''}<input type="password" autocomplete="off" spellcheck="false" id="f-token" name="token"${personalToken.description || tokenError ? html` aria-describedby="${[personalToken.description ? 'f-token-hint' : '', tokenError ? 'f-token-error' : ''].filter(Boolean).join(' ')}"` : ''}${tokenError ? html` aria-invalid="true"` : ''}>
${tokenError ? html`<p class="error" id="f-token-error">${tokenError}</p>` : ''}
<p><button type="submit" name="method" value="token">Connect with this token</button></p>`
    : ''
}</form>`;
}

/** The answer to "Continue": it goes on to the provider by itself (meta refresh), or with this link. */
export function oauthContinueBody(m: PluginManifest, authorizationUrl: string): SafeHtml {
  return html`<p role="status">Taking you to ${m.displayName} to approve access.</p>
<p>If nothing happens, <a href="${authorizationUrl}">continue to ${m.displayName}</a>.</p>`;
}

function fieldInput(f: ApiKeyField, value: string, error: string | undefined): SafeHtml {
  const id = `f-${f.name}`;
  const described = [f.description ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = html` id="${id}" name="${f.name}"${f.required ? html` required aria-required="true"` : ''}${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''}`;
  const control = f.enum
    ? html`<select${common}>${f.required ? '' : html`<option value="">(none)</option>`}${f.enum.map(
        (o) => html`<option value="${o}"${o === (value || f.default) ? html` selected` : ''}>${o}</option>`,
      )}</select>`
    : f.secret
      ? html`<input type="password" autocomplete="off" spellcheck="false"${common}>`
      : html`<input type="text" autocomplete="off" spellcheck="false" value="${value || f.default || ''}"${common}>`;
  return html`<label for="${id}">${f.label}${f.required ? '' : html` <span class="hint">(optional)</span>`}</label>
${f.description ? html`<p class="hint" id="${id}-hint">${f.description}</p>` : ''}${control}
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}`;
}

export function apiKeyFormBody(
  m: PluginManifest & { auth: { type: 'apikey' } },
  p: PendingConnect,
  csrf: string,
  values: Record<string, string> = {},
  errors: Record<string, string> = {},
  state: ConnectFormState = {},
): SafeHtml {
  // Each problem links to the input it is about, when the form has one: a field's error to the
  // field, the form-level one ("Fill in at least one secret field") to the first secret field. A
  // field the form does not have (an unknown name that was posted) has nothing to link to.
  const fields = new Set(m.auth.fields.map((f) => f.name));
  if (m.auth.instance) fields.add(INSTANCE_CONFIG_KEY);
  const firstSecret = m.auth.fields.find((f) => f.secret)?.name;
  const target = (k: string): string | undefined => (fields.has(k) ? k : k === 'form' ? firstSecret : undefined);
  return html`${problemList(errors, target)}
<p>Enter your ${m.displayName} credentials. Secret values are encrypted and are never shown again, not even to plugins.</p>
${m.auth.instructions ? html`<p class="hint">${m.auth.instructions}</p>` : ''}
<form method="post" action="/connect/${p.id}/form" novalidate><input type="hidden" name="_csrf" value="${csrf}">
${m.auth.instance ? instanceInput(m.auth.instance, { ...state, errors }) : ''}
${m.auth.fields.map((f) => fieldInput(f, f.secret ? '' : (values[f.name] ?? ''), errors[f.name]))}
<p><button type="submit">Connect ${m.displayName}</button></p></form>`;
}

/**
 * A link comes from an agent's `connect` tool or from Connect on the integrations page, and the
 * pending record does not say which: the texts fit both (no "your agent continues" to someone who
 * clicked Connect themselves, no "ask your agent" as the only way to start again).
 */
export const RESULT_TEXT: Record<
  'connected' | 'denied' | 'expired' | 'failed',
  { title: string; cls: string; text: string }
> = {
  connected: {
    title: 'Connected',
    cls: 'ok',
    text: 'is connected and ready for your agents. An agent that asked for this link continues on its own; you can close this page.',
  },
  denied: {
    title: 'Access not granted',
    cls: 'warn',
    text: 'access was declined at the provider. If you change your mind, connect it again from the integrations page (or ask your agent for a new link).',
  },
  expired: {
    title: 'Link expired',
    cls: 'warn',
    text: 'the link expired before it was completed. Connect it again from the integrations page, or ask your agent for a new link.',
  },
  failed: { title: 'Connection failed', cls: 'error', text: 'could not be connected.' },
};

export function resultBody(
  m: PluginManifest | undefined,
  p: PendingConnect,
  status: keyof typeof RESULT_TEXT,
): SafeHtml {
  const r = RESULT_TEXT[status];
  return html`<p class="${r.cls}" role="status"><strong>${m?.displayName ?? p.integration}</strong>: ${r.text}</p>
${status === 'failed' && p.statusReason ? html`<p>${p.statusReason}</p>` : ''}
<p><a href="/integrations">See all integrations</a></p>`;
}

/** A link of another account: whose it is, who is signed in, and a way to sign out and come back as its owner. */
export function otherAccountBody(
  o: { integration: string; owner: string; signedIn: string },
  linkPath: string,
  csrf: string,
): SafeHtml {
  return html`<p class="error" role="alert">This link was created for a different Workbench account: it connects <strong>${o.integration}</strong> for <strong>${o.owner}</strong>, and you are signed in as <strong>${o.signedIn}</strong>.</p>
<p>To finish connecting, sign out and sign in as ${o.owner}; you come back to this link.</p>
<form method="post" action="/logout"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="next" value="${linkPath}">
<button type="submit">Sign out and sign in as ${o.owner}</button></form>
<p>Or <a href="/integrations">connect ${o.integration} for your own account</a> from the integrations page.</p>`;
}
