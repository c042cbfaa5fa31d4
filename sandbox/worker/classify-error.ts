/**
 * @module sandbox/worker/classify-error
 * The one translation table from isolated-vm / V8 failures to `SANDBOX_ERROR_CODES` (STYLE §7.1:
 * third-party errors go through one explicit map). Matching on isolated-vm's messages is the only
 * option: it does not give its errors codes.
 */
import type { SandboxErrorCode } from '../../contracts/protocol.js';

export interface Classified {
  code: SandboxErrorCode;
  message: string;
  /** the isolate must be thrown away (terminated, over its memory limit, or in an unknown state) */
  dispose: boolean;
}

const MEMORY_THROWN =
  /^(RangeError: )?(Array buffer allocation failed|Invalid string length|Invalid array length|Invalid typed array length|Maximum BigInt size exceeded)/;

/** Cleans a message that came out of plugin code: no control characters, bounded length. */
export function cleanMessage(message: string, max = 2000): string {
  // Stripping control characters is the point.
  return message.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ').slice(0, max);
}

/** A failure raised by isolated-vm while the host was calling into the isolate. */
export function classifyIsolateError(e: unknown, phase: 'setup' | 'run'): Classified {
  const raw = e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}` : String(e);
  const message = cleanMessage(raw);
  if (/Script execution timed out/.test(raw)) {
    return {
      code: 'GW_ERR_SANDBOX_TIMEOUT',
      message: 'the handler used more CPU time than allowed for one step (Script execution timed out)',
      dispose: true,
    };
  }
  if (/memory limit/i.test(raw))
    return {
      code: 'GW_ERR_SANDBOX_MEMORY',
      message: 'the isolate exceeded its memory limit and was disposed',
      dispose: true,
    };
  if (/disposed/i.test(raw))
    return { code: 'GW_ERR_SANDBOX_CRASHED', message: 'the isolate was disposed during the call', dispose: true };
  if (MEMORY_THROWN.test(raw)) return { code: 'GW_ERR_SANDBOX_MEMORY', message, dispose: true };
  if (phase === 'setup')
    return {
      code: 'GW_ERR_SANDBOX_LOAD_FAILED',
      message: `the plugin module failed to load: ${message}`,
      dispose: false,
    };
  return { code: 'GW_ERR_SANDBOX_HANDLER_THREW', message, dispose: true };
}

/** A failure the bootstrap reported from inside the isolate (`fail` message). */
export function classifyReport(report: { code?: unknown; message?: unknown; errorCode?: unknown }): Classified {
  const message = cleanMessage(typeof report.message === 'string' ? report.message : 'the handler failed');
  const allowed: SandboxErrorCode[] = [
    'GW_ERR_SANDBOX_TOOL_MISSING',
    'GW_ERR_SANDBOX_RESULT_INVALID',
    'GW_ERR_SANDBOX_RESULT_TOO_LARGE',
  ];
  if (typeof report.code === 'string' && (allowed as string[]).includes(report.code)) {
    return { code: report.code as SandboxErrorCode, message, dispose: false };
  }
  if (MEMORY_THROWN.test(message)) return { code: 'GW_ERR_SANDBOX_MEMORY', message, dispose: true };
  const withCode =
    typeof report.errorCode === 'string' &&
    /^[A-Z0-9_]{1,64}$/.test(report.errorCode) &&
    !message.includes(report.errorCode)
      ? `${message} (${report.errorCode})`
      : message;
  return { code: 'GW_ERR_SANDBOX_HANDLER_THREW', message: withCode, dispose: false };
}
