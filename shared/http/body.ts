import { AppError } from "../core/errors";
import { readAtMost } from "../core/bounded";

/**
 * The body as text, refusing more than `limit` bytes while reading (a missing or false content-length
 * cannot make the Worker buffer more), 413 naming the limit.
 */
export async function readBoundedText(req: Request, limit: number): Promise<string> {
  const tooLarge = () => new AppError("PAYLOAD_TOO_LARGE", `Request body is larger than ${limit} bytes.`);
  if (Number(req.headers.get("content-length") ?? "0") > limit) throw tooLarge();
  if (!req.body) return "";
  const all = await readAtMost(req.body, limit);
  if (!all) throw tooLarge();
  return new TextDecoder().decode(all);
}
