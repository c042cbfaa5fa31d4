/**
 * @module host/telemetry/logger
 * The pino logger shared by fastify and the engine. LOG_LEVEL sets the level; credentials and API
 * keys are redacted by path, and query-string tokens are cut out of logged URLs.
 */
import pino from 'pino';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-workbench-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  '*.apiKey',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.password',
  '*.secret',
];

export type Logger = pino.Logger;

export function createLogger(options: { level?: string; destination?: 'stdout' | 'stderr' | 'silent' } = {}): Logger {
  const level = options.level ?? process.env['LOG_LEVEL'] ?? 'info';
  if (options.destination === 'silent') return pino({ level: 'silent' });
  const dest = pino.destination({ fd: options.destination === 'stderr' ? 2 : 1, sync: false });
  return pino(
    {
      level,
      base: { service: 'workbench' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: { method?: string; url?: string; id?: string }) => ({
          method: req.method,
          url: stripSecretsFromUrl(req.url ?? ''),
          id: req.id,
        }),
      },
    },
    dest,
  );
}

/** Removes query parameters that commonly carry secrets from a URL before it is logged. */
export function stripSecretsFromUrl(url: string): string {
  return url.replace(
    /([?&](?:token|code|state|access_token|refresh_token|api_key|apikey|key|password|secret)=)[^&#]*/gi,
    '$1[redacted]',
  );
}
