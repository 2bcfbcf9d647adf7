import type { Server, Socket } from "node:net";
import { connect, createServer } from "node:net";

/**
 * A loopback TCP relay to a server (e.g. PostgreSQL), which a test can cut and restore to make
 * the server "go away" for one client without touching the server.
 */
export interface TcpProxy {
  port: number;
  /** Closes the listener and drops every relayed connection. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        for (const sock of [client, upstream]) {
          sockets.add(sock);
          sock.on("close", () => sockets.delete(sock));
          sock.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        server = s;
        const address = s.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  const port = await listen(0);
  const cut = async (): Promise<void> => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  return {
    port,
    cut,
    restore: async () => {
      if (!server) await listen(port);
    },
    close: cut,
  };
}
