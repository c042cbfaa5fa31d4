/**
 * @module sandbox/process/host-link
 * Imported first by the sandbox process, so that it holds from the process's first moments: the
 * process lives exactly as long as its host.
 * - SIGINT and SIGTERM are ignored. A signal meant for the gateway often reaches its whole process
 *   group or cgroup (Ctrl-C in a terminal, systemd's KillMode=control-group, `timeout`,
 *   `kill -- -PGID`, a container runtime), and this process must outlive it: the host drains its
 *   calls in flight and then stops this process itself (a `close` message over IPC, SIGKILL after
 *   the grace period).
 * - It exits when its IPC channel to the host closes, whatever ended the host (SIGKILL included),
 *   even during its self-test.
 */
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
process.on('disconnect', () => process.exit(0));
if (!process.connected) process.exit(0);
