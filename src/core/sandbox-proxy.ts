import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { decideDestination, formatNetAllow, type NetAllowEntry, type NetDecisionOptions } from "./sandbox-net.js";

// What the proxy reports: the `network` kind of sandbox.ts's SandboxRefusal, declared here because
// sandbox.ts imports this module (the type check holds the two shapes together where it passes its handler).
type SandboxRefusal = { kind: "network"; host: string; port: number; reason: string };

/**
 * The network of a sandbox with an allow-list: an HTTP proxy (CONNECT for TLS and any TCP,
 * absolute-URI requests for plain HTTP) listening on a Unix socket that is bound into the
 * sandbox, where a small bridge (`bridgedArgv`) serves it on the sandbox's own loopback for
 * `HTTP(S)_PROXY`. The sandbox keeps its own empty network namespace: the proxy is its only
 * way out, and the proxy resolves and connects itself after `decideDestination`. One proxy per
 * sandboxed process, so refusals are reported to the command that made them. Node's own
 * `http` server: no npm proxy lets the caller resolve and check the address before it connects
 * (docs/sandbox.md).
 */

/** Where the proxy's socket appears inside the sandbox, and the loopback port the bridge serves. */
export const sandboxProxySocket = "/run/agentkit/net.sock";
export const sandboxProxyPort = 3128;
const MAX_CONNECTIONS = 64;
const CONNECT_TIMEOUT_MS = 10_000;
const MAX_REFUSALS = 20;

export class SandboxProxy {
  readonly socketPath: string;
  readonly #dir: string;
  readonly #server: Server;
  readonly #allow: readonly NetAllowEntry[];
  readonly #options: NetDecisionOptions;
  readonly #sockets = new Set<Duplex>();
  readonly #refusals: string[] = [];
  readonly #onRefusal: ((refusal: SandboxRefusal) => void) | undefined;
  #refused = 0;

