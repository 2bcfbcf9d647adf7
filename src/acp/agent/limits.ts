// The protocol adapter's default bounds, apart from the runtime and the HTTP service so that
// `serve`'s defaults (and its --help) can name them without loading either.

/** Sessions an `AcpHeadlessRuntime` keeps open at once unless `maxSessions` says otherwise; session/new beyond it is refused. */
export const DEFAULT_MAX_SESSIONS = 32;

/** Open ACP connections an `AcpHttpService` allows at once unless `maxConnections` says otherwise; more get HTTP 503. */
export const DEFAULT_MAX_CONNECTIONS = 256;
/** Largest HTTP request body / WebSocket message an `AcpHttpService` accepts unless `maxMessageBytes` says otherwise (4 MiB). */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** How long an `AcpHttpService` keeps a Streamable HTTP connection with no stream and no request (30 s). */
export const DEFAULT_IDLE_CONNECTION_MS = 30_000;
