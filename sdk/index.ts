/**
 * @module sdk
 * The plugin SDK: what a plugin's TypeScript imports as `workbench/plugin-sdk`. Defining a plugin
 * and its tools (define.ts) and their usual hints (annotations.ts), one JSON client per provider
 * with the one error mapping (http.ts), safe query strings and path segments (url.ts), pages
 * within the call's request budget (paginate.ts), bytes within the size caps (binary.ts), long
 * text cut or read a window at a time (text.ts), the error body all Google APIs share (google.ts),
 * the Atlassian Cloud site a call acts on (atlassian.ts) and clone URLs without a credential
 * (clone-url.ts). Nothing here imports the gateway's host code or Node.js: `workbench plugin
 * build` bundles what a plugin uses into its plugin.js.
 */
export * from './define.js';
export * from './annotations.js';
export * from './http.js';
export * from './url.js';
export * from './paginate.js';
export * from './binary.js';
export * from './google.js';
export * from './atlassian.js';
export * from './text.js';
export * from './clone-url.js';
