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
 * Node does not tell the client: an answer still being prepared when the server stops listening
 * goes out with `Connection: keep-alive`, and a client may put its next request on a socket that
 * is about to be ended. So from then on the last answer pending on each connection is sent with
 * `Connection: close` if its headers are not out yet (Node then closes the socket after it, as we
 * do). Only the last: an earlier answer saying close would make Node drop the requests pipelined
 * behind it, which are already running.
 *
 * If the server is still listening when the wait for it to stop gives up (fastify runs its close
 * hooks before it closes the listener), connections keep arriving; each is closed as it is
 * accepted, as if it had been refused. It cannot be answering a request yet (Node reads from it
 * only after the 'connection' listeners have run), so nothing that ran loses its answer, and a
 * client or proxy retries elsewhere as it would after a refused connection.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionDrain {
  /**
   * Once the server has stopped listening (new connections are refused, not reset), ends every
   * connection not answering a request, and each busy one once its answer is out (that answer
   * says `Connection: close` if its headers were not sent yet). If the server is still listening
   * after `stopListeningWaitMs`, it ends them anyway, and from then on closes each new connection
   * as it arrives.
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
  /** the answers pending on each connection that is answering, in the order they will be sent */
  const answering = new Map<Socket, ServerResponse[]>();
  /** answers we marked `Connection: close` (unmarked if a pipelined request comes in behind them) */
  const markedClose = new WeakSet<ServerResponse>();
  let closing = false;

  function closeAfterLastAnswer(socket: Socket): void {
    const answers = answering.get(socket) ?? [];
    for (const [i, res] of answers.entries()) {
      if (res.headersSent) continue;
      if (i === answers.length - 1) {
        res.setHeader('connection', 'close');
        markedClose.add(res);
      } else if (markedClose.delete(res)) res.removeHeader('connection');
    }
  }

  server.on('connection', (socket: Socket) => {
    // Nothing written, no request read yet: close at once (not end(), which would keep reading
    // until the FIN is flushed and could still start a request it cannot answer).
    if (closing) return void socket.destroy();
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      answering.delete(socket);
    });
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    const answers = answering.get(socket) ?? [];
    answering.set(socket, [...answers, res]);
    if (closing) closeAfterLastAnswer(socket);
    res.once('close', () => {
      const left = (answering.get(socket) ?? []).filter((r) => r !== res);
      if (left.length > 0) return void answering.set(socket, left);
      answering.delete(socket);
      if (closing) end(socket);
    });
  });
  return {
    async endIdleOnceClosed() {
      const until = Date.now() + waitMs;
      while (server.listening && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
      closing = true;
      for (const socket of open) {
        if (answering.has(socket)) closeAfterLastAnswer(socket);
        else end(socket);
      }
    },
  };
}
