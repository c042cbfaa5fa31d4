/**
 * @module host/security-report/free-port
 * Asks the kernel for a free loopback port, for servers whose URL must be known before they start.
 */
import net from 'node:net';

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
