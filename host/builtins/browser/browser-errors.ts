/**
 * @module host/builtins/browser/browser-errors
 * Playwright's failures as the catalogue's GW_ERR_BROWSER_* errors the agent reads. A failure that
 * says a target closed is looked at again a moment later: a killed browser first shows as "target
 * closed" on the call in flight, and only then as the browser's exit, and the caller must be told
 * the cause (GW_ERR_BROWSER_CRASHED), not the symptom. What matches nothing is passed on as it is
 * (the engine answers GW_ERR_BUILTIN_FAILED and logs it).
 */
import { errors as playwrightErrors, type Page } from 'playwright-core';
import { fail, isWorkbenchError } from '../../../contracts/errors.js';
import type { Refusal } from './address-guard.js';
import { endError, type UserContext } from './user-context.js';

/** What the failed step was doing: a timeout means a slow page, or an element that never came. */
export type Step = 'navigation' | 'action' | 'other';

/** How long to wait for a closed target's cause (the browser's exit, the context's end), ms. */
const CAUSE_WAIT_MS = 1_000;

const textOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function addressRefused(r: Refusal): Error {
  return fail(
    'GW_ERR_BROWSER_ADDRESS_REFUSED',
    {
      message: `the browser may not reach ${r.host}: it is a ${r.range} address (only public addresses are reached, unless builtins.browser.allowPrivateCidrs allows the range)`,
    },
    { details: { host: r.host, range: r.range } },
  );
}

/** The catalogue error for `err`, thrown by a step on `page` of `uc` that started at `since` (ms). */
export async function browserError(
  err: unknown,
  uc: UserContext,
  step: Step,
  since: number,
  page?: Page,
): Promise<unknown> {
  if (isWorkbenchError(err)) return err;
  const text = textOf(err);
  if (/closed|crash|disconnected/i.test(text) && !uc.endReason && !uc.running.isGone)
    await Promise.race([uc.running.gone, uc.ended.catch(() => undefined), delay(CAUSE_WAIT_MS)]);
  if (uc.endReason) return endError(uc.endReason);
  if (uc.running.isGone) return endError('crashed');
  if ((page && uc.isCrashed(page)) || /Target crashed|Page crashed/i.test(text))
    return fail('GW_ERR_BROWSER_PAGE_CRASHED', {
      message:
        'the page crashed (its renderer died, often from using too much memory: builtins.browser.maxPageHeapMb); it was closed. Navigate again',
    });
  const net = /net::(ERR_[A-Z_]+)/.exec(text)?.[1];
  if (net) return netError(net, uc.refusalsSince(since), text);
  if (/Download is starting/i.test(text))
    return fail('GW_ERR_BROWSER_NAVIGATION_FAILED', {
      message: 'the URL answers a download, and downloads are off in this browser',
    });
  if (err instanceof playwrightErrors.TimeoutError) return timeoutError(step, text);
  if (/Unknown key/i.test(text))
    return fail('GW_ERR_VALIDATION_INVALID_ARGS', {
      message: `${firstLine(text)}; see the tool's description for key names`,
    });
  if (/selector|while parsing|Unexpected token/i.test(text))
    return fail('GW_ERR_VALIDATION_INVALID_ARGS', { message: `the selector is not valid: ${firstLine(text)}` });
  return err;
}

/** What a net:: code means for someone who only sees the agent's answer. */
const NET_HINTS: Readonly<Record<string, string>> = {
  ERR_SOCKS_CONNECTION_HOST_UNREACHABLE: 'the host name does not resolve, or the host cannot be reached',
  ERR_NAME_NOT_RESOLVED: 'the host name does not resolve, or the host cannot be reached',
  // the address proxy reached no one: no network route from the gateway, or the connection was refused
  ERR_SOCKS_CONNECTION_FAILED: 'the gateway could not connect to the host (no network route to it, or it refused)',
  ERR_UNSAFE_PORT: 'browsers refuse that port',
};

export function netError(net: string, refusals: readonly Refusal[], text: string): Error {
  const refusal = refusals.at(-1);
  if (refusal && /BLOCKED_BY_CLIENT|SOCKS|PROXY|TUNNEL/.test(net)) return addressRefused(refusal);
  if (net === 'ERR_TIMED_OUT')
    return fail('GW_ERR_BROWSER_NAVIGATION_TIMEOUT', { message: `the page did not answer in time (${net})` });
  const hint = NET_HINTS[net] === undefined ? '' : `: ${NET_HINTS[net]}`;
  return fail('GW_ERR_BROWSER_NAVIGATION_FAILED', {
    message: `the page could not be loaded: net::${net}${hint} (${firstLine(text).slice(0, 200)})`,
  });
}

function timeoutError(step: Step, text: string): Error {
  if (step === 'navigation')
    return fail('GW_ERR_BROWSER_NAVIGATION_TIMEOUT', {
      message: `the page did not finish loading in time (builtins.browser.navigationTimeoutMs): ${firstLine(text).slice(0, 200)}`,
    });
  return fail('GW_ERR_BROWSER_ELEMENT_NOT_FOUND', {
    message: `no element matched, or it did not become visible and usable in time (builtins.browser.actionTimeoutMs): ${firstLine(text).slice(0, 300)}. Take a screenshot or read the text, then try another selector or coordinates`,
  });
}

const firstLine = (text: string): string => (text.split('\n')[0] ?? '').replace(/^\w+\.\w+: /, '');

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());
