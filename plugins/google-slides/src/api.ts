/**
 * @module plugins/google-slides/src/api
 * The Google Slides API v1 client on the SDK's createApi, with the plugin's words for a failed
 * answer (a rate limit Google sends as 403, a missing OAuth scope, a write refused because the
 * presentation changed after the revision it was planned on, a request Slides finds invalid), and
 * presentation ids taken from ids or links. The gateway adds the Bearer token: this code never
 * sets it.
 */
import {
  createApi,
  googleErrorInfo,
  googleReasonKind,
  type ApiFailure,
  type BridgeFailure,
} from 'workbench/plugin-sdk';

const SCOPE = 'https://www.googleapis.com/auth/presentations';

function slidesWords(f: ApiFailure): string {
  const info = googleErrorInfo(f.data);
  const kind = googleReasonKind(info);
  const { action, detail: msg } = f;
  const code = f.status;
  const said = msg ? ` Google said: ${msg}.` : '';
  if (code === 401)
    return `Google rejected the access token (401) while trying to ${action}: reconnect google-slides.${said}`;
  if (
    code === 429 ||
    info.status === 'RESOURCE_EXHAUSTED' ||
    (code === 403 && (kind === 'rate-limit' || kind === 'daily-limit'))
  ) {
    const wait =
      f.retryAfterSec !== undefined
        ? `retry after ${f.retryAfterSec} seconds`
        : 'Slides quotas are per minute: wait a minute and retry';
    return `Google Slides rate limited the request to ${action} (${code}): ${wait}.`;
  }
  if (code === 403 && (kind === 'scope' || /insufficient authentication scopes/i.test(msg)))
    return `The google-slides connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-slides and approve access to presentations.`;
  if (code === 403 && kind === 'disabled')
    return `The Google Slides API is not enabled for the gateway's Google Cloud project (403) while trying to ${action}: an operator must enable it.${said}`;
  if (code === 403)
    return `Google Slides refused to ${action} (403): ${msg || 'your Google account lacks access to this presentation'}. Ask its owner to share it with you (editor access to change it).`;
  if (code === 404)
    return `Google Slides found nothing while trying to ${action} (404): ${msg || 'no such presentation'}. Check the id; Google also answers 404 for a presentation you cannot see.`;
  if (code === 400 && f.options['lock'] && (info.status === 'FAILED_PRECONDITION' || /revision/i.test(msg)))
    return `Google Slides refused to ${action} (400): the presentation changed after revision ${String(f.options['lock'])} was read, so nothing was written. Read it again (slides_get_presentation) and redo the change.${said}`;
  if (code === 400 || code === 409 || code === 422)
    return `Google Slides refused to ${action} (${code}): ${msg || 'the request was not valid'}. In a batch, nothing is applied when one request fails.`;
  if (code >= 500) return `Google Slides had a server error (${code}) while trying to ${action}: retry later.${said}`;
  return `Google Slides answered HTTP ${code} while trying to ${action}.${said}`;
}

function slidesBridgeWords(f: BridgeFailure): Error {
  if (f.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE')
    return new Error(
      `The answer to ${f.action} was larger than the gateway accepts: read fewer slides (fromSlide, maxSlides).`,
    );
  if (f.code !== 'GW_ERR_BRIDGE_TIMEOUT') return f.error;
  const next =
    f.method === 'GET'
      ? 'retry in a moment'
      : 'it may still have been done, so read the presentation before trying again';
  return new Error(`Google Slides did not answer in time while trying to ${f.action}: ${next}.`);
}

export const api = createApi({
  base: 'https://slides.googleapis.com/v1/presentations',
  provider: 'Google Slides',
  integration: 'google-slides',
  failure: (f) => new Error(slidesWords(f)),
  bridgeFailure: slidesBridgeWords,
});

/** A presentation id, or the id inside a Google Slides link (…/presentation/d/<id>/edit). */
export function presentationIdOf(value: string): string {
  const s = value.trim();
  if (/\/(document|spreadsheets|forms|drawings)\/(?:u\/\d+\/)?d\//.test(s))
    throw new Error(
      `presentationId "${s.slice(0, 100)}" is a link to another kind of Google file, not to a presentation.`,
    );
  const m = /\/presentation\/(?:u\/\d+\/)?d\/([A-Za-z0-9_-]{2,})/.exec(s) || /[?&]id=([A-Za-z0-9_-]{2,})/.exec(s);
  const id = m ? m[1] : s;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id))
    throw new Error(`presentationId "${s.slice(0, 100)}" is neither a presentation id nor a Google Slides link.`);
  return id;
}

export const presentationUrl = (id: string): string => `https://docs.google.com/presentation/d/${id}/edit`;

/** What a batch of requests answers: a reply per request, and the new revision. */
export type BatchAnswer = {
  presentationId?: string;
  replies?: Array<Record<string, unknown>>;
  writeControl?: { requiredRevisionId?: string };
};
