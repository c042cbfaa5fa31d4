/**
 * @module sandbox/process/self-test
 * Start-up check of the sandbox process: create an isolate and compute 1+1 in it. It catches a
 * missing `--no-node-snapshot` or a native-module ABI mismatch after a Node upgrade before any
 * plugin call is accepted (sandbox.md §5.6).
 */
import ivm from 'isolated-vm';
import { fail } from '../../contracts/errors.js';

export async function selfTest(): Promise<void> {
  const isolate = new ivm.Isolate({ memoryLimit: 16 });
  try {
    const context = await isolate.createContext();
    const two: unknown = await context.eval('1 + 1', { timeout: 1000 });
    if (two !== 2)
      throw fail('GW_ERR_SANDBOX_UNAVAILABLE', { message: `isolate self-test computed ${String(two)} for 1 + 1` });
  } finally {
    isolate.dispose();
  }
}
