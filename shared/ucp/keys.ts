import { base64Url } from "../core/tokens";

/**
 * A store's UCP signing keys (issue 26 item 2; docs/decisions/0042-ucp-signatures.md): ES256 (ECDSA P-256),
 * the protocol's baseline every verifier supports. The public half is published in the store's profile
 * (`keys[]`, a JWK Set); the private half is kept only sealed (AES-GCM under a key derived from the
 * deployment's root secret for this store and key), never in a profile, a log or an answer.
 */

export interface PublicJwk {
  kid: string;
  kty: "EC";
  crv: "P-256";
  x: string;
  y: string;
  use: "sig";
  alg: "ES256";
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

const ECDSA = { name: "ECDSA", namedCurve: "P-256" } as const;

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

/** RFC 7638: the SHA-256 thumbprint of an EC public key (its required members in lexical order), base64url. */
export async function thumbprint(jwk: { crv: string; kty: string; x: string; y: string }): Promise<string> {
  const canonical = `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`;
  return base64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical))));
}

/** A new key pair: the public JWK (its kid the thumbprint, so a Web Bot Auth verifier finds the same key) and the private JWK. */
export async function generateSigningKey(): Promise<{ publicJwk: PublicJwk; privateJwk: JsonWebKey }> {
  const pair = (await crypto.subtle.generateKey(ECDSA, true, ["sign", "verify"])) as CryptoKeyPair;
  const pub = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  const priv = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const base = { kty: "EC" as const, crv: "P-256" as const, x: pub.x!, y: pub.y! };
  return { publicJwk: { kid: await thumbprint(base), ...base, use: "sig", alg: "ES256" }, privateJwk: { kty: "EC", crv: "P-256", x: priv.x, y: priv.y, d: priv.d } };
}

/** The AES-GCM key that seals one store's key: HKDF-SHA-256 of the root secret, bound to the store and the kid. */
async function sealingKey(rootSecret: string, storeId: string, kid: string): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey("raw", new TextEncoder().encode(rootSecret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new TextEncoder().encode("ucp-signing-key/v1"), info: new TextEncoder().encode(`${storeId}/${kid}`) },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** `v1.<iv>.<ciphertext>` (base64url): the private JWK sealed for this store and kid. */
export async function sealPrivateKey(rootSecret: string, storeId: string, kid: string, privateJwk: JsonWebKey): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await sealingKey(rootSecret, storeId, kid), new TextEncoder().encode(JSON.stringify(privateJwk)));
  return `v1.${base64Url(iv)}.${base64Url(new Uint8Array(sealed))}`;
}

/** The signing key from its sealed form; throws when the root secret, the store or the kid do not match. */
export async function openPrivateKey(rootSecret: string, storeId: string, kid: string, sealed: string): Promise<SigningKey> {
  const [version, iv, body] = sealed.split(".");
  if (version !== "v1" || !iv || !body) throw new Error("Not a sealed UCP signing key");
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64Url(iv) }, await sealingKey(rootSecret, storeId, kid), fromBase64Url(body));
  const jwk = JSON.parse(new TextDecoder().decode(plain)) as JsonWebKey;
  return { kid, privateKey: await crypto.subtle.importKey("jwk", jwk, ECDSA, false, ["sign"]) };
}

/** A verification key from a published JWK: ES256 only (others are unusable here: `algorithm_unsupported`). */
export async function importVerifyKey(jwk: Record<string, unknown>): Promise<CryptoKey | undefined> {
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.x !== "string" || typeof jwk.y !== "string") return undefined;
  if (jwk.alg !== undefined && jwk.alg !== "ES256") return undefined;
  if (jwk.use === "enc") return undefined;
  try {
    return await crypto.subtle.importKey("jwk", { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y }, ECDSA, false, ["verify"]);
  } catch {
    return undefined;
  }
}

export { fromBase64Url };
