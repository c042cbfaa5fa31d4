/**
 * @module contracts/isolate
 * What the host and the code run inside each isolate (sandbox/isolate/) agree on without sharing a
 * module: the global the sandbox process's V8 exposes its gc function under, and the longest
 * regular-expression pattern plugin code may build. The host uses them to start the sandbox
 * process and to check plugin.js when it loads; the isolate's bootstrap script bakes them in.
 */

/** the name under which the sandbox process's V8 exposes its gc function (`--expose-gc-as`) */
export const GC_GLOBAL = '__wb_gc';

/**
 * The longest regular-expression pattern plugin code may build at run time, in UTF-16 units. V8
 * parses and compiles a pattern without stopping for the step's time limit, and some constructs
 * cost ~45 µs a character (Unicode set operations, case-insensitive properties: 15,000 characters
 * took 0.65 s here); a termination that waits longer than ~5 s loses the whole sandbox process.
 * Literals in plugin.js are held to the same bound when it loads (host/registry/regexp-literals.ts).
 */
export const MAX_REGEXP_SOURCE = 20_000;
