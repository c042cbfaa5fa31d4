/**
 * @module test/helpers/free-port
 * A free loopback port: the security report's helper, shared with tests.
 */
export { freePort } from '../../host/security-report/free-port.js';
