import { readFile } from "node:fs/promises";
import { createLocalJWKSet, createRemoteJWKSet, importJWK, jwtVerify, type JSONWebKeySet, type JWK, type JWTVerifyGetKey } from "jose";
import { ConfigError, errorMessage } from "../../core/index.js";
import { isPrincipalName } from "./principals.js";

/** Signature algorithms a bearer JWT may use (`none` and HMAC never). */
export const JWT_ALGORITHMS = ["RS256", "ES256", "EdDSA", "Ed25519"];

export interface JwtVerifierOptions {
  /** A JWKS file, or an http(s) URL serving one (cached; refetched on an unknown `kid`, at most every 30 s). */
  jwks: string;
  issuer: string;
  audience: string;
  /** The claim naming the principal (default `sub`). */
  principalClaim?: string;
  /** Told each verified token's principal and claims (e.g. the `agentkit_quota` claim's limits). */
  onVerified?: (principal: string, claims: Readonly<Record<string, unknown>>) => void;
}

/** A verified token's principal, or undefined for anything not valid (bad signature, iss, aud, time, kid, alg). */
export type JwtVerifier = (token: string) => Promise<string | undefined>;

const REMOTE_TIMEOUT_MS = 5_000;
const REMOTE_COOLDOWN_MS = 30_000;
const REMOTE_MAX_AGE_MS = 10 * 60_000;

/** Builds the verifier; a JWKS file that cannot be used throws a `ConfigError` naming the key. */
export async function jwtVerifier(options: JwtVerifierOptions): Promise<JwtVerifier> {
  const keys = isUrl(options.jwks) ? remoteKeys(options.jwks) : await fileKeys(options.jwks);
  const claim = options.principalClaim ?? "sub";
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keys, { issuer: options.issuer, audience: options.audience, algorithms: JWT_ALGORITHMS });
      const principal = payload[claim];
      if (typeof principal !== "string" || !isPrincipalName(principal)) return undefined;
      options.onVerified?.(principal, payload);
      return principal;
    } catch {
      return undefined;
    }
  };
}

/** Looks like a compact JWS (three base64url parts): only those are given to the verifier. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

function isUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

function remoteKeys(url: string): JWTVerifyGetKey {
  if (!URL.canParse(url)) throw new ConfigError(`--jwks ${url}: not a valid URL`);
  return createRemoteJWKSet(new URL(url), { timeoutDuration: REMOTE_TIMEOUT_MS, cooldownDuration: REMOTE_COOLDOWN_MS, cacheMaxAge: REMOTE_MAX_AGE_MS });
}

async function fileKeys(path: string): Promise<JWTVerifyGetKey> {
  let set: unknown;
  try {
    set = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new ConfigError(`--jwks ${path}: ${errorMessage(error)}`);
  }
  const keys = typeof set === "object" && set !== null ? (set as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(keys) || keys.length === 0) throw new ConfigError(`--jwks ${path}: expected a JSON Web Key Set ({"keys": [...]}) with at least one key`);
  for (const [i, key] of keys.entries()) {
    const name = `key ${i}${typeof (key as JWK | null)?.kid === "string" ? ` (kid "${(key as JWK).kid}")` : ""}`;
    if (typeof key !== "object" || key === null) throw new ConfigError(`--jwks ${path}: ${name} is not an object`);
    const jwk = key as JWK;
    if (jwk.kty === "oct") throw new ConfigError(`--jwks ${path}: ${name} is a symmetric (oct) key; only public RSA, EC and OKP keys are accepted`);
    if ("d" in jwk) throw new ConfigError(`--jwks ${path}: ${name} holds a private key; publish only the public part`);
    const alg = jwk.alg ?? (jwk.kty === "RSA" ? "RS256" : jwk.kty === "EC" ? "ES256" : jwk.kty === "OKP" ? "EdDSA" : undefined);
    if (alg === undefined || !JWT_ALGORITHMS.includes(alg)) throw new ConfigError(`--jwks ${path}: ${name} has algorithm ${alg ?? `kty ${String(jwk.kty)}`}; accepted: ${JWT_ALGORITHMS.join(", ")}`);
    try {
      await importJWK(jwk, alg);
    } catch (error) {
      throw new ConfigError(`--jwks ${path}: ${name} cannot be used: ${errorMessage(error)}`);
    }
  }
  return createLocalJWKSet(set as JSONWebKeySet);
}
