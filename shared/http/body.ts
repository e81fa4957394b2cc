import { AppError } from "../core/errors";

/**
 * The body as text, refusing more than `limit` bytes while reading (a missing or false content-length
 * cannot make the Worker buffer more), 413 naming the limit.
 */
export async function readBoundedText(req: Request, limit: number): Promise<string> {
  const tooLarge = () => new AppError("PAYLOAD_TOO_LARGE", `Request body is larger than ${limit} bytes.`);
  if (Number(req.headers.get("content-length") ?? "0") > limit) throw tooLarge();
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}