  private constructor(allow: readonly NetAllowEntry[], options: NetDecisionOptions, onRefusal: ((refusal: SandboxRefusal) => void) | undefined) {
    this.#allow = allow;
    this.#options = options;
    this.#onRefusal = onRefusal;
    // A private directory (0700): only this user reaches the socket.
    this.#dir = mkdtempSync(join(tmpdir(), "agentkit-net-"));
    this.socketPath = join(this.#dir, "net.sock");
    this.#server = createServer((req, res) => void this.#forward(req, res));
    this.#server.maxConnections = MAX_CONNECTIONS;
    this.#server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.#tunnel(req, socket, head));
    this.#server.on("connection", (socket: Socket) => this.#track(socket));
    this.#server.on("error", () => this.close());
  }

  /** Listens at once: a Unix socket is bound synchronously, so it exists when this returns. */
  static open(allow: readonly NetAllowEntry[], options: NetDecisionOptions = {}, onRefusal?: (refusal: SandboxRefusal) => void): SandboxProxy {
    const proxy = new SandboxProxy(allow, options, onRefusal);
    proxy.#server.listen(proxy.socketPath);
    return proxy;
  }

  /** `[sandbox: …]` lines naming the destinations refused, for the command's output. */
  notes(): string[] {
    const notes = this.#refusals.map((line) => `[sandbox: network ${line}]`);
    if (this.#refused > this.#refusals.length) notes.push(`[sandbox: network: ${this.#refused - this.#refusals.length} more connections refused]`);
    return notes;
  }

  close(): void {
    this.#server.close();
    for (const socket of this.#sockets) socket.destroy();
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #track(socket: Duplex): void {
    this.#sockets.add(socket);
    socket.on("error", () => socket.destroy());
    socket.once("close", () => this.#sockets.delete(socket));
  }

  /** The destination refused: said in the proxy's answer (what the command prints) and in the notes. */
  #refusal(host: string, port: number, reason: string): string {
    const line = `to ${host}:${port} refused: ${reason}`;
    this.#refused += 1;
    this.#onRefusal?.({ kind: "network", host, port, reason });
    if (this.#refusals.length < MAX_REFUSALS && !this.#refusals.includes(line)) this.#refusals.push(line);
    const allowed = this.#allow.length > 0 ? this.#allow.map(formatNetAllow).join(", ") : "nothing";
    return `agentkit-acp sandbox: connection ${line} (allowed: ${allowed})\n`;
  }

  async #tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    this.#track(client);
    const target = parseAuthority(req.url ?? "");
    if (!target) return void client.end(answer(400, `agentkit-acp sandbox: CONNECT needs HOST:PORT (got "${req.url ?? ""}")\n`));
    const verdict = await decideDestination(this.#allow, target.host, target.port, this.#options);
    if (!verdict.ok) return void client.end(answer(403, this.#refusal(target.host, target.port, verdict.reason)));
    const upstream = connect({ host: verdict.address, port: target.port, timeout: CONNECT_TIMEOUT_MS });
    this.#track(upstream);
    upstream.once("timeout", () => upstream.destroy(new Error("timed out")));
    upstream.once("error", (error) => {
      if (!client.destroyed) client.end(answer(502, `agentkit-acp sandbox: ${target.host}:${target.port}: ${error.message}\n`));
    });
    upstream.once("connect", () => {
      upstream.setTimeout(0);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  }

  async #forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      return void res.writeHead(400, { "content-type": "text/plain" }).end("agentkit-acp sandbox: this is the sandbox's network proxy; send absolute http:// URLs or CONNECT\n");
    }
    if (url.protocol !== "http:") return void res.writeHead(400, { "content-type": "text/plain" }).end(`agentkit-acp sandbox: the proxy forwards http:// URLs; use CONNECT for ${url.protocol}\n`);
    const port = Number(url.port || 80);
    const verdict = await decideDestination(this.#allow, url.hostname, port, this.#options);
    if (!verdict.ok) return void res.writeHead(403, { "content-type": "text/plain" }).end(this.#refusal(url.hostname, port, verdict.reason));
    const headers: OutgoingHttpHeaders = { ...req.headers };
    for (const name of ["proxy-connection", "proxy-authorization", "connection", "keep-alive"]) delete headers[name];
    const upstream = request({ host: verdict.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false, timeout: CONNECT_TIMEOUT_MS }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.once("timeout", () => upstream.destroy(new Error("timed out")));
    upstream.once("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`agentkit-acp sandbox: ${url.host}: ${error.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  }
}

function answer(status: 400 | 403 | 502, body: string): string {
  const text = { 400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway" }[status];
  return `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/]+)):(\d{1,5})$/.exec(authority);
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  return host !== undefined && port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/**
 * The bridge in the sandbox, the cheap one (`perl -e CODE -- PORT SOCKET FILE ARGS…`; perl-base is
 * part of every Debian-like system and starts in ~5 ms, node in ~50 ms): listens on
 * `127.0.0.1:PORT`, double-forks an acceptor (re-parented to the sandbox's init, so the command
 * has no stray child to wait for) that relays each connection to the proxy's Unix socket in a
 * child of its own (64 at once, then it waits for one to end), and execs the command in its own
 * place — its exit status is the command's. The listener exists before the command starts.
 */
export const perlBridgeScript = [
  "use strict;use Socket;my($port,$path,@cmd)=@ARGV;",
  'sub fail{print STDERR "agentkit-acp sandbox: network bridge: $_[0]\\n";exit 125}',
  'my$l;socket($l,PF_INET,SOCK_STREAM,0)&&setsockopt($l,SOL_SOCKET,SO_REUSEADDR,1)&&bind($l,pack_sockaddr_in($port,inet_aton("127.0.0.1")))&&listen($l,64)or fail($!);',
  "sub relay{my($a,$b)=@_;my%to=(fileno($a)=>[$a,$b],fileno($b)=>[$b,$a]);my$rin='';vec($rin,$_,1)=1 for keys%to;my$open=2;",
  "while($open>0){my$n=select(my$r=$rin,undef,undef,undef);next if$n<0&&$!{EINTR};return if$n<0;",
  "for my$fd(keys%to){next unless vec($r,$fd,1);my($f,$t)=@{$to{$fd}};my$got=sysread($f,my$buf,65536);",
  "if(!$got){vec($rin,$fd,1)=0;shutdown($t,1);$open--;next}",
  "for(my$o=0;$o<$got;){my$w=syswrite($t,$buf,$got-$o,$o);return unless$w;$o+=$w}}}}",
  "sub acceptor{open STDIN,'<','/dev/null';open STDOUT,'>','/dev/null';open STDERR,'>','/dev/null';my$live=0;while(1){while($live>0&&waitpid(-1,1)>0){$live--}",
  "if($live>=64){$live-- if waitpid(-1,0)>0;next}accept(my$c,$l)or next;my$k=fork;",
  "if(!defined$k||$k){close$c;$live++ if$k;next}close$l;",
  "my$u;socket($u,PF_UNIX,SOCK_STREAM,0)&&connect($u,pack_sockaddr_un($path))or exit 1;relay($c,$u);exit 0}}",
  'my$p=fork;fail("fork: $!")unless defined$p;if($p==0){my$q=fork;exit 0 if!defined$q||$q;acceptor()}',
  'waitpid($p,0);close$l;exec{$cmd[0]}@cmd;print STDERR "$cmd[0]: $!\\n";exit 127;',
].join("");

/**
 * The bridge in the sandbox where no perl is (`node -e`, CommonJS; ~50 ms of CPU per command):
 * serves the proxy's Unix socket on the sandbox's own loopback (`127.0.0.1:PORT`), then runs the
 * command and exits as it does. argv: PORT SOCKET FILE ARGS…
 */
export const nodeBridgeScript = [
  'const net=require("net"),cp=require("child_process"),os=require("os");',
  "const [port,sock,file,...args]=process.argv.slice(1);",
  "const srv=net.createServer((c)=>{const u=net.connect(sock);const end=()=>{c.destroy();u.destroy()};",
  'c.on("error",end);u.on("error",end);c.on("close",end);u.on("close",end);c.pipe(u);u.pipe(c)});',
  'srv.on("error",(e)=>{process.stderr.write("agentkit-acp sandbox: network bridge: "+e.message+"\\n");process.exit(125)});',
  'srv.listen(Number(port),"127.0.0.1",()=>{const ch=cp.spawn(file,args,{stdio:"inherit"});',
  'ch.on("error",(e)=>{process.stderr.write(file+": "+e.message+"\\n");process.exit(127)});',
  'ch.on("exit",(code,sig)=>process.exit(code!==null?code:128+(os.constants.signals[sig]||0)))});',
].join("");

/** Which bridge: perl's when a perl runs in the sandbox (under /usr), else node's. */
export type SandboxBridge = { kind: "perl"; path: string } | { kind: "node"; path: string };

/** The argv that runs `argv` behind the bridge, serving the proxy socket on the sandbox's loopback. */
export function bridgedArgv(bridge: SandboxBridge, argv: readonly string[]): string[] {
  const tail = [String(sandboxProxyPort), sandboxProxySocket, ...argv];
  return bridge.kind === "perl" ? [bridge.path, "-e", perlBridgeScript, "--", ...tail] : [bridge.path, "-e", nodeBridgeScript, ...tail];
}

/** The environment that points HTTP clients at the bridge; loopback stays the sandbox's own unless named. */
export function proxyEnvironment(allow: readonly NetAllowEntry[]): Record<string, string> {
  const url = `http://127.0.0.1:${sandboxProxyPort}`;
  const env: Record<string, string> = { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NODE_USE_ENV_PROXY: "1" };
  // A command's own local servers (tests) bypass the proxy, unless the host's loopback is named.
  const namesLoopback = allow.some((e) => e.host === "localhost" || /^(127\.|::1$)/.test(e.host));
  const noProxy = namesLoopback ? "" : "localhost,127.0.0.1,::1";
  env.NO_PROXY = noProxy;
  env.no_proxy = noProxy;
  return env;
}
