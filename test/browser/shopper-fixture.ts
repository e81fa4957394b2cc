/**
 * What the shopper walkthrough needs of the demo store before it starts, made through the admin as the demo
 * Owner would (test/browser/shopper-walkthrough.test.ts): the store open (no password) and the Cotton Kurta
 * photographed; the walkthrough takes the photos it attached off again at its end.
 */
import { DEMO_PASSWORD, DEMO_PEOPLE } from "../../scripts/lib/seed";
import { makePng } from "./png";
import { adminRpcAs, type AdminWorker } from "./support";

export const owner = DEMO_PEOPLE.find((p) => p.store === "demo" && p.role === "owner")!;

export const ownerRpc = (admin: AdminWorker) => adminRpcAs(admin.url, owner.email, DEMO_PASSWORD);

/** Turns the demo store's password off (an earlier run may have stopped with it on). */
export async function openTheStore(admin: AdminWorker): Promise<void> {
  await (await ownerRpc(admin))("store/update", { storefrontPassword: null });
}

/** The Cotton Kurta's photos this run attached (taken off again at the end). */
export const photos = { attached: [] as string[], productId: "" };

/**
 * Makes sure the Cotton Kurta has a photo, and one of size L's own besides it (the seed may have neither):
 * made in Node and attached through the admin's media.attach as a merchant's upload would be.
 */
export async function photographTheKurta(admin: AdminWorker): Promise<void> {
  const rpc = await ownerRpc(admin);
  const { items } = (await rpc("products/list", { query: "cotton-kurta" })) as { items: { id: string; handle: string }[] };
  photos.productId = items.find((p) => p.handle === "cotton-kurta")!.id;
  const product = (await rpc("products/get", { id: photos.productId })) as { variants: { id: string; title: string }[] };
  const large = product.variants.find((v) => v.title === "L")!;
  const { items: images } = (await rpc("media/list", { productId: photos.productId })) as { items: { id: string; variantIds: string[] }[] };
  const attach = async (alt: string, variantIds: string[], seed: number) => {
    const image = { base64: makePng(480, 640, seed).toString("base64") };
    photos.attached.push(((await rpc("media/attach", { productId: photos.productId, alt, image, variantIds })) as { id: string }).id);
  };
  if (images.length === 0) await attach("Cotton Kurta, front", [], 11);
  if (!images.slice(1).some((i) => i.variantIds.includes(large.id))) await attach("Cotton Kurta, L", [large.id], 12 + images.length);
}
