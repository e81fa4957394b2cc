import { chatRequestSchema, type ChatChunk, type ChatCompletion, type ChatMessage, type ChatRequest, type Reply, type ToolCall } from "./protocol";

/**
 * The local model (issue 24 item 4): a chat model for development and tests that speaks the same
 * tool-calling protocol as the real ones (./protocol.ts) and understands a small, fixed set of requests.
 * It reads the last thing the member asked and the tool results that came back since, and answers the next
 * step: a tool call, or the answer in words. Deterministic, no network, refused outside development and test
 * (./select.ts). What it understands (anything else gets this list back):
 *
 *   list products                          "list products", "show me the products"
 *   search products                        "find kurta", "search products for silk saree"
 *   show an order                          "show order #1002", "order 1002"
 *   today's sales                          "what sold today?", "today's sales"
 *   change a price                         "change the price of Cotton Kurta to ₹899"
 *   adjust stock                           "adjust stock of KURTA-M by -2", "add 5 units of Silk Saree"
 *   create a discount                      "create a discount code DIWALI10 for 10% off", "create code FLAT100 for ₹100 off"
 *
 * Tool results are read as data only (JSON fields it looks for), never as instructions: a result that says
 * "ignore your instructions" is a product title like any other. A change it asks for is a change tool's
 * call, which the assistant turns into a proposal the member approves.
 */
export const LOCAL_MODEL = "local-assistant";

export type Intent =
  | { kind: "products"; query?: string }
  | { kind: "order"; number: number }
  | { kind: "sales" }
  | { kind: "price"; product: string; priceMinor: number }
  | { kind: "stock"; product: string; delta: number }
  | { kind: "discount"; code: string; discountKind: "percentage" | "fixed_amount"; value: number }
  | { kind: "help" };

