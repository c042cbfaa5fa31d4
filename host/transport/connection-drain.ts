/**
 * @module host/transport/connection-drain
 * Closing the HTTP server without waiting on connections that carry no request. Node's
 * `server.close()` waits for every connection, and fastify's "idle" force-close ends only
 * keep-alive connections between two requests: a connection that was opened but has not sent a
 * request yet (clients and proxies pre-connect) counts as active until Node's headersTimeout reaps
 * it, so a shutdown waited about a minute for nothing. This tracks, with public events only, which
 * connections are answering a request; at close the others are ended at once, and each busy one
 * as soon as its answer has been sent.
 *
 * If the server is still listening when the wait for it to stop gives up (fastify runs its close
 * hooks before it closes the listener), connections keep arriving; each is closed as it is
 * accepted, as if it had been refused. It cannot be answering a request yet (Node reads from it
 * only after the 'connection' listeners have run), so nothing that ran loses its answer, and a
 * client or proxy retries elsewhere as it would after a refused connection.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionDrain {
  /**
   * Once the server has stopped listening (new connections are refused, not reset), ends every
   * connection not answering a request, and each busy one once its answer is out. If the server
   * is still listening after `stopListeningWaitMs`, it ends them anyway, and from then on closes
   * each new connection as it arrives.
   */
  endIdleOnceClosed(): Promise<void>;
}

export interface DrainOptions {
  /** How long to wait for the server to stop listening after close() began (fastify runs its hooks first). */
  stopListeningWaitMs?: number;
}

const STOP_LISTENING_WAIT_MS = 5_000;

function end(socket: Socket): void {
  if (socket.destroyed) return;
  // flush what is written, then close: an answer just finished is not cut
  socket.end(() => socket.destroy());
}

export function trackConnections(server: Server, options: DrainOptions = {}): ConnectionDrain {
  const waitMs = options.stopListeningWaitMs ?? STOP_LISTENING_WAIT_MS;
  const open = new Set<Socket>();
  const busy = new Map<Socket, number>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    // Nothing written, no request read yet: close at once (not end(), which would keep reading
    // until the FIN is flushed and could still start a request it cannot answer).
    if (closing) return void socket.destroy();
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) return void busy.set(socket, left);
      busy.delete(socket);
      if (closing) end(socket);
    });
  });
  return {
    async endIdleOnceClosed() {
      const until = Date.now() + waitMs;
      while (server.listening && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
      closing = true;
      for (const socket of open) if (!busy.has(socket)) end(socket);
    },
  };
}
