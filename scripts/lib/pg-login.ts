import crypto from "node:crypto";
import { promisify } from "node:util";

const pbkdf2 = promisify(crypto.pbkdf2);

/**
 * The login step of a Postgres connection as Neon's proxy runs it: the client (the Workers' driver) is
 * asked for its password in clear (Neon does this over TLS; here the proxy listens on loopback only),
 * and the proxy itself does SCRAM-SHA-256 with Postgres. So the driver never runs SCRAM's 4096 HMAC
 * rounds in the Worker, as on Neon, and connecting costs locally about what it costs there.
 *
 * Anything else the server asks (trust, md5, cleartext) is passed through untouched, and so is
 * everything once the server says AuthenticationOk or sends an error.
 */
export interface LoginSides {
  toServer(bytes: Buffer): void;
  toClient(bytes: Buffer): void;
  /** The login cannot go on (a protocol error): close both sides. */
  fail(reason: string): void;
}

const SSL_REQUEST = 80877103;
const AUTH_OK = 0;
const AUTH_CLEARTEXT = 3;
const AUTH_SASL = 10;
const AUTH_SASL_CONTINUE = 11;
const AUTH_SASL_FINAL = 12;

type Phase = "startup" | "server" | "password" | "sasl" | "hashing" | "pipe";

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

/**
 * The parameters (user, database, application_name, …) of the StartupMessage at the start of what a
 * client sent, after an SSLRequest if it sent one first; "incomplete" until all of it has arrived, null
 * when the bytes are no StartupMessage (a cancel request, another protocol).
 */
export function startupParameters(bytes: Buffer): Record<string, string> | "incomplete" | null {
  const at = bytes.length >= 8 && bytes.readInt32BE(0) === 8 && bytes.readInt32BE(4) === SSL_REQUEST ? 8 : 0;
  if (bytes.length < at + 8) return "incomplete";
  const length = bytes.readInt32BE(at);
  if (length < 8 || length > 10_000 || bytes.readInt32BE(at + 4) >> 16 !== 3) return null;
  if (bytes.length < at + length) return "incomplete";
  const words = bytes.subarray(at + 8, at + length).toString("utf8").split("\0");
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < words.length && words[i]; i += 2) pairs.push([words[i]!, words[i + 1]!]);
  return Object.fromEntries(pairs);
}

const hmac = (key: Buffer, text: string | Buffer) => crypto.createHmac("sha256", key).update(text).digest();

/** The relay for one connection: feed it both directions until `piping`, then copy bytes as they are. */
export class LoginRelay {
  #phase: Phase = "startup";
  #fromClient = Buffer.alloc(0);
  #fromServer = Buffer.alloc(0);
  #password = "";
  #scram: { nonce: string; firstBare: string; serverSignature?: Buffer } | undefined;

  constructor(private readonly sides: LoginSides) {}

  get piping(): boolean {
    return this.#phase === "pipe";
  }

  fromClient(bytes: Buffer): void {
    if (this.piping) return this.sides.toServer(bytes);
    this.#fromClient = Buffer.concat([this.#fromClient, bytes]);
    this.#step();
  }

  fromServer(bytes: Buffer): void {
    if (this.piping) return this.sides.toClient(bytes);
    this.#fromServer = Buffer.concat([this.#fromServer, bytes]);
    this.#step();
  }

  /** From here on both directions are copied as they are, the buffered bytes first. */
  #pipe(): void {
    this.#phase = "pipe";
    const [up, down] = [this.#fromClient, this.#fromServer];
    this.#fromClient = this.#fromServer = Buffer.alloc(0);
    if (down.length) this.sides.toClient(down);
    if (up.length) this.sides.toServer(up);
  }