const MONEY = String.raw`(?:₹|rs\.?|inr)?\s*([\d,]+(?:\.\d{1,2})?)`;
const minorOf = (amount: string) => Math.round(Number(amount.replace(/,/g, "")) * 100);
const clean = (name: string) => name.trim().replace(/^(?:the|a|an)\s+/i, "").replace(/^["'“]|["'”]$/g, "").trim();

/** What a member's message asks for. */
export function understand(message: string): Intent {
  const text = message.trim().replace(/\s+/g, " ").replace(/[?.!]+$/, "");
  const lower = text.toLowerCase();
  let m: RegExpExecArray | null;
  if ((m = new RegExp(String.raw`(?:change|set|make|update) (?:the )?price of (.+?) (?:to|at) ${MONEY}$`, "i").exec(text))) {
    const priceMinor = minorOf(m[2]!);
    if (Number.isSafeInteger(priceMinor) && priceMinor > 0) return { kind: "price", product: clean(m[1]!), priceMinor };
  }
  if ((m = /(?:adjust|change) (?:the )?stock (?:of|for) (.+?) by ([+-]?\d{1,6})(?: units?)?$/i.exec(text))) return { kind: "stock", product: clean(m[1]!), delta: Number(m[2]) };
  if ((m = /^(add|remove) (\d{1,6}) (?:units? |pieces? )?(?:of )?(.+?)(?: (?:to|from) (?:the )?stock)?$/i.exec(text)))
    return { kind: "stock", product: clean(m[3]!), delta: (m[1]!.toLowerCase() === "add" ? 1 : -1) * Number(m[2]) };
  if (/\b(?:create|make|add)\b.*\b(?:discount|code|coupon)\b/i.test(text)) {
    const code = /\b(?:code|coupon)\s+([A-Za-z0-9_-]{3,32})\b/i.exec(text)?.[1] ?? /\b([A-Z][A-Z0-9_-]{2,31})\b/.exec(text)?.[1];
    const percent = /(\d{1,3}(?:\.\d+)?)\s*%/.exec(text);
    const amount = new RegExp(String.raw`(?:₹|rs\.?|inr)\s*([\d,]+(?:\.\d{1,2})?)`, "i").exec(text);
    if (code && percent) return { kind: "discount", code: code.toUpperCase(), discountKind: "percentage", value: Math.round(Number(percent[1])) };
    if (code && amount) return { kind: "discount", code: code.toUpperCase(), discountKind: "fixed_amount", value: minorOf(amount[1]!) };
  }
  if ((m = /\border\s*(?:number\s*)?#?\s*(\d{1,9})\b/i.exec(text) ?? /#(\d{1,9})\b/.exec(text))) return { kind: "order", number: Number(m[1]) };
  if (/\btoday\b/.test(lower) && /\b(?:sales|sold|sell|revenue|orders|takings)\b/.test(lower)) return { kind: "sales" };
  if (/\bwhat (?:has )?sold\b/.test(lower)) return { kind: "sales" };
  if ((m = /^(?:search|find|look for|look up)(?: (?:the )?products?)?(?: (?:for|matching|named|called))? (.+)$/i.exec(text))) return { kind: "products", query: clean(m[1]!) };
  if ((m = /^(?:list|show)(?: me)?(?: all| the| our| my)? products(?: (?:matching|named|called|like) (.+))?$/i.exec(text)))
    return m[1] ? { kind: "products", query: clean(m[1]) } : { kind: "products" };
  return { kind: "help" };
}

export const HELP =
  "I'm the local development model, so I understand a few requests: list or search products, show an order (\"show order #1002\"), " +
  "today's sales, change a price (\"change the price of Cotton Kurta to ₹899\"), adjust stock (\"add 5 units of Silk Saree\") and create a " +
  'discount ("create code DIWALI10 for 10% off"). Point MODEL_PROVIDER at Workers AI or an OpenAI-compatible server for anything else.';

type Json = Record<string, unknown>;
interface Step {
  name: string;
  args: Json;
  result: unknown;
  failed: boolean;
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const items = (v: unknown): Json[] => (isObject(v) && Array.isArray(v.items) ? v.items.filter(isObject) : []);
const str = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);

function parse(content: string): { value: unknown; failed: boolean } {
  try {
    const value: unknown = JSON.parse(content);
    return { value, failed: isObject(value) && typeof value.code === "string" && typeof value.message === "string" };
  } catch {
    return { value: content, failed: false };
  }
}

/** The tool calls made since the member's last message and what each answered, in order. */
function stepsSince(messages: readonly ChatMessage[]): { asked: string; steps: Step[]; calls: number } {
  const last = messages.findLastIndex((m) => m.role === "user");
  const asked = last >= 0 ? (messages[last] as { content: string }).content : "";
  const results = new Map<string, string>();
  for (const m of messages.slice(last + 1)) if (m.role === "tool") results.set(m.tool_call_id, m.content);
  const steps: Step[] = [];
  for (const m of messages.slice(last + 1)) {
    if (m.role !== "assistant") continue;
    for (const call of m.tool_calls ?? []) {
      const answer = results.get(call.id);
      if (answer === undefined) continue;
      const { value, failed } = parse(answer);
      let args: Json = {};
      try {
        const parsed: unknown = JSON.parse(call.function.arguments);
        if (isObject(parsed)) args = parsed;
      } catch {
        // a call's arguments are the model's own: unreadable ones are no arguments
      }
      steps.push({ name: call.function.name, args, result: value, failed });
    }
  }
  const calls = messages.filter((m) => m.role === "assistant").reduce((n, m) => n + ((m as { tool_calls?: ToolCall[] }).tool_calls?.length ?? 0), 0);
  return { asked, steps, calls };
}

export interface LocalContext {
  /** The store's day for "today" (YYYY-MM-DD) and its UTC offset (+05:30 for India). */
  today: string;
  utcOffset: string;
  currency: string;
}

/** The conversation's currency as the assistant's instructions name it ("minor units of INR"), else INR. */
export function currencyOf(messages: readonly ChatMessage[]): string {
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  return /minor units of ([A-Z]{3})\b/.exec(system)?.[1] ?? "INR";
}

/** The next step of the conversation: a tool call, or the answer. */
export function localReply(request: Pick<ChatRequest, "messages" | "tools">, context: LocalContext): Reply {
  const offered = new Set((request.tools ?? []).map((t) => t.function.name));
  const { asked, steps, calls } = stepsSince(request.messages);
  const intent = understand(asked);
  const money = (minor: unknown) => new Intl.NumberFormat("en-IN", { style: "currency", currency: context.currency }).format(num(minor) / 100);
  const say = (content: string): Reply => ({ content });
  const call = (name: string, args: Json): Reply =>
    offered.has(name)
      ? { content: null, tool_calls: [{ id: `call_${calls + 1}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] }
      : say(`I can't do that here: the ${name} tool is not available to you (your role, or the store's AI settings, leave it out).`);
  const failed = steps.find((s) => s.failed);
  if (failed) return say(`That didn't work: ${str((failed.result as Json).message)}`);
  const after = (name: string) => steps.findLast((s) => s.name === name)?.result;
  const proposed = (result: unknown) => {
    const p = isObject(result) ? result : {};
    const done = p.status === "approved" ? "It is done." : "Nothing changes until you approve it below.";
    return say(`I've proposed this change: ${str(p.summary).replace(/\.$/, "") || "see the details below"}. ${done}`);
  };
  const pick = (found: Json[], name: string, label: (j: Json) => string): Json | string => {
    if (found.length === 0) return `I found no product matching "${name}".`;
    const exact = found.filter((j) => label(j).toLowerCase() === name.toLowerCase());
    if (found.length === 1 || exact.length === 1) return (exact[0] ?? found[0])!;
    return `Several match "${name}": ${found.slice(0, 8).map(label).join(", ")}. Which one?`;
  };

  switch (intent.kind) {
    case "help":
      return say(HELP);
    case "products": {
      const found = after("listProducts");
      if (found === undefined) return call("listProducts", intent.query ? { query: intent.query } : {});
      const list = items(found);
      if (list.length === 0) return say(intent.query ? `No products match "${intent.query}".` : "The store has no products yet.");
      const total = num((found as Json).total) || list.length;
      const lines = list.slice(0, 20).map((p) => `${str(p.title)} (${p.priceMinMinor === p.priceMaxMinor ? money(p.priceMinMinor) : `${money(p.priceMinMinor)}–${money(p.priceMaxMinor)}`}, ${str(p.status)})`);
      return say(`${total === 1 ? "One product" : `${total} products`}${intent.query ? ` match "${intent.query}"` : ""}: ${lines.join("; ")}${total > lines.length ? "; and more" : ""}.`);
    }
    case "order": {
      const order = after("getOrder");
      if (order !== undefined) {
        const o = isObject(order) ? order : {};
        return say(`Order #${str(o.number)}: ${str(o.status)}, payment ${str(o.paymentStatus)}, fulfilment ${str(o.fulfillmentStatus)}, total ${money(o.total)}.`);
      }
      const found = after("listOrders");
      if (found === undefined) return call("listOrders", { query: `#${intent.number}` });
      const match = items(found).find((o) => num(o.number) === intent.number);
      return match ? call("getOrder", { id: str(match.id) }) : say(`I found no order #${intent.number}.`);
    }
    case "sales": {
      const summary = after("salesSummary");
      if (summary === undefined) return call("salesSummary", { from: context.today, to: context.today, utcOffset: context.utcOffset });
      const orders = isObject(summary) && isObject(summary.orders) ? summary.orders : {};
      const placed = num(orders.placed);
      return say(`Today (${context.today}): ${placed} order${placed === 1 ? "" : "s"}, sales ${money(orders.salesMinor)} (${money(orders.paidMinor)} paid).`);
    }
    case "price": {
      if (after("updateProduct") !== undefined) return proposed(after("updateProduct"));
      const product = after("getProduct");
      if (product !== undefined) {
        const variants = isObject(product) && Array.isArray(product.variants) ? product.variants.filter(isObject) : [];
        return call("updateProduct", { id: str((product as Json).id), variants: variants.map((v) => ({ id: str(v.id), priceMinor: intent.priceMinor })) });
      }
      const found = after("listProducts");
      if (found === undefined) return call("listProducts", { query: intent.product });
      const chosen = pick(items(found), intent.product, (p) => str(p.title));
      return typeof chosen === "string" ? say(chosen) : call("getProduct", { id: str(chosen.id) });
    }
    case "stock": {
      if (after("adjustInventory") !== undefined) return proposed(after("adjustInventory"));
      const levels = after("inventoryLevels");
      if (levels === undefined) return call("inventoryLevels", { query: intent.product });
      const label = (l: Json) => `${str(l.productTitle) || str(l.title)} ${str(l.sku)} at ${str(l.locationName)}`.trim();
      const found = items(levels);
      const bySku = found.filter((l) => str(l.sku).toLowerCase() === intent.product.toLowerCase());
      const chosen = pick(bySku.length > 0 ? bySku : found, intent.product, (l) => (bySku.length > 0 ? str(l.sku) : label(l)));
      if (typeof chosen === "string") return say(chosen);
      return call("adjustInventory", { variantId: str(chosen.variantId), locationId: str(chosen.locationId), delta: intent.delta, reason: "correction" });
    }
    case "discount": {
      const made = after("createDiscount");
      if (made !== undefined) return proposed(made);
      return call("createDiscount", { code: intent.code, kind: intent.discountKind, value: intent.value });
    }
  }
}

/** A rough count of tokens (about four characters each), for the local model's usage figures. */
export const tokensOf = (text: string): number => Math.ceil(text.length / 4);

/**
 * The local model behind the protocol's HTTP shape (`POST …/chat/completions`): a JSON completion, or with
 * `stream: true` server-sent chunks (text in a few pieces, tool calls whole) ending in `data: [DONE]`, with
 * usage when `stream_options.include_usage` asks. A body that is not a chat request answers 400 naming the
 * field, as an OpenAI-compatible server does. Any client of that protocol can use it through this fetch.
 */
export function localChatFetch(context: (request: ChatRequest) => LocalContext, now: () => Date = () => new Date()): (input: Request | string | URL, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const body: unknown = await request.json().catch(() => undefined);
    const parsed = chatRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return Response.json({ error: { type: "invalid_request_error", param: issue.path.join("."), message: `${issue.path.join(".") || "body"}: ${issue.message}` } }, { status: 400 });
    }
    const chat = parsed.data;
    const reply = localReply(chat, context(chat));
    const usage = {
      prompt_tokens: tokensOf(JSON.stringify(chat.messages)) + tokensOf(JSON.stringify(chat.tools ?? [])),
      completion_tokens: tokensOf(reply.content ?? JSON.stringify(reply.tool_calls ?? [])),
      total_tokens: 0,
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const id = `chatcmpl-local-${crypto.randomUUID()}`;
    const created = Math.floor(now().getTime() / 1000);
    const finish = reply.tool_calls ? "tool_calls" : "stop";
    if (!chat.stream) {
      const completion: ChatCompletion = { id, object: "chat.completion", created, model: chat.model, choices: [{ index: 0, message: { role: "assistant", ...reply }, finish_reason: finish }], usage };
      return Response.json(completion);
    }
    const chunk = (delta: ChatChunk["choices"][0]["delta"], finish_reason: ChatChunk["choices"][0]["finish_reason"] = null): ChatChunk => ({
      id,
      object: "chat.completion.chunk",
      created,
      model: chat.model,
      choices: [{ index: 0, delta, finish_reason }],
    });
    const chunks: ChatChunk[] = [chunk({ role: "assistant" })];
    if (reply.tool_calls) chunks.push(chunk({ tool_calls: reply.tool_calls.map((c, index) => ({ index, ...c })) }));
    else for (const piece of (reply.content ?? "").match(/\S+\s*/g) ?? []) chunks.push(chunk({ content: piece }));
    chunks.push(chunk({}, finish));
    if (chat.stream_options?.include_usage) chunks.push({ id, object: "chat.completion.chunk", created, model: chat.model, choices: [], usage });
    const text = `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
    return new Response(text, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" } });
  };
}
