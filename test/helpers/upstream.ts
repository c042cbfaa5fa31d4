/**
 * @module test/helpers/upstream
 * The loopback stand-in for a provider: the security report's recording server, shared with tests.
 */
export * from '../../host/security-report/recording-server.js';