  #step(): void {
    if (this.#phase === "startup") return this.#startup();
    if (this.#phase === "password") return this.#readPassword();
    if (this.#phase === "server" || this.#phase === "sasl") return this.#server();
  }

  /** The startup message has no type byte: length, then the protocol code (or the SSL request code). */
  #startup(): void {
    const buf = this.#fromClient;
    if (buf.length < 8) return;
    const length = buf.readInt32BE(0);
    if (length < 8 || length > 10_000) return this.sides.fail("bad startup message");
    if (buf.length < length) return;
    const code = buf.readInt32BE(4);
    this.#fromClient = buf.subarray(length);
    if (code === SSL_REQUEST) {
      this.sides.toClient(Buffer.from("N")); // no TLS on loopback; the client goes on in plain text
      return this.#startup();
    }
    this.sides.toServer(buf.subarray(0, length));
    if (code >> 16 !== 3) return this.#pipe(); // a cancel request or an unknown protocol: not ours to handle
    this.#phase = "server";
    this.#server();
  }

  /** Server messages while logging in: type byte, length, body. */
  #server(): void {
    while (!this.piping && this.#fromServer.length >= 5) {
      const type = String.fromCharCode(this.#fromServer[0]!);
      const length = this.#fromServer.readInt32BE(1);
      if (this.#fromServer.length < length + 1) return;
      if (type !== "R") return this.#pipe(); // an error or anything unexpected: the client reads it itself
      const body = this.#fromServer.subarray(5, length + 1);
      const auth = body.readInt32BE(0);
      if (auth === AUTH_OK) return this.#pipe();
      if (this.#phase === "server" && auth === AUTH_SASL && body.includes("SCRAM-SHA-256\0")) {
        this.#fromServer = this.#fromServer.subarray(length + 1);
        this.#phase = "password";
        this.sides.toClient(message("R", int32(AUTH_CLEARTEXT)));
        return this.#readPassword();
      }
      if (this.#phase === "sasl" && (auth === AUTH_SASL_CONTINUE || auth === AUTH_SASL_FINAL)) {
        this.#fromServer = this.#fromServer.subarray(length + 1);
        if (auth === AUTH_SASL_CONTINUE) {
          this.#phase = "hashing"; // the server waits for our answer
          void this.#clientFinal(body.subarray(4).toString("utf8"));
          return;
        }
        const verifier = /(?:^|,)v=([^,]+)/.exec(body.subarray(4).toString("utf8"))?.[1];
        const expected = this.#scram?.serverSignature;
        if (!verifier || !expected || !crypto.timingSafeEqual(Buffer.from(verifier, "base64"), expected)) {
          return this.sides.fail("the server's SCRAM signature does not match");
        }
        continue;
      }
      return this.#pipe(); // trust, md5 or cleartext asked by the server itself: the client answers it
    }
  }

  /** The client's PasswordMessage ('p', the password and a NUL), then SCRAM's first message to the server. */
  #readPassword(): void {
    const buf = this.#fromClient;
    if (buf.length < 5) return;
    const length = buf.readInt32BE(1);
    if (buf.length < length + 1) return;
    if (buf[0] !== "p".charCodeAt(0)) return this.sides.fail("expected the password");
    this.#password = buf.subarray(5, length).toString("utf8");
    this.#fromClient = buf.subarray(length + 1);
    const nonce = crypto.randomBytes(18).toString("base64");
    const firstBare = `n=*,r=${nonce}`;
    this.#scram = { nonce, firstBare };
    const first = Buffer.from(`n,,${firstBare}`);
    const mechanism = Buffer.from("SCRAM-SHA-256\0");
    this.#phase = "sasl";
    this.sides.toServer(message("p", Buffer.concat([mechanism, int32(first.length), first])));
    this.#server();
  }

  /** SCRAM's client-final message (RFC 5802, RFC 7677), the salted password computed off the event loop. */
  async #clientFinal(serverFirst: string): Promise<void> {
    const scram = this.#scram!;
    const attrs = Object.fromEntries(serverFirst.split(",").map((pair) => [pair[0], pair.slice(2)]));
    const [nonce, salt, iterations] = [attrs["r"] ?? "", attrs["s"] ?? "", Number(attrs["i"])];
    if (!nonce.startsWith(scram.nonce) || nonce.length === scram.nonce.length || !salt || !Number.isInteger(iterations) || iterations < 1) {
      return this.sides.fail("bad SCRAM server-first message");
    }
    const salted = await pbkdf2(this.#password.normalize("NFKC"), Buffer.from(salt, "base64"), iterations, 32, "sha256");
    const clientKey = hmac(salted, "Client Key");
    const storedKey = crypto.createHash("sha256").update(clientKey).digest();
    const finalBare = `c=biws,r=${nonce}`;
    const authMessage = `${scram.firstBare},${serverFirst},${finalBare}`;
    const signature = hmac(storedKey, authMessage);
    const proof = Buffer.from(clientKey.map((byte, i) => byte ^ signature[i]!));
    scram.serverSignature = hmac(hmac(salted, "Server Key"), authMessage);
    this.#phase = "sasl";
    this.sides.toServer(message("p", Buffer.from(`${finalBare},p=${proof.toString("base64")}`)));
    this.#server();
  }
}
